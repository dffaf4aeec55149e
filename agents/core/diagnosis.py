"""The rules' diagnosis of a failed verdict: the error class's advice and the hints its message
gives. Both policies start from it; the offline policy and a reflector that may not ask the model
(budget spent) stop at it."""

from __future__ import annotations

from typing import Any

from agents.core.state import Attempt, VerdictSummary

ADVICE: dict[str, str] = {
    "syntax_error": "The module does not parse. Fix the syntax at the line the message names; return the whole module.",
    "missing_entry_point": "Define the task's entry point at module level, with exactly the task's name and parameters.",
    "signature_mismatch": "The entry point's parameters must be the task's, in order and by name; extra tunables need defaults.",
    "no_triton_kernel": "Compute inside at least one @triton.jit kernel launched from the entry point.",
    "forbidden_api": "Remove the forbidden API the message names and compute that part inside the Triton kernel.",
    "import_error": "Import only torch, triton, triton.language and the standard math/typing helpers; check the names imported.",
    "parameter_mismatch": "ModelNew must hold exactly Model's parameters and buffers (same names and shapes): the judge copies Model's weights into it. Register them as Model does.",
    "compile_error": "Triton refused to compile: block sizes must be tl.constexpr powers of two, tl.arange bounds constexpr, and operand shapes and dtypes must agree. Read the compiler message for the line.",
    "runtime_error": "The launch failed at run time: check the grid, the argument count and order against the kernel signature, and tensor dtypes/contiguity.",
    "timeout": "The candidate ran past the time limit: check loop bounds and the grid size (an infinite or huge loop).",
    "crash": "The process crashed (illegal memory access?): mask every load and store at the tails and compute offsets in int64 for large tensors.",
    "early_exit": "Never exit the process; return the result.",
    "resource_limit": "The candidate used more memory, processes or disk than the judge allows: allocate only the outputs (and small scratch buffers) on the device, start no processes, write no files.",
    "wrong_output_type": "Return what the reference returns (a tensor, or the same tuple of tensors).",
    "shape_mismatch": "The output shape differs from the reference: allocate the output with the reference's shape.",
    "dtype_mismatch": "The output dtype differs: allocate it like the input and cast before the store (`.to(out_ptr.dtype.element_ty)`).",
    "numerical_mismatch": "Values are off: accumulate in fp32, mask tails with a neutral `other=` value, and check offsets and strides for each program.",
    "nan_inf_mismatch": "NaN/inf where the reference is finite: the computation is numerically unstable; subtract the running max before exp, guard rows of -inf, accumulate in fp32.",
    "input_mutated": "The kernel wrote into an input; write into a freshly allocated output instead.",
    "nondeterministic": "Repeated calls differ: avoid atomics and races; make each output element written by one program in a fixed order.",
    "fallback": "The computation ran in PyTorch operators, not in Triton: move the compute the message lists into the kernel.",
    "impossible_time": "Timed faster than the hardware allows: do not cache or skip work across calls.",
    "harness_error": "The judge itself failed (not the candidate's fault): try the same kernel again.",
}


def diagnose(verdict: VerdictSummary) -> dict[str, str]:
    """{"error_class", "diagnosis", "advice"} for a failed verdict, by rule."""
    error = verdict.error_class
    advice = ADVICE.get(error, "Read the judge's message and fix what it names.")
    message = verdict.message.strip()
    hints = []
    lowered = message.lower()
    if error in ("numerical_mismatch", "nan_inf_mismatch") and "tail" in lowered:
        hints.append(
            "the failing shape has a tail (a size that is not a multiple of the block): check the masks"
        )
    if error in ("numerical_mismatch", "nan_inf_mismatch") and "outlier" in lowered:
        hints.append("it fails on outlier inputs: the arithmetic overflows for large magnitudes")
    if "out of resource" in lowered or "shared memory" in lowered:
        hints.append(
            "the block is too large for the SM's shared memory or registers: use smaller BLOCK sizes"
        )
    diagnosis = f"{error} at stage after {verdict.stage_reached or 'nothing'}: {message[:400]}"
    if hints:
        diagnosis += " (" + "; ".join(hints) + ")"
    return {"error_class": error, "diagnosis": diagnosis, "advice": advice}


def rule_reflection(target: Attempt) -> dict[str, Any]:
    """The rules' diagnosis of a failed attempt (the error class's advice and the judge's hints):
    what every policy starts from, and what stands when the model may not be asked."""
    return {"attempt_id": target.id, "by": "rules", **diagnose(target.verdict)}
