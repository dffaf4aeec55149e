"""Serving importance weights, derived — not invented.

Derivation (run `python -m benchmarks.weights` to print it):
one Llama-3-8B decoder layer (hidden 4096, 32 query / 8 KV heads of 128, MLP 14336, vocab
128256, 32 layers, bf16) served on an H200, in two phases:
- prefill: one 8192-token sequence, causal attention;
- decode: a batch of 32 sequences with 4096 tokens of context each, one new token each.
For every operator of the layer (and the per-model LM head and sampling softmax, divided by the
32 layers) we count FLOPs and minimal bytes and take its roofline time on the H200 datasheet
(989 dense bf16 TFLOP/s, 4.8 TB/s): t = max(FLOPs / peak, bytes / bandwidth). An operator's share
of the phase is its time over the phase's total. Assumption, stated: a serving deployment spends
equal GPU time in prefill and decode, so an operator family's weight is the mean of its two
shares. Those are roofline shares — what the operator costs a kernel that runs at the hardware's
limit — which is the right yardstick for "how much does this operator matter when it is fast".

Each family's weight is split evenly among the serving-suite tasks that implement it (their
bf16 variants, fp16 where a task has no bf16), and S_agg normalises the weights over the suite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.task import Task

PEAK_FLOPS = 989e12  # H200 SXM dense bf16, datasheet
BANDWIDTH = 4.8e12  # H200 HBM3e, datasheet
LAYERS = 32
D, HEADS, KV_HEADS, HEAD_DIM, INTER, VOCAB = 4096, 32, 8, 128, 14336, 128256
E = 2  # bytes per bf16 element


@dataclass(frozen=True)
class OpCost:
    family: str
    flops: float
    bytes: float

    @property
    def seconds(self) -> float:
        return max(self.flops / PEAK_FLOPS, self.bytes / BANDWIDTH)


def _gemm(family: str, m: int, k: int, n: int) -> OpCost:
    return OpCost(family, 2.0 * m * k * n, float(E * (m * k + k * n + m * n)))


def layer_ops(phase: str) -> list[OpCost]:
    """The operators of one decoder layer (plus 1/32 of the per-model head) in a phase."""
    kv = KV_HEADS * HEAD_DIM
    if phase == "prefill":
        n, ctx = 8192, 8192
        attn = OpCost(
            "attention_prefill",
            2.0 * 2 * HEADS * HEAD_DIM * n * ctx / 2,
            float(E * (2 * n * D + 2 * n * kv)),
        )
        head_rows = 1  # only the last position's logits are needed
    elif phase == "decode":
        n, ctx = 32, 4096
        attn = OpCost(
            "attention_decode",
            2.0 * 2 * HEADS * HEAD_DIM * n * ctx,
            float(E * (2 * n * ctx * kv + 2 * n * D)),
        )
        head_rows = n
    else:
        raise ValueError(phase)
    ops = [
        OpCost("rmsnorm", 4.0 * n * D, float(E * (2 * n * D + D))),
        _gemm("gemm", n, D, D + 2 * kv),
        OpCost("rope", 3.0 * n * (D + kv), float(E * 2 * n * (D + kv))),
        attn,
        _gemm("gemm", n, D, D),
        OpCost("add_rmsnorm", 5.0 * n * D, float(E * (4 * n * D + D))),
        _gemm("gemm", n, D, 2 * INTER),
        OpCost("silu_and_mul", 5.0 * n * INTER, float(E * 3 * n * INTER)),
        _gemm("gemm", n, INTER, D),
    ]
    per_model = [
        _gemm("gemm", head_rows, D, VOCAB),
        OpCost("softmax", 5.0 * head_rows * VOCAB, float(E * 2 * head_rows * VOCAB)),
        OpCost("embedding", 0.0, float(E * 2 * n * D + 8 * n)),
    ]
    return ops + [OpCost(o.family, o.flops / LAYERS, o.bytes / LAYERS) for o in per_model]


def family_shares(phase: str) -> dict[str, float]:
    ops = layer_ops(phase)
    total = sum(o.seconds for o in ops)
    shares: dict[str, float] = {}
    for o in ops:
        shares[o.family] = shares.get(o.family, 0.0) + o.seconds / total
    return shares


def family_weights() -> dict[str, float]:
    """Mean of the prefill and decode shares per operator family (sums to 1)."""
    pre, dec = family_shares("prefill"), family_shares("decode")
    fams = sorted(set(pre) | set(dec))
    return {f: 0.5 * pre.get(f, 0.0) + 0.5 * dec.get(f, 0.0) for f in fams}


# Which tasks implement each family. A predicate over the task; first match wins.
FAMILY_TASKS: dict[str, Callable[[Task], bool]] = {
    "gemm": lambda t: (
        t.category == "matmul" and t.name in ("matmul", "linear", "matmul_nt", "linear_nt")
    ),
    "attention_prefill": lambda t: (
        t.category == "attention" and "prefill" in t.name and "varlen" not in t.name
    ),
    "attention_decode": lambda t: (
        t.category == "attention" and "decode" in t.name and "paged" not in t.name
    ),
    "rmsnorm": lambda t: t.name == "rmsnorm",
    "add_rmsnorm": lambda t: t.name == "add_rmsnorm",
    "rope": lambda t: t.category == "fusion" and "rope" in t.name,
    "silu_and_mul": lambda t: t.name == "silu_and_mul",
    "softmax": lambda t: t.name == "softmax",
    "embedding": lambda t: t.name == "embedding",
}
SERVING_DTYPES = ("bf16", "fp16")


def task_weights(tasks: list[Task]) -> dict[str, float]:
    """Importance weight per task id for the serving suite (sums to 1 over the tasks present)."""
    fam = family_weights()
    members: dict[str, list[Task]] = {}
    for family, pred in FAMILY_TASKS.items():
        chosen: dict[str, Task] = {}
        for t in tasks:
            if t.dtype in SERVING_DTYPES and pred(t):
                cur = chosen.get(t.name)
                if cur is None or SERVING_DTYPES.index(t.dtype) < SERVING_DTYPES.index(cur.dtype):
                    chosen[t.name] = t
        if chosen:
            members[family] = list(chosen.values())
    covered = sum(fam[f] for f in members)
    weights: dict[str, float] = {}
    for family, ts in members.items():
        for t in ts:
            weights[t.id] = fam[family] / covered / len(ts)
    return weights


def main() -> None:
    pre, dec, fam = family_shares("prefill"), family_shares("decode"), family_weights()
    print("Llama-3-8B decoder layer on H200 rooflines (shares of phase time)\n")
    print(f"{'family':20s} {'prefill':>9s} {'decode':>9s} {'weight':>9s}")
    for f in sorted(fam, key=lambda k: -fam[k]):
        print(f"{f:20s} {pre.get(f, 0):9.4f} {dec.get(f, 0):9.4f} {fam[f]:9.4f}")


if __name__ == "__main__":
    main()
