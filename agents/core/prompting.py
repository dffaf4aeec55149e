"""Rendering the prompts in prompts/*.j2, and the facts they are rendered from.

Templates are Jinja with `StrictUndefined`: a variable the template names but the caller did
not pass is an error, never an empty string. Each node builds its variables from the helpers
here (the task contract, the device, the history window), so every prompt says the same thing
the same way.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import jinja2

import prompts
from agents.core.state import Attempt

PROMPTS_DIR = Path(prompts.__file__).resolve().parent

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)


def render(template: str, **variables: Any) -> str:
    """Render prompts/<template> with exactly these variables."""
    return _ENV.get_template(template).render(**variables)


def task_contract(task: Any) -> dict[str, Any]:
    """What a candidate must do, as the prompts show it."""
    from benchmarks import ALLOWED_IMPORT_ROOTS

    tol = task.tolerance
    if tol.is_quant:
        tolerance = (
            f"cosine >= {tol.cosine}, relative L1 <= {tol.rel_l1}, RMSE <= {tol.rmse} ({tol.why})"
        )
    else:
        tolerance = f"atol {tol.atol}, rtol {tol.rtol} (|got - want| <= atol + rtol * |want|)"
    return {
        "id": task.id,
        "name": task.name,
        "category": task.category,
        "dtype": task.dtype,
        "description": task.description.strip(),
        "entry_point": task.entry_point,
        "signature": f"{task.entry_point}{task.signature()}",
        "params": list(task.signature().parameters),
        "shapes": [
            {"name": s.name, "dims": s.dims, "phase": s.phase, "weight": s.weight}
            for s in task.shapes
        ],
        "cpu_shapes": [{"name": s.name, "dims": s.dims} for s in task.cpu_shapes],
        "tolerance": tolerance,
        "modes": list(task.modes),
        "forbidden": list(task.forbidden),
        "imports": sorted(ALLOWED_IMPORT_ROOTS),
    }


def _fmt_us(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.2f} us"


def history_rows(attempts: list[Attempt], incumbent_id: int | None) -> list[dict[str, Any]]:
    """One line of facts per visible attempt, oldest first."""
    rows = []
    for a in attempts:
        v = a.verdict
        if v.passed:
            result = "correct"
            if v.geomean_speedup_eager is not None:
                result += f", {v.geomean_speedup_eager:.2f}x eager"
            if v.score is not None:
                result += f", attainment {v.score:.2f}"
            if a.geomean_us is None:
                result += ", speed not measured"
        else:
            result = f"FAILED {v.error_class}: {v.message[:240]}"
        if a.measurement is not None and a.measurement.measured:
            m = a.measurement
            result += f"; re-measured gain {m.gain:+.1%} vs noise {m.noise:.1%}" + (
                " (scripted)" if m.scripted else ""
            )
        if a.accepted is not None and a.parent_id is not None:
            result += "; accepted" if a.accepted else "; rejected"
        rows.append(
            {
                "id": a.id,
                "parent": a.parent_id if a.parent_id is not None else "-",
                "how": f"{a.node}/{a.mode}",
                "change": a.change or "-",
                "predicted": "-" if a.predicted_gain is None else f"{a.predicted_gain:+.0%}",
                "result": result,
                "incumbent": a.id == incumbent_id,
            }
        )
    return rows


def device_info(device: str, task: Any) -> dict[str, Any]:
    """Device name and the ceilings the roofline uses, or "not measured" without a GPU."""
    from profiling import device_fingerprint

    fp = device_fingerprint(device)
    if device != "cuda":
        return {
            "device": "cpu",
            "name": "no GPU: the Triton CPU interpreter on small shapes",
            "peaks": "not measured (no GPU): correctness only, no timing",
        }
    from benchmarks import peak_flops_for
    from profiling import get_peaks

    peaks = get_peaks("cuda")
    bandwidth, bw_source = peaks.bandwidth()
    flops, _, flops_source = peak_flops_for(task, peaks)
    parts = []
    if bandwidth:
        parts.append(f"DRAM bandwidth {bandwidth / 1e12:.2f} TB/s ({bw_source})")
    if flops:
        parts.append(f"compute {flops / 1e12:.1f} TFLOP/s ({flops_source})")
    name = fp.get("gpu_name") or "CUDA GPU"
    sm = fp.get("sm_count")
    return {
        "device": "cuda",
        "name": f"{name}" + (f", {sm} SMs" if sm else ""),
        "peaks": "; ".join(parts) if parts else "not measured",
    }


def format_gain(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "none stated"
    return f"{value:+.1%}"
