"""The code generator's scans (cumsum, cumprod) and gathers along the row: shipped tasks and
references written here pass the CPU judge, long rows take the looped kernel (a scan carries
the tiles before it), and what these translations do not cover is refused by name.

fp32 and fp16 only: the interpreter computes bf16 arithmetic wrongly.
"""

import pytest

from agents.offline.codegen.translate import NotSupported, generate
from agents.offline.policy import set_tunables, tunable_values
from benchmarks.loading import get_task
from tests.test_codegen import _judge, _probe

# a row longer than 16 columns walks the looped kernel (CPU shapes have 128 and 1000 columns)
LOOPED = {"MAX_BLOCK_N": 16}


def _narrow(source: str, entry_point: str) -> str:
    """The kernel forced onto 16-column tiles: the looped kernel of a row with reductions or
    scans, or 16-column programs of a row whose columns are independent."""
    knob = "BLOCK_C" if "BLOCK_C" in tunable_values(source, entry_point) else "MAX_BLOCK_N"
    return set_tunables(source, entry_point, {knob: 16})


@pytest.mark.parametrize(
    "task_id", ["cumsum_fp32", "cumsum_fp16", "cumprod_fp32", "cumprod_fp16", "gather_lastdim_fp16"]
)
def test_scan_and_gather_tasks_pass_the_judge(task_id, tmp_path):
    task = get_task(task_id)
    gen = generate(task)
    assert gen.structure == "row"
    _judge(task, gen.source, tmp_path)


@pytest.mark.parametrize("task_id", ["cumsum_fp32", "cumprod_fp16"])
def test_a_long_row_scan_carries_the_tiles_before_it(task_id, tmp_path):
    task = get_task(task_id)
    source = set_tunables(generate(task).source, task.entry_point, LOOPED)
    assert "carry_" in source
    _judge(task, source, tmp_path)


def test_a_scan_after_a_row_reduction_in_the_looped_kernel(tmp_path):
    """The reduction's pass runs first; the store pass scans with its result and a carry."""
    task = _probe(tmp_path, "return torch.cumsum(x - x.amax(dim=-1, keepdim=True), dim=-1) * 0.5")
    source = generate(task).source
    _judge(task, source, tmp_path)
    _judge(task, set_tunables(source, task.entry_point, LOOPED), tmp_path)


def test_an_exclusive_scan_written_from_an_inclusive_one(tmp_path):
    task = _probe(
        tmp_path,
        "return (torch.cumsum(x.float(), dim=-1) - x.float()).to(x.dtype)",
        dtype="fp16",
    )
    _judge(task, generate(task).source, tmp_path)


def test_a_full_size_index_gathers_in_every_tile(tmp_path):
    """An index as large as the row (a permutation within rows, with repeats) in 16-column
    programs: each tile loads its indices and reads anywhere in its row."""
    task = _probe(
        tmp_path,
        "return torch.gather(x, -1, i) * 2.0 + x",
        params="x, i",
        inputs="(x, randint((M, N), 0, N, gen))",
    )
    source = generate(task).source
    _judge(task, source, tmp_path)
    _judge(task, _narrow(source, task.entry_point), tmp_path)


def test_one_index_per_row_reads_one_element_of_the_row(tmp_path):
    """A per-row loss term (log-sum-exp minus the target's logit): the gather of [M, 1] reads
    through the fp32 cast of the logits."""
    task = _probe(
        tmp_path,
        """
        xf = x.float()
        m = xf.amax(dim=-1, keepdim=True)
        lse = torch.log(torch.exp(xf - m).sum(dim=-1)) + m.squeeze(-1)
        return lse - xf.gather(1, t[:, None]).squeeze(1)
        """,
        params="x, t",
        inputs="(x, randint((M,), 0, N, gen))",
        dtype="fp16",
    )
    source = generate(task).source
    _judge(task, source, tmp_path)
    _judge(task, set_tunables(source, task.entry_point, LOOPED), tmp_path)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("return torch.cumsum(x, dim=0)", "only scans along the last dim"),
        ("return torch.cumsum(x, dim=-1).sum(dim=-1)", "reduces a scan's result"),
        ("return torch.logcumsumexp(x, dim=-1)", "aten.logcumsumexp"),
        ("return torch.cumsum(x, dim=-1).sum()", "scans and gathers run in the row structure"),
    ],
)
def test_scans_outside_the_row_are_refused(body, why, tmp_path):
    with pytest.raises(NotSupported, match=why):
        generate(_probe(tmp_path, body))


def test_a_gather_along_another_dim_or_from_a_computed_value_is_refused(tmp_path):
    along = _probe(
        tmp_path,
        "return torch.gather(x, 0, i)",
        params="x, i",
        inputs="(x, randint((M, N), 0, M, gen))",
    )
    with pytest.raises(NotSupported, match="only gathers along the last dim"):
        generate(along)
    computed = _probe(
        tmp_path,
        "return torch.gather(x * 2.0, -1, i)",
        params="x, i",
        inputs="(x, randint((M, N), 0, N, gen))",
    )
    with pytest.raises(NotSupported, match="only inputs"):
        generate(computed)


@pytest.mark.parametrize("task_id", ["embedding_fp32", "embedding_fp16"])
def test_a_row_lookup_copies_the_chosen_rows(task_id, tmp_path):
    """table[ids]: each output row a copy of the table row its index names (bit-exact), the
    table's rows unrelated to the output's; in one tile and in 16-column programs."""
    task = get_task(task_id)
    source = generate(task).source
    assert ".to(tl.int64) * table_row_stride" in source
    _judge(task, source, tmp_path)
    _judge(task, _narrow(source, task.entry_point), tmp_path)


def test_lookups_by_a_2d_index_through_embedding_and_index_select(tmp_path):
    by_2d = _probe(
        tmp_path,
        "return torch.nn.functional.embedding(i, x) * 0.5 + 1.0",
        params="x, i",
        inputs="(x, randint((2, 9), 0, M, gen))",
    )
    _judge(by_2d, generate(by_2d).source, tmp_path)
    selected = _probe(
        tmp_path,
        "return torch.index_select(x, 0, i).float().relu()",
        params="x, i",
        inputs="(x, randint((11,), 0, M, gen).to(torch.int32))",
        dtype="fp16",
    )
    _judge(selected, generate(selected).source, tmp_path)


def test_a_lookup_in_a_computed_table_or_by_two_indices_is_refused(tmp_path):
    computed = _probe(
        tmp_path, "return (x * 2.0)[i]", params="x, i", inputs="(x, randint((5,), 0, M, gen))"
    )
    with pytest.raises(NotSupported, match=r"input arg0 has shape \(4, 128\) in a problem"):
        generate(computed)
    two = _probe(
        tmp_path,
        "return x[i, i]",
        params="x, i",
        inputs="(x, randint((5,), 0, min(M, N), gen))",
    )
    with pytest.raises(NotSupported, match="indexes 2 dims"):
        generate(two)
