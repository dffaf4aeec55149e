"""How a trial's outputs travel from the candidate's process to the judge.

Two files per trial, written by the worker and read (then deleted) by the judge:

    trial_<n>.bin    the raw bytes of every output tensor, each padded to 64 bytes
    trial_<n>.json   what they are: {"out": spec, "repeat": spec | null, "mutated": [...],
                                     "inputs": spec | null, "repeat_inputs": spec | null}
                     spec = {"t": "tensor", "dtype", "shape", "offset", "nbytes"}
                          | {"t": "list", "items": [spec, ...]}
                          | {"t": "value", "v": number | bool | null}
                          | {"t": "opaque", "type": name}   (a subclass or other object)
                          | {"t": "digest", "dtype", "shape", "d": "size:key:sums"}   (see below)

`inputs` are the call's arguments as they were after the call (and `repeat_inputs` those of the
repeat call): the judge compares them bit for bit with the inputs it regenerated from the seed,
so whether the candidate changed its inputs is decided in the judge; `mutated` is the worker's own
finding, kept as an explanation only.

Inputs after a call, and a repeat call's outputs where they are the first call's bytes, travel as
digests: the judge only asks whether they equal a tensor it holds (the inputs it regenerated, the
outputs it was shipped), and shipping them whole cost most of a correctness stage (on the H200,
2026-12-03: 5.1 s of trials for a 235 MB silu, four tensors of that size per trial, about 1 GB/s).
A digest is the tensor's byte count, a key, and two sums, mod 2**64, over its bytes read as 64-bit
words: each word is combined with a stream drawn from its position and the key, and put through a
mixing function (splitmix64's finalizer) before it is added. The key is random, drawn by the writer
when it ships a trial, after the candidate's call has returned: the call cannot know the stream.
Until 2026-12-08 the sums were linear with fixed public weights: a kernel rewrote its input by
three word deltas whose sums cancel, and the judge saw the input unchanged
(tests/hostile/input_mutated_digest_collision.py); any linear sum mod 2**64 also misses the top
bit flipped in two words, whatever its weights. With the mixing, a change made before the key is
drawn leaves both sums the same only by chance (about 2**-128). It is no more to be trusted
than the bytes were: both are written by the candidate's process, through this module's
protected writer, and either could be forged by code that beat that protection. A repeat call
whose bytes differ from the first call's is shipped whole, so the judge can tell rounding from
a wrong answer.

Plain JSON and raw bytes, never pickle: the worker runs untrusted code, so nothing it writes may
execute anything here. The reader checks every field (dtype from a fixed list, shape, byte
counts against the file) and rejects anything else with `TransportError`. Raw bytes instead of
`torch.save` because the outputs can be hundreds of MB per trial (an 8192 x 14336 activation),
and zip serialisation of that cost more than the candidate's call.

This module imports only torch and the standard library: the worker imports it on the GPU
machine, which has none of our other dependencies.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import torch

_ALIGN = 64
_MAX_DEPTH = 8
_MAX_ITEMS = 4096

DTYPES: dict[str, torch.dtype] = {
    name: dtype
    for name, dtype in {
        "float64": torch.float64,
        "float32": torch.float32,
        "float16": torch.float16,
        "bfloat16": torch.bfloat16,
        "float8_e4m3fn": getattr(torch, "float8_e4m3fn", None),
        "float8_e5m2": getattr(torch, "float8_e5m2", None),
        "int64": torch.int64,
        "int32": torch.int32,
        "int16": torch.int16,
        "int8": torch.int8,
        "uint8": torch.uint8,
        "bool": torch.bool,
    }.items()
    if dtype is not None
}
_NAMES = {dtype: name for name, dtype in DTYPES.items()}


class TransportError(ValueError):
    """A trial file that is missing, truncated or not in the format above."""


class Foreign:
    """What a call returned that is not a tensor, a tuple or list of them, None or a number:
    only its type's name is kept (the worker ships it as an opaque record)."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name


_TYPE_NAME = type.__dict__["__name__"].__get__  # a type's own name, no metaclass consulted
_MAX_NESTING = 8


def plain(value: Any, depth: int = 0) -> Any:
    """`value` rebuilt without running any code of its own: a tuple or list (a subclass read
    through the base type's own iterator, so a namedtuple stays a tuple) of plain values, a
    tensor (exactly `torch.Tensor`), None, a bool, int or float; anything else (a tensor
    subclass, a candidate's object) becomes `Foreign`. The worker calls it inside the call's
    probe, so a list subclass's `__iter__`, or an object's `__class__` property, which would
    otherwise run in the worker's own code after the call and rewrite an output where nothing
    watches (tests/hostile/calls_list_subclass_numpy.py passed past the static check before),
    never runs. A tensor's instance attributes are dropped (`bare`)."""
    kind = type(value)
    for base in (tuple, list):
        if issubclass(kind, base) and depth < _MAX_NESTING:
            return base(plain(v, depth + 1) for v in base.__iter__(value))
    if kind is torch.Tensor:
        return bare(value)
    if value is None or kind in (bool, int, float):
        return value
    return Foreign(_TYPE_NAME(kind))


def bare(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` (exactly a `torch.Tensor`) with its instance attributes dropped: an attribute
    set on it shadows the method of that name, so a `detach` the candidate set on an output or
    an input ran its code when the worker's writer called `detach()` after the call
    (tests/hostile/calls_instance_method_numpy.py passed past the static check before)."""
    attributes = object.__getattribute__(tensor, "__dict__")
    if attributes:
        dict.clear(attributes)
    return tensor


def write_trial(
    folder: Path,
    stem: str,
    out: Any,
    repeat: Any,
    mutated: list[int],
    inputs: Any = None,
    repeat_inputs: Any = None,
) -> str:
    """Write `<stem>.bin` then `<stem>.json` (atomically, last); returns the JSON file's name.
    `inputs` / `repeat_inputs`: the call's arguments after the call (a list), or None."""
    tensors: list[torch.Tensor] = []
    offset = 0
    key = new_key()  # drawn now, after the call: the call could not know it

    def encode(value: Any, depth: int = 0, hashed: bool = False) -> dict[str, Any]:
        nonlocal offset
        if type(value) in (tuple, list) and depth < _MAX_DEPTH and len(value) <= _MAX_ITEMS:
            return {"t": "list", "items": [encode(v, depth + 1, hashed) for v in value]}
        if type(value) is torch.Tensor and value.dtype in _NAMES and hashed:
            return {
                "t": "digest",
                "dtype": _NAMES[value.dtype],
                "shape": list(value.shape),
                "d": digest(value, key),
            }
        if type(value) is torch.Tensor and value.dtype in _NAMES:
            nbytes = value.numel() * value.element_size()
            spec = {
                "t": "tensor",
                "dtype": _NAMES[value.dtype],
                "shape": list(value.shape),
                "offset": offset,
                "nbytes": nbytes,
            }
            if nbytes:
                tensors.append(value)
                offset += nbytes + (-nbytes % _ALIGN)
            return spec
        if value is None or isinstance(value, bool | int | float):
            return {"t": "value", "v": value}
        if type(value) is torch.Tensor:
            kind = f"tensor of {value.dtype}"
        else:  # the call's `Opaque` record (fallback.plain), or any other object by its type
            kind = value.type_name if type(value) is Foreign else _TYPE_NAME(type(value))
        return {"t": "opaque", "type": str(kind)}

    header = {
        "out": encode(out),
        "repeat": None if repeat is None else encode(repeat, hashed=_same_bytes(repeat, out)),
        "mutated": list(mutated),
        "inputs": None if inputs is None else encode(list(inputs), hashed=True),
        "repeat_inputs": None
        if repeat_inputs is None
        else encode(list(repeat_inputs), hashed=True),
    }
    # one slice of one tensor on the host at a time: a paged KV cache shipped as an input after
    # the call, twice (call and repeat), held whole on the host with the outputs took an honest
    # worker past the watchdog's 32 GiB on the H200 (attn_paged_decode_fp32, 2026-12-03)
    with open(folder / f"{stem}.bin", "wb") as f:
        for tensor in tensors:
            _write_tensor(f, tensor)
    header["size"] = offset
    tmp = folder / f"{stem}.json.tmp"
    tmp.write_text(json.dumps(header))
    tmp.replace(folder / f"{stem}.json")
    return f"{stem}.json"


# what the writer calls on tensors and in torch: the worker protects them (a candidate that
# patches one could forge what is shipped; benchmarks/harness/worker.py)
TENSOR_METHODS = (
    "detach", "contiguous", "reshape", "view", "to", "numpy", "copy_", "sum", "numel",
    "element_size", "storage_offset", "is_cuda", "dtype", "shape", "device", "__getitem__",
    "__setitem__", "__mul__", "__add__", "__ior__", "__len__", "__int__", "__index__",
    "__or__", "__xor__", "__and__", "__rshift__",
)  # fmt: skip
TORCH_FUNCTIONS = ("equal", "arange", "zeros", "empty")

_SLICE_BYTES = 256 * 2**20  # the most of one tensor copied to the host at once
_DIGEST_WORDS = 2**25  # 64-bit words hashed at once (256 MiB of the tensor, 512 MiB scratch)
_MASK = 2**64 - 1
# splitmix64's constants as signed 64-bit integers (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9,
# 0x94D049BB133111EB): the position's weight is splitmix64 of (position * golden + key)
_GOLDEN = -7046029254386353131
_MIX = (-4658895280553007687, -7723592293110705685)
_urandom = os.urandom  # taken at import, before any candidate runs
_pinned: dict[str, torch.Tensor] = {}  # one page-locked staging buffer, made on first use


def _words(tensor: torch.Tensor) -> torch.Tensor:
    """The tensor's raw bytes (row-major) as 64-bit words, zero-padded to a whole word."""
    raw = tensor.detach().contiguous().reshape(-1).view(torch.uint8)
    if raw.numel() % 8 or raw.storage_offset() % 8:
        padded = torch.zeros(-(-raw.numel() // 8) * 8, dtype=torch.uint8, device=raw.device)
        padded[: raw.numel()] = raw
        raw = padded
    return raw.view(torch.int64)


def new_key() -> int:
    """A digest key nobody can guess (63 random bits)."""
    return int.from_bytes(_urandom(8), "little") & (2**63 - 1)


def _low(bits: int) -> int:
    return (1 << bits) - 1


def _mix(z: torch.Tensor) -> torch.Tensor:
    """splitmix64's finalizer on int64 words (wrapping products; logical shifts: arithmetic shifts
    of int64, masked): every input bit moves about half the output bits."""
    z = (z ^ ((z >> 30) & _low(34))) * _MIX[0]
    z = (z ^ ((z >> 27) & _low(37))) * _MIX[1]
    return z ^ ((z >> 31) & _low(33))


def digest(tensor: torch.Tensor, key: int) -> str:
    """The digest of a tensor's bytes under `key` (module docstring): computed on the tensor's
    device, in slices of `_DIGEST_WORDS`, the same value on any device."""
    words = _words(tensor)
    first = second = 0
    for start in range(0, words.numel(), _DIGEST_WORDS):
        part = words[start : start + _DIGEST_WORDS]
        index = torch.arange(start, start + part.numel(), dtype=torch.int64, device=part.device)
        pad = _mix(index * _GOLDEN + key)  # the position's key stream
        first += int(_mix(part ^ pad).sum())
        second += int((_mix(part + pad) * (pad | 1)).sum())
    nbytes = tensor.numel() * tensor.element_size()
    return f"{nbytes:x}:{key:016x}:{first & _MASK:016x}{second & _MASK:016x}"


def _same_bytes(a: Any, b: Any) -> bool:
    """`a` and `b` are the same tensors (or sequences of them) byte for byte."""
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same_bytes(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not torch.Tensor or type(b) is not torch.Tensor:
        return False
    if a.dtype != b.dtype or a.shape != b.shape or a.dtype not in _NAMES:
        return False
    return bool(torch.equal(_words(a), _words(b.to(a.device))))


def _staging(nbytes: int) -> torch.Tensor | None:
    """A page-locked host buffer of at least `nbytes` (at most `_SLICE_BYTES`), kept for the next
    trial; None where page-locked memory cannot be had (the copy then goes through pageable
    memory, at a third of the speed or less)."""
    buf = _pinned.get("buf")
    if buf is None or buf.numel() < nbytes:
        try:
            buf = torch.empty(max(nbytes, 16 * 2**20), dtype=torch.uint8, pin_memory=True)
        except Exception:  # noqa: BLE001 - no page-locked memory here: the pageable copy serves
            return None
        _pinned["buf"] = buf
    return buf


def _write_tensor(f: Any, tensor: torch.Tensor) -> None:
    """The tensor's raw bytes (row-major), then zeros up to the next `_ALIGN`, copied to the host
    in slices of at most `_SLICE_BYTES` (on a GPU through one reused page-locked buffer)."""
    flat = tensor.detach().contiguous().reshape(-1)
    step = max(1, _SLICE_BYTES // max(1, flat.element_size()))
    for start in range(0, flat.numel(), step):
        part = flat[start : start + step].view(torch.uint8)
        stage = _staging(part.numel()) if part.is_cuda else None
        if stage is None:
            f.write(part.to("cpu").numpy().data)
            continue
        host = stage[: part.numel()]
        host.copy_(part)  # synchronous: the bytes are on the host when it returns
        f.write(host.numpy().data)
    pad = -(flat.numel() * flat.element_size()) % _ALIGN
    if pad:
        f.write(bytes(pad))


class Digest:
    """A tensor shipped as its digest: `matches(t)` says whether `t` has its dtype, shape and
    bytes."""

    def __init__(self, dtype: torch.dtype, shape: list[int], value: str) -> None:
        self.dtype, self.shape, self.value = dtype, shape, value

    def matches(self, tensor: object) -> bool:
        return (
            type(tensor) is torch.Tensor
            and tensor.dtype == self.dtype
            and list(tensor.shape) == self.shape
            and digest(tensor, self.key) == self.value
        )

    @property
    def key(self) -> int:
        return int(self.value.split(":")[1], 16)

    def __repr__(self) -> str:
        return f"<digest of a {_NAMES[self.dtype]} tensor of shape {self.shape}>"


def _dtype_and_shape(spec: dict, name: str) -> tuple[torch.dtype, list[int]]:
    """A tensor record's dtype (one the judge accepts) and shape (at most 16 dims, none
    negative), or TransportError."""
    dtype = DTYPES.get(spec.get("dtype"))  # type: ignore[arg-type]
    shape = spec.get("shape")
    if dtype is None:
        raise TransportError(f"{name}: dtype {spec.get('dtype')!r} is not one the judge accepts")
    if (
        not isinstance(shape, list)
        or not all(isinstance(d, int) and d >= 0 for d in shape)
        or len(shape) > 16
    ):
        raise TransportError(f"{name}: malformed shape {shape!r}")
    return dtype, shape


def _digest_record(spec: dict, name: str) -> Digest:
    dtype, shape = _dtype_and_shape(spec, name)
    value = spec.get("d")
    parts = value.split(":") if isinstance(value, str) and len(value) <= 64 else []
    if len(parts) != 3 or not all(p and all(c in "0123456789abcdef" for c in p) for p in parts):
        raise TransportError(f"{name}: malformed digest")
    if len(parts[1]) > 16 or int(parts[1], 16) >= 2**63:
        raise TransportError(f"{name}: malformed digest key")
    return Digest(dtype, shape, value)


class Opaque:
    """Stands in for an output the worker could not ship (a tensor subclass, an object): it
    fails the judge's type check, which names `kind`."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind}>"


def read_trial(path: Path, device: str) -> dict[str, Any]:
    """The trial written by `write_trial`, tensors moved to `device`; deletes both files.

    Returns {"out", "repeat", "mutated", "inputs", "repeat_inputs"}; a tuple/list output comes
    back as a tuple, and a one-element list as its element (as the reference's outputs are
    compared); inputs come back as a list, one entry per argument (None when not shipped)."""
    bin_path = path.with_suffix(".bin")
    try:
        try:
            header = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise TransportError(
                f"{path.name}: unreadable header ({type(exc).__name__}: {exc})"
            ) from exc
        if not isinstance(header, dict) or not isinstance(header.get("size"), int):
            raise TransportError(f"{path.name}: header is not a trial record")
        size = bin_path.stat().st_size if bin_path.exists() else -1
        if size != header["size"]:
            raise TransportError(
                f"{bin_path.name}: {size} bytes on disk, header says {header['size']}"
            )
        raw = (
            torch.from_file(str(bin_path), shared=False, size=size, dtype=torch.uint8)
            if size > 0
            else torch.empty(0, dtype=torch.uint8)
        )

        def decode(spec: Any, depth: int = 0) -> Any:
            if not isinstance(spec, dict) or depth > _MAX_DEPTH:
                raise TransportError(f"{path.name}: malformed output record")
            kind = spec.get("t")
            if kind == "list":
                items = spec.get("items")
                if not isinstance(items, list) or len(items) > _MAX_ITEMS:
                    raise TransportError(f"{path.name}: malformed list record")
                values = [decode(s, depth + 1) for s in items]
                return values[0] if len(values) == 1 else tuple(values)
            if kind == "value":
                v = spec.get("v")
                if not (v is None or isinstance(v, bool | int | float)):
                    raise TransportError(f"{path.name}: a value record holds {type(v).__name__}")
                return v
            if kind == "opaque":
                return Opaque(str(spec.get("type"))[:100])
            if kind == "digest":
                return _digest_record(spec, path.name)
            if kind != "tensor":
                raise TransportError(f"{path.name}: unknown record kind {kind!r}")
            return _tensor(spec, raw, size, device, path.name)

        out = decode(header.get("out"))
        repeat = None if header.get("repeat") is None else decode(header["repeat"])
        mutated = header.get("mutated", [])
        if not isinstance(mutated, list) or not all(isinstance(i, int) for i in mutated):
            raise TransportError(f"{path.name}: malformed list of mutated inputs")
        shipped = {}
        for key in ("inputs", "repeat_inputs"):
            spec = header.get(key)
            if spec is None:
                shipped[key] = None
            elif isinstance(spec, dict) and spec.get("t") == "list":
                items = spec.get("items")
                if not isinstance(items, list) or len(items) > _MAX_ITEMS:
                    raise TransportError(f"{path.name}: malformed {key} record")
                shipped[key] = [decode(s, 1) for s in items]
            else:
                raise TransportError(f"{path.name}: {key} is not a list record")
        return {"out": out, "repeat": repeat, "mutated": mutated, **shipped}
    finally:
        for p in (path, bin_path):
            try:
                os.unlink(p)
            except OSError:
                pass


def _tensor(spec: dict, raw: torch.Tensor, size: int, device: str, name: str) -> torch.Tensor:
    dtype, shape = _dtype_and_shape(spec, name)
    offset, nbytes = spec.get("offset"), spec.get("nbytes")
    if not isinstance(offset, int) or not isinstance(nbytes, int) or offset < 0 or offset % _ALIGN:
        raise TransportError(f"{name}: malformed offset/size")
    itemsize = torch.empty(0, dtype=dtype).element_size()
    if nbytes != math.prod(shape) * itemsize or offset + nbytes > size:
        raise TransportError(
            f"{name}: a {spec.get('dtype')} tensor of shape {shape} does not fit its {nbytes} bytes at offset {offset}"
        )
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype, device=device)
    return raw[offset : offset + nbytes].view(dtype).reshape(shape).to(device)
