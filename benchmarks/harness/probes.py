"""What the dispatch recorder cannot see: in-process probes around every candidate call.

The recorder (`benchmarks.harness.fallback.AtenRecorder`) is a `TorchDispatchMode`: it sees the
aten ops dispatched on the calling thread while the Python dispatch key is on. A candidate can
compute without dispatching anything it sees:

- **switch the recorder off** (`torch._C._DisableTorchDispatch()`, popping the mode stack,
  excluding the Python key): the switches are wrapped here and count when called during a call,
  and after the call the recorder must still be the current mode with the Python key on;
- **work on another thread** (modes are per thread): `threading.Thread.start` and
  `_thread.start_new_thread` are wrapped and count, Python threads still alive after the call
  are listed, threads started while the candidate was imported fail every call they live
  beside (`importing`), and new native threads (`/proc/self/task`) are counted as an
  explanatory number (PyTorch's own thread pools start lazily, so those alone fail nothing);
- **compute in Python over scalar reads** (`x[i, j].item()`, `float(t)`, iteration, `tolist`,
  `repr`, then `math.exp` and `torch.tensor(list)`): tensor-to-Python reads and tensors built from
  Python data are counted in elements;
- **read or write memory by address** (`ctypes`: `from_address`, `cast`, `memmove`, `string_at`
  over a tensor's `data_ptr()`, then compute in Python on what it read): an audit hook
  (`sys.addaudithook`, which cannot be removed once added) refuses ctypes' raw-memory events
  during a call or the candidate's import (`NativeAccessRefused`) and records them;
- **run code of its own after the call returns** and before the worker ships the outputs
  (`shipping`), where no probe is active, and rewrite an output there: a gc callback (the
  collector is switched off from the end of each call until the outputs are shipped), a signal
  handler (a Python handler the candidate installed is an evasion: it runs wherever the signal
  lands), a Triton launch (counted by the worker) or ctypes' raw-memory events (refused there);
- **patch the worker's checks** (through `sys.modules`, the collector's objects, or a function's
  `__code__`): the identities of the recorder's, the launch counter's and the worker's own
  functions, of every wrapper installed here, of the globals of every sealed module (the
  project's, the task's, torch's) and class, and of the worker's own objects' attributes, each
  Python function's code, defaults and closure contents (`fingerprint`), and each sealed
  module's entry in `sys.modules`, are taken before the candidate is imported and compared right
  after the import and after every call;
- **load native code of its own** (an extension module it wrote): `benchmarks.harness.native`.

All of this runs in the candidate's process, so a candidate that finds these objects can undo
them: these are explanatory signals the judge turns into a verdict (`benchmarks.harness.calls`),
not a wall. What the judge checks from outside (outputs, inputs after the call, launch counts
across calls) does not rest on them.

Like the worker, this module imports only torch and the standard library.
"""

from __future__ import annotations

import _signal
import _thread
import gc
import os
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from benchmarks.harness import native as _native_guard
from benchmarks.harness.native import NativeAccessRefused

__all__ = ["CallProbe", "NativeAccessRefused", "ReadCapExceeded", "install", "protect", "watch"]


@dataclass
class CallProbe:
    """What one candidate call did that the dispatch recorder cannot see."""

    scalar_reads: int = 0  # tensor elements read into Python values
    python_elements: int = 0  # tensor elements built from Python data (torch.tensor(list))
    threads_started: int = 0  # Python threads started during the call
    native_threads: int = 0  # native threads alive after the call that were not there before
    switches: list[str] = field(default_factory=list)  # dispatch switches called during the call
    native: list[str] = field(default_factory=list)  # ctypes raw-memory events refused in the call
    evasions: list[str] = field(default_factory=list)  # what hid work from the tracers
    # past this many scalar reads the next read raises ReadCapExceeded (None: never)
    read_cap: int | None = None


class ReadCapExceeded(BaseException):
    """Raised inside a candidate's call once it has read more tensor elements into Python than
    its probe's cap: a call computing in Python fails anyway, and on a GPU shape it could run
    for minutes. A BaseException, so a candidate's `except Exception` does not swallow it."""


# Tensor elements one call may read into Python (`.item()`, `float(t)`, ...) or build from
# Python data (`torch.tensor(list)`): a wrapper reads a handful of scalars (a max for a scale,
# a count); a computation over the input reads a number proportional to its size. More fail the
# call as `fallback` (benchmarks/harness/calls.py decides).
PYTHON_ELEMENT_LIMIT = 64
# A call that reads this many is stopped inside the read (ReadCapExceeded) and fails as
# `fallback`: past the limit it fails anyway, and an element-by-element loop over a GPU shape
# would otherwise run for minutes.
PYTHON_READ_STOP = 16 * PYTHON_ELEMENT_LIMIT

_active: CallProbe | None = None
REASSIGNED = ("_active",)  # the global this module reassigns once the candidate may run
_installed = False
# (owner, attribute name, the object it held when protected)
_protected: list[tuple[Any, str, Any]] = []
_sealed: list[tuple[Any, dict[str, Any]]] = []  # modules whose every global is protected
# what calling each protected Python function runs (`fingerprint`): a function object kept in
# place with its `__code__`, defaults or closure swapped runs the candidate's code under the
# judge's name (tests/hostile/calls_code_swap_inputs_numpy.py passed past the static check)
_prints: list[tuple[str, Any, tuple[Any, ...]]] = []  # (label, function, fingerprint)
# the import system's entry of each sealed module: a copy put under its name in sys.modules is
# what the worker's own `from ... import` finds (tests/hostile/calls_swap_module_entry_numpy.py
# shipped each trial through a copy of the transport, its writer replaced, past the static check)
_entries: list[tuple[str, Any]] = []
_MODULES = sys.modules
_EMPTY_CELL = object()
_sealed_mutable: dict[int, frozenset[str]] = {}  # their globals their own code reassigns
_sealed_growing: set[int] = set()  # namespaces that gain names lawfully (lazy submodules)


def _one(t: Any) -> int:
    return 1


def _all(t: Any) -> int:
    try:
        return int(t.numel())
    except Exception:  # noqa: BLE001 - a storage or a broken subclass: count it as one read
        return 1


# Tensor methods that hand element values to Python, and how many elements each reads.
_READS: dict[str, Callable[[Any], int]] = {
    "item": _one,
    "__float__": _one,
    "__int__": _one,
    "__bool__": _one,
    "__index__": _one,
    "__complex__": _one,
    "tolist": _all,
    "numpy": _all,
    "__array__": _all,
    "__repr__": _all,
    "__str__": _all,
    "__format__": _all,
    # the whole memory handed to another library (np.from_dlpack computed a softmax on views of
    # the input and output, no element read through any method above:
    # tests/hostile/calls_dlpack_numpy.py)
    "__dlpack__": _all,
    # a Python function called on every element, in place (CPU tensors): the softmax computed in
    # pure Python through apply_ dispatched no aten op (tests/hostile/calls_apply_python.py)
    "apply_": _all,
    "map_": _all,
    "map2_": _all,
}
# The DLPack exporters `Tensor.__dlpack__` calls, and the one torch.utils.dlpack names: a capsule
# made by any of them reaches the same memory (each counted as reading every element).
_DLPACK_EXPORTERS = ("_to_dlpack", "_to_dlpack_versioned")
# Functions that build a tensor from Python data, or from another library's memory.
_BUILDERS = ("tensor", "as_tensor", "frombuffer", "from_numpy")
# Switches that take the dispatch recorder out of the way (torch._C and the Python helpers).
_C_SWITCHES = (
    "_DisableTorchDispatch",
    "_DisablePythonDispatcher",
    "_ExcludeDispatchKeyGuard",
    "ExcludeDispatchKeyGuard",
    "_SetExcludeDispatchKeyGuard",
    "_ForceDispatchKeyGuard",
    "_pop_torch_dispatch_stack",
    "_unset_dispatch_mode",
    "_set_dispatch_mode",
    "_dispatch_tls_set_dispatch_key_excluded",
)
_PY_SWITCHES = ("_disable_current_modes", "_pop_mode", "_pop_mode_temporarily", "_push_mode")


def _reader(original: Any, count: Callable[[Any], int]) -> Any:
    def read(self: Any, *args: Any, **kwargs: Any) -> Any:
        probe = _active
        if probe is not None:
            probe.scalar_reads += count(self)
            if probe.read_cap is not None and probe.scalar_reads > probe.read_cap:
                raise ReadCapExceeded(
                    f"the call read more than {probe.read_cap} tensor elements into Python "
                    "values; stopped there"
                )
        return original(self, *args, **kwargs)

    read.__name__ = getattr(original, "__name__", "read")
    return read


def _builder(original: Any) -> Any:
    def build(data: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(data, *args, **kwargs)
        probe = _active
        if probe is not None and not isinstance(data, torch.Tensor):
            probe.python_elements += _all(out)
        return out

    build.__name__ = getattr(original, "__name__", "build")
    return build


def _switch(name: str, original: Any) -> Any:
    """A stand-in for a dispatch switch that notes its use during a call, then does its job
    (a class such as _DisableTorchDispatch is wrapped as a callable returning its guard)."""

    def switch(*args: Any, **kwargs: Any) -> Any:
        probe = _active
        if probe is not None:
            probe.switches.append(name)
        return original(*args, **kwargs)

    switch.__name__ = name
    return switch


class _Starting(threading.local):
    depth: int = 0  # inside Thread.start (which calls _start_new_thread: count once)


_starting = _Starting()


class _Import:
    """Whether the candidate is being imported (see `importing`)."""

    active: bool = False


_import = _Import()


class _Started:
    """Every thread started in this process since `install`: past that point the process runs
    the candidate and the worker's own code, which starts none. Started at import, inside a
    call or from code the candidate left to run between calls (a finalizer on an output the
    worker drops: `tests/hostile/calls_thread_from_finalizer.py` passed when only import and
    call starts counted), a thread alive beside a call fails it (`threads_beside`)."""

    threads: list[threading.Thread]
    raw: int = 0  # starts without a threading.Thread object, whose life cannot be seen

    def __init__(self) -> None:
        self.threads = []


_started = _Started()


@contextmanager
def importing() -> Iterator[None]:
    """Around the candidate's import: ctypes' raw-memory events there are refused and listed
    with each call's evasions (threads it starts are counted as any others: `threads_beside`)."""
    _import.active = True
    try:
        yield
    finally:
        _import.active = False


class _Shipping:
    """From a trial's first call until the worker has shipped its outputs (`shipping`)."""

    active: bool = False
    refused: list[str]  # ctypes raw-memory events refused there outside the calls

    def __init__(self) -> None:
        self.refused = []


_shipping = _Shipping()


@contextmanager
def shipping() -> Iterator[list[str]]:
    """Around a trial's calls and the shipping of their outputs. Between a call's return and
    the shipped bytes, code the candidate left behind (a gc callback, a finalizer) could write
    an output by address; ctypes' raw-memory events are refused there as inside a call, and
    listed in what this yields (empty: none). The garbage collector runs only inside calls
    (`collector`)."""
    _shipping.refused.clear()
    _shipping.active = True
    try:
        yield _shipping.refused
    finally:
        _shipping.active = False


class _Collector:
    """The garbage collector runs only inside the candidate's calls, where the recorder watches
    what its callbacks and finalizers do. Outside them the worker makes the next call's inputs,
    and a gc callback of the candidate's that ran there found the new input among the
    collector's objects, computed its answer with PyTorch untraced and had the call copy it
    (`tests/hostile/calls_gc_precompute_next.py`: passed past the static check while the
    collector ran again once a trial's outputs were shipped). `gc.enable` outside a call is
    refused (a no-op, listed with the next call's evasions)."""

    wanted: bool = False  # whether the collector was on when the probes were installed
    refused: int = 0  # calls of gc.enable outside a call


_collector = _Collector()
_gc_enable = gc.enable  # held before any candidate code exists


def _gc_enable_guard(original: Any) -> Any:
    def enable() -> None:
        if _active is None:
            _collector.refused += 1
            return None
        return original()

    enable.__name__ = "enable"
    return enable


def threads_beside() -> list[str]:
    """The threads started since `install` that may still run (names; empty: none): the
    recorder sees only the calling thread, so each of them fails every call it lives beside, and
    Triton builds no C beside one (`native`: it could rewrite the source between the check and
    the compiler)."""
    alive = [
        t.name for t in _started.threads if t.is_alive() and t is not threading.current_thread()
    ]
    if _started.raw:
        alive.append(f"{_started.raw} started without threading.Thread")
    return alive


def _thread_start(original: Any) -> Any:
    def start(*args: Any, **kwargs: Any) -> Any:
        probe = _active
        if not _starting.depth:
            if probe is not None:
                probe.threads_started += 1
            if args and isinstance(args[0], threading.Thread):
                _started.threads.append(args[0])
            else:
                _started.raw += 1
        _starting.depth += 1
        try:
            return original(*args, **kwargs)
        finally:
            _starting.depth -= 1

    start.__name__ = getattr(original, "__name__", "start")
    return start


# ctypes' audit events that hand Python an object over memory at an address (`from_address`,
# `from_buffer`, `string_at`, `PyObj_FromPtr`), and the foreign functions whose call reads or
# writes memory by address (`memmove`, `memset`, `cast`, `string_at`): loading a library and
# calling its functions (`CDLL`, Triton's driver probe) stays allowed.
_NATIVE_EVENTS = frozenset(
    {
        "ctypes.cdata",
        "ctypes.cdata/buffer",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.PyObj_FromPtr",
    }
)
_NATIVE_FUNCTIONS = ("_memmove_addr", "_memset_addr", "_cast_addr", "_string_at_addr")
_native_addresses: frozenset[int] = frozenset()
_import_native: list[str] = []  # raw-memory events refused while the candidate was imported
# installing a profile or trace function or a sys.monitoring callback: code run at every call
# and return of the judge's own functions, where it can rewrite a call's output after the
# traced call and before it is shipped, replacing nothing the identity checks watch
# (tests/hostile/calls_fix_output_in_a_profile_hook.py passed past the static check before);
# refused at any time once the probes are installed (the worker itself installs none)
_HOOK_EVENTS = frozenset(
    {
        "sys.setprofile",
        "sys.settrace",
        "sys._setprofileallthreads",
        "sys._settraceallthreads",
        "sys.monitoring.register_callback",
        # another audit hook: it runs at the worker's own events after a call (opening the trial
        # file), where it could rewrite the output (tests/hostile/calls_audit_hook_*.py)
        "sys.addaudithook",
    }
)
_hooks_refused: list[str] = []
_observer_refused: list[str] = []
_OBSERVER_EVENTS = frozenset({"ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.dlopen", "open"})


class HookRefused(NativeAccessRefused):
    """Raised by the audit hook where the candidate installs a profile or trace function, and
    by `signal.signal` where it installs a Python signal handler."""


def _signal_setter(original: Any) -> Any:
    """`_signal.signal` (behind `signal.signal`) refusing a Python handler: a handler runs
    wherever its signal lands, after a call as well as inside it (an interval timer lands one
    between a call's return and its shipped outputs: tests/hostile/calls_signal_handler_numpy.py
    passed past the static check before). SIG_IGN and SIG_DFL stay allowed."""

    def set_handler(signalnum: Any, handler: Any) -> Any:
        if callable(handler):
            _hooks_refused.append("signal.signal")
            raise HookRefused(
                f"signal.signal({signalnum!r}, {getattr(handler, '__name__', 'handler')}): a "
                "Python signal handler runs inside the judge's own code, where it could change "
                "a call's output after the call; a candidate may not install one"
            )
        return original(signalnum, handler)

    set_handler.__name__ = "signal"
    return set_handler


class ObserverReachRefused(NativeAccessRefused):
    """Raised by the audit hook where the candidate reaches for the launch observer: CUPTI's
    functions through ctypes (which could unsubscribe or finalise it) or the process's memory
    through /proc (where its key is)."""


def _observer_reach(event: str, args: tuple[Any, ...]) -> str | None:
    """What `event` reaches of the launch observer (benchmarks/harness/observer), or None."""
    if event in ("ctypes.dlsym", "ctypes.dlsym/handle") and len(args) > 1:
        name = str(args[1]).lower()
        if name.startswith(("cupti", "initializeinjection")):
            return f"the CUPTI function {args[1]} through ctypes"
    elif event == "ctypes.dlopen" and args:
        name = str(args[0]).lower()
        if "cupti" in name or "kf_observer" in name:
            return f"the library {args[0]} through ctypes"
    elif event == "open" and args and isinstance(args[0], str | bytes):
        path = os.fsdecode(args[0]).rstrip("/")
        if path.startswith("/proc/") and path.endswith(("/mem", "/pagemap")):
            return f"{path} (the process's memory)"
    return None


# starting a process: a helper forked at import computed each call's answer in numpy, in a
# process of its own where no probe runs, over memory shared with the worker, the worker seeing
# only Triton copies (tests/hostile/calls_forked_helper_numpy.py passed past the static check).
# Refused once the probes are installed, except the compiler tools Triton runs on a GPU
# (ptxas, a C compiler for its launchers, ldconfig), found in a folder the candidate cannot write.
_PROCESS_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.system",
        "os.spawn",
        "os.posix_spawn",
        "subprocess.Popen",
    }
)
_TOOLS = frozenset(
    {
        "ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm", "nvlink", "fatbinary", "gcc", "cc",
        "clang", "clang++", "g++", "c++", "ld", "ldconfig", "ldconfig.real",
    }
)  # fmt: skip
# libc's process starters reached through ctypes (and `syscall`, which reaches any of them)
_PROCESS_SYMBOLS = frozenset(
    {
        "fork", "vfork", "_fork", "__fork", "clone", "clone3", "__clone", "posix_spawn",
        "posix_spawnp", "execve", "execv", "execvp", "execvpe", "execl", "execle", "execlp",
        "fexecve", "execveat", "system", "popen", "syscall", "daemon",
    }
)  # fmt: skip
# a C compiler's options alone run programs (`-wrapper`, `-fplugin`): one starts only inside a
# Triton build of a source Triton generated (benchmarks/harness/native.py)
_C_COMPILERS = frozenset({"gcc", "cc", "clang", "clang++", "g++", "c++"})
_processes_refused: list[str] = []
_allowed_tools = set(_TOOLS)  # emptied by `install` where nothing is compiled


class ProcessRefused(NativeAccessRefused):
    """Raised where the candidate starts a process (other than Triton's compiler tools)."""


def _scratch_roots() -> tuple[str, ...]:
    """The folders a candidate can write into (where a program or library of its own would be)."""
    import tempfile

    roots = {"/tmp", "/dev/shm", "/var/tmp", tempfile.gettempdir(), os.getcwd()}
    return tuple(sorted(os.path.realpath(r) for r in roots))


def _in_scratch(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in _scratch_roots())


def _tool(program: Any) -> bool:
    """Whether `program` is one of Triton's compiler tools, outside every folder the candidate
    can write into."""
    import shutil

    if isinstance(program, bytes):
        program = os.fsdecode(program)
    if not isinstance(program, str) or not program:
        return False
    path = program if "/" in program else shutil.which(program)
    if path is None:
        return False
    names = {os.path.basename(path), os.path.basename(os.path.realpath(path))}
    if names & _C_COMPILERS and not _native_guard.building():
        return False
    return bool(names & _allowed_tools) and not _in_scratch(path)


def _starts_a_process(event: str, args: tuple[Any, ...]) -> str | None:
    """What process `event` starts, when it is not an allowed tool; None otherwise."""
    if event in ("ctypes.dlsym", "ctypes.dlsym/handle"):
        name = str(args[1]) if len(args) > 1 else ""
        return f"libc's {name} through ctypes" if name in _PROCESS_SYMBOLS else None
    if event == "ctypes.dlopen":  # native code of the candidate's own, written into its scratch
        name = os.fsdecode(args[0]) if args and isinstance(args[0], str | bytes) else ""
        return f"a library of its own ({name[:80]})" if "/" in name and _in_scratch(name) else None
    if event not in _PROCESS_EVENTS:
        return None
    if event == "subprocess.Popen" and len(args) > 1:
        program = args[0] or (
            args[1][0] if isinstance(args[1], list | tuple) and args[1] else args[1]
        )
        return None if _tool(program) else f"{event} of {str(program)[:80]}"
    if event == "os.posix_spawn" and args:
        return None if _tool(args[0]) else f"{event} of {str(args[0])[:80]}"
    return event


def _fork_exec_guard(original: Any) -> Any:
    """`_posixsubprocess.fork_exec` (below subprocess, unaudited) refusing any program but the
    allowed tools: its second argument lists the paths the child will try."""

    def fork_exec(*args: Any, **kwargs: Any) -> Any:
        paths = args[1] if len(args) > 1 else ()
        if not paths or not all(_tool(p) for p in paths):
            shown = os.fsdecode(paths[0]) if paths else "?"
            _processes_refused.append(f"fork_exec of {shown[:80]}")
            raise ProcessRefused(
                f"a process was started ({shown[:80]}): what it computes is not seen by the "
                "judge's probes, so a candidate may not start one"
            )
        if _native_guard.building() and len(args) > 5:  # the compiler gets the install's
            args = (*args[:5], _native_guard.compiler_environment(), *args[6:])  # environment
        return original(*args, **kwargs)

    fork_exec.__name__ = "fork_exec"
    return fork_exec


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: refuse ctypes' raw-memory events during a call or the import, and
    profile, trace and monitoring hooks, and reaches for the launch observer, at any time
    after `install`."""
    if _installed and (
        event in _PROCESS_EVENTS or event.startswith("ctypes.dlsym") or event == "ctypes.dlopen"
    ):
        started = _starts_a_process(event, args)
        if started is not None:
            _processes_refused.append(started)
            raise ProcessRefused(
                f"a process was started ({started}): what it computes is not seen by the "
                "judge's probes, so a candidate may not start one"
            )
    if _installed and event in _OBSERVER_EVENTS:
        reach = _observer_reach(event, args)
        if reach is not None:
            _observer_refused.append(reach)
            raise ObserverReachRefused(
                f"{event}: {reach}: the launch observer counts what the candidate launches; a "
                "candidate may not reach it"
            )
    if event in _HOOK_EVENTS:
        if _installed:
            _hooks_refused.append(event)
            raise HookRefused(
                f"{event}: a profile, trace or monitoring function runs inside the judge's own "
                "code, where it could change a call's output after the call; a candidate may "
                "not install one"
            )
        return
    if not event.startswith("ctypes."):
        return
    probe = _active
    if probe is None and not _import.active and not _shipping.active:
        return
    if event == "ctypes.call_function":
        if not args or args[0] not in _native_addresses:
            return
    elif event not in _NATIVE_EVENTS:
        return
    if probe is not None:
        probe.native.append(event)
    else:
        (_import_native if _import.active else _shipping.refused).append(event)
    raise NativeAccessRefused(
        f"memory reached by address through ctypes ({event}): what is read that way is not seen "
        "by the judge's probes, so a candidate may not do it"
    )


# the Python-level signal handlers in force before the candidate existed (`install`); one the
# candidate adds runs wherever its signal lands, after a call as well as inside one
_handlers: dict[int, Any] = {}
_getsignal = signal.getsignal


def _signal_handlers() -> dict[int, Any]:
    handlers = {}
    for sig in signal.valid_signals():
        try:
            handlers[int(sig)] = _getsignal(sig)
        except (OSError, ValueError):  # a signal Python cannot ask about
            continue
    return handlers


def new_signal_handlers() -> list[str]:
    """The signals whose Python handler the candidate installed (empty: none)."""
    return [
        _signal_name(sig)
        for sig, handler in _signal_handlers().items()
        if callable(handler) and handler is not _handlers.get(sig)
    ]


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:  # a real-time signal
        return str(sig)


def _install_audit() -> None:
    global _native_addresses
    import ctypes

    _native_addresses = frozenset(
        int(getattr(ctypes, name)) for name in _NATIVE_FUNCTIONS if hasattr(ctypes, name)
    )
    sys.addaudithook(_audit)


def _patch(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    original = getattr(owner, name, None)
    if original is None:
        return
    setattr(owner, name, make(original))


def install(compiles: bool = True) -> None:
    """Wrap the scalar reads, tensor builders, thread starts and dispatch switches (once per
    process, before any candidate code exists in it). Outside a `watch` they only pass through.
    `compiles`: Triton compiles here (a GPU), so its compiler tools may run; under the CPU
    interpreter nothing is compiled and no process at all may start (a C compiler would build
    native code of the candidate's own)."""
    global _installed
    if _installed:
        return
    _installed = True
    if not compiles:
        _allowed_tools.clear()
    from torch.utils import _python_dispatch

    _handlers.update(_signal_handlers())
    _modes_before[:] = [_len_dispatch_modes(), _len_function_modes()]
    _patch(_signal, "signal", _signal_setter)
    protect(_signal, ["signal"])
    import _posixsubprocess

    _patch(_posixsubprocess, "fork_exec", _fork_exec_guard)
    protect(_posixsubprocess, ["fork_exec"])

    _install_audit()
    _native_guard.install(compiles, protect, threads_beside)
    _collector.wanted = gc.isenabled()
    gc.disable()
    _patch(gc, "enable", _gc_enable_guard)
    protect(gc, ["enable"])

    for name, count in _READS.items():
        _patch(torch.Tensor, name, lambda f, c=count: _reader(f, c))
    for name in ("tolist", "__getitem__"):
        _patch(torch.UntypedStorage, name, lambda f: _reader(f, _one))
    import torch.utils.dlpack as _dlpack

    for name in _DLPACK_EXPORTERS:
        _patch(torch._C, name, lambda f: _reader(f, _all))
    _patch(_dlpack, "to_dlpack", lambda f: _reader(f, _all))
    for name in _BUILDERS:
        _patch(torch, name, _builder)
    _patch(torch.Tensor, "new_tensor", _new_tensor)
    _patch(threading.Thread, "start", _thread_start)
    _patch(_thread, "start_new_thread", _thread_start)
    _patch(threading, "_start_new_thread", _thread_start)
    for name in _C_SWITCHES:
        _patch(torch._C, name, lambda f, n=name: _switch(f"torch._C.{n}", f))
    for name in _PY_SWITCHES:
        _patch(_python_dispatch, name, lambda f, n=name: _switch(n, f))
    protect(torch.Tensor, [*_READS, "new_tensor"])
    protect(torch.UntypedStorage, ["tolist", "__getitem__"])
    protect(torch._C, list(_DLPACK_EXPORTERS))
    protect(_dlpack, ["to_dlpack"])
    protect(torch, list(_BUILDERS))
    protect(threading.Thread, ["start"])
    protect(_thread, ["start_new_thread"])
    protect(threading, ["_start_new_thread"])
    protect(torch._C, list(_C_SWITCHES))
    protect(_python_dispatch, list(_PY_SWITCHES))


def _new_tensor(original: Any) -> Any:
    """Tensor.new_tensor builds from Python data like torch.tensor (its data is the 2nd arg)."""

    def new_tensor(self: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
        out = original(self, data, *args, **kwargs)
        probe = _active
        if probe is not None and not isinstance(data, torch.Tensor):
            probe.python_elements += _all(out)
        return out

    return new_tensor


def _functions(value: Any, depth: int = 0) -> list[types.FunctionType]:
    """The Python functions calling `value` runs: itself (or the one inside a staticmethod,
    classmethod, bound method or property) and, one level down, those its closure holds."""
    if isinstance(value, staticmethod | classmethod | types.MethodType):
        value = value.__func__
    if isinstance(value, property):
        return [f for g in (value.fget, value.fset, value.fdel) for f in _functions(g, depth)]
    if not isinstance(value, types.FunctionType):
        return []
    found = [value]
    if depth == 0:
        for cell in value.__closure__ or ():
            try:
                found.extend(_functions(cell.cell_contents, 1))
            except ValueError:  # an empty cell
                continue
    return found


def fingerprint(func: types.FunctionType) -> tuple[Any, ...]:
    """What calling the Python function `func` runs, where that can change while the object
    stays: its code object, defaults, keyword defaults (the dict and its items) and the
    contents of its closure's cells. Compared by identity (`same_print`)."""
    contents = []
    for cell in func.__closure__ or ():
        try:
            contents.append(cell.cell_contents)
        except ValueError:  # an empty cell
            contents.append(_EMPTY_CELL)
    kw = func.__kwdefaults__
    return (func.__code__, func.__defaults__, kw, tuple(kw.items()) if kw else (), tuple(contents))


def same_print(func: types.FunctionType, held: tuple[Any, ...]) -> bool:
    """Whether `func` still runs what its fingerprint `held` says (every part by identity)."""
    code, defaults, kw, kw_items, contents = held
    if func.__code__ is not code or func.__defaults__ is not defaults:
        return False
    now_kw = func.__kwdefaults__
    if now_kw is not kw:
        return False
    if kw_items:
        items = tuple(now_kw.items()) if now_kw else ()
        if len(items) != len(kw_items) or any(
            a[0] != b[0] or a[1] is not b[1] for a, b in zip(items, kw_items, strict=True)
        ):
            return False
    for cell, content in zip(func.__closure__ or (), contents, strict=False):
        try:
            now = cell.cell_contents
        except ValueError:
            now = _EMPTY_CELL
        if now is not content:
            return False
    return True


_printed: set[int] = set()  # the functions already held (one entry each)


def _print_names(owner: Any, items: Any) -> None:
    """Hold the Python functions behind `items` (name, value) of `owner` by their fingerprints:
    the object itself is held by identity elsewhere, so its own internals are what is checked."""
    label = getattr(owner, "__name__", None)
    label = label if isinstance(label, str) else type(owner).__name__
    for name, value in items:
        for func in _functions(value):
            if id(func) not in _printed:
                _printed.add(id(func))
                _prints.append((f"{label}.{name}", func, fingerprint(func)))


def protect(owner: Any, names: list[str]) -> None:
    """Remember what `owner.<name>` holds now; `tampered` reports any that changed since."""
    for name in names:
        if hasattr(owner, name):
            _protected.append((owner, name, getattr(owner, name)))
            _print_names(
                owner,
                [(name, vars(owner).get(name, getattr(owner, name)))]
                if hasattr(owner, "__dict__")
                else [(name, getattr(owner, name))],
            )


def protect_module(module: Any, mutable: tuple[str, ...] = (), grows: bool = False) -> None:
    """Protect every global of `module` (a module or a class) as it is now, and its namespace as
    a whole: a global replaced, removed or added (a name that would shadow a builtin, like
    `open`, or a class's inherited method) is tampering; `mutable` names the globals the
    module's own code reassigns; `grows`: names added later are lawful (torch's lazy submodules),
    only those there now are held."""
    _sealed.append((module, {k: v for k, v in vars(module).items() if k not in mutable}))
    name = getattr(module, "__name__", None)
    if isinstance(module, types.ModuleType) and _MODULES.get(name) is module:
        _entries.append((name, module))
    _print_names(module, [(k, v) for k, v in vars(module).items() if k not in mutable])
    _sealed_mutable[id(module)] = frozenset(mutable)
    if grows:
        _sealed_growing.add(id(module))


TAMPERED_EXIT = 87  # the worker's exit status when `frozen_check` finds the judge's code replaced


def frozen_check(
    descriptor: tuple[int, tuple[int, int] | None] = (-1, None),
) -> Callable[[], list[str]]:
    """A check of everything protected so far that a candidate imported later cannot reach: it
    holds copies of the registries and the builtins it calls (replacing a module's global, a
    registry, or `builtins.getattr` changes nothing it uses), and answers the names found
    replaced. The worker keeps it in a local variable of its running frame and, when it answers
    any, ends the process with `TAMPERED_EXIT` through an `os._exit` it holds the same way: a
    record written through replaced code (the call records scrubbed, the evasions with them) is
    then never read as a result. `descriptor`: a file descriptor and what it must keep referring
    to (device, inode: `fallback.ops_fd()`, the op pipe), checked with an `os.fstat` held the
    same way."""
    fd, identity = descriptor
    sealed = tuple(
        (
            module,
            tuple(names.items()),
            _sealed_mutable.get(id(module), frozenset()),
            id(module) in _sealed_growing,
        )
        for module, names in _sealed
    )
    protected = tuple(_protected)
    prints = tuple(_prints)
    entries = tuple(_entries)

    def check(
        _vars: Any = vars,
        _getattr: Any = getattr,
        _set: Any = set,
        _str: Any = str,
        _fstat: Any = os.fstat,
        _same: Any = same_print,
        _sys: Any = sys,
        _modules: Any = _MODULES,
    ) -> list[str]:
        found = []
        if fd >= 0:
            try:
                st = _fstat(fd)
                if (st.st_dev, st.st_ino) != identity:
                    found.append("the op pipe's descriptor (it refers to another file)")
            except (OSError, ValueError):
                pass  # closed: the judge sees the pipe close before the result
        for owner, name, value in protected:
            if _getattr(owner, name, None) is not value:
                found.append(_str(_getattr(owner, "__name__", "?")) + "." + name)
        for module, names, skip, grows in sealed:
            now = _vars(module)
            for name, value in names:
                if now.get(name, check) is not value:
                    found.append(_label(module) + "." + name)
            if not grows:
                known = _set(n for n, _ in names)
                found.extend(_label(module) + "." + n for n in _set(now) - skip - known)
        if _sys.modules is not _modules:
            found.append("sys.modules")
        for name, module in entries:
            if _modules.get(name) is not module:
                found.append("sys.modules[" + name + "]")
        for label, func, held in prints:
            if not _same(func, held):
                found.append(label + " (its code)")
        return found

    return check


def _label(owner: Any) -> str:
    """A sealed namespace's name: a module's or class's own, an object's type's."""
    name = getattr(owner, "__name__", None)
    return name if isinstance(name, str) else f"<{type(owner).__name__} object>"


def tampered() -> list[str]:
    """The protected attributes that no longer hold what they held when protected."""
    changed = []
    for module, names in _sealed:
        now = vars(module)
        skip = _sealed_mutable.get(id(module), frozenset())
        held = set(names) if id(module) in _sealed_growing else set(names) | set(now)
        for name in sorted(held - skip):
            if names.get(name, _sealed) is not now.get(name, _sealed):
                changed.append(f"{_label(module)}.{name}")
    if sys.modules is not _MODULES:
        changed.append("sys.modules")
    changed.extend(
        f"sys.modules[{name}]" for name, module in _entries if _MODULES.get(name) is not module
    )
    changed.extend(
        f"{label} (its code)" for label, func, held in _prints if not same_print(func, held)
    )
    for owner, name, value in _protected:
        if getattr(owner, name, None) is not value:
            where = (
                getattr(owner, "__qualname__", None)
                or getattr(owner, "__name__", None)
                or type(owner).__name__
            )
            changed.append(f"{getattr(owner, '__module__', '') or ''}.{where}.{name}".lstrip("."))
    return changed


def _native_threads() -> set[str]:
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


# the lengths of PyTorch's dispatch-mode and function-mode stacks before the candidate existed
# (`install`), read through functions taken then: a mode the candidate leaves on runs its own
# Python on every op or torch function the worker's code runs after the call, where it can
# rewrite an output (tests/hostile/calls_dispatch_mode_below_numpy.py and
# calls_function_mode_numpy.py passed past the static check before)
_len_dispatch_modes = torch._C._len_torch_dispatch_stack
_len_function_modes = torch._C._len_torch_function_stack
_modes_before: list[int] = []


def _dispatch_state(recorder: Any) -> list[str]:
    """Why the recorder is not in force now (it should be: this runs inside its block), and
    the modes of the candidate's own left on PyTorch's stacks."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    problems = []
    if torch._C._dispatch_tls_is_dispatch_key_excluded(torch._C.DispatchKey.Python):
        problems.append("the Python dispatch key was excluded at the end of the call")
    if _get_current_dispatch_mode() is not recorder:
        problems.append("the dispatch recorder was not the current mode at the end of the call")
    if _modes_before:
        extra = _len_dispatch_modes() - _modes_before[0] - 1  # the recorder is the one expected
        if extra > 0:
            problems.append(
                f"{extra} dispatch mode(s) of its own were on PyTorch's stack at the end of the "
                "call: they run on every op the judge's own code runs after it"
            )
        extra = _len_function_modes() - _modes_before[1]
        if extra > 0:
            problems.append(
                f"{extra} torch function mode(s) of its own were on at the end of the call: they "
                "run on every torch function the judge's own code calls after it"
            )
    return problems


@contextmanager
def watch(recorder: Any, read_cap: int | None = None) -> Iterator[CallProbe]:
    """Probe one call; used inside the recorder's block. The probe's `evasions` are filled in
    when the block exits. With `read_cap`, a read past that many elements raises
    `ReadCapExceeded` inside the call."""
    global _active
    threads = set(threading.enumerate())
    beside = threads_beside()  # started before the call (at import, between calls), still alive
    native = _native_threads()
    probe = CallProbe(read_cap=read_cap)
    _active = probe
    if _collector.wanted:
        _gc_enable()
    try:
        yield probe
    finally:
        gc.disable()  # no gc callback or cycle finalizer of the candidate's runs outside a call
        _active = None
        if _collector.refused:
            probe.evasions.append(
                f"it switched the garbage collector on outside its calls {_collector.refused} "
                "time(s) (refused: a gc callback there runs where no call is traced)"
            )
        handlers = new_signal_handlers()
        if handlers:
            probe.evasions.append(
                f"it installed a signal handler ({', '.join(handlers[:5])}): Python code of its "
                "own that runs wherever the signal lands, after its call as well as inside it, "
                "where it can rewrite an output no probe watches"
            )
        probe.evasions.extend(_dispatch_state(recorder))
        if probe.switches:
            names = ", ".join(sorted(set(probe.switches)))
            probe.evasions.append(
                f"it called dispatch switches that hide ops from the recorder: {names}"
            )
        if _hooks_refused:
            probe.evasions.append(
                "it tried to install a profile, trace or monitoring function or a signal handler "
                "(refused: "
                f"{', '.join(sorted(set(_hooks_refused)))}): code run inside the judge's own"
            )
        if _processes_refused:
            probe.evasions.append(
                "it started a process, refused: "
                f"{', '.join(sorted(set(_processes_refused))[:3])} (what another process "
                "computes is not seen)"
            )
        if _native_guard.refused:
            probe.evasions.append(
                "it loaded native code of its own, refused: "
                f"{', '.join(sorted(set(_native_guard.refused))[:3])} (machine code in its process "
                "computes where no probe sees it)"
            )
        if _observer_refused:
            probe.evasions.append(
                "it reached for the launch observer (refused: "
                f"{', '.join(sorted(set(_observer_refused))[:3])})"
            )
        refused = probe.native + _import_native
        if refused:
            probe.evasions.append(
                "it reached memory by address through ctypes (refused: "
                f"{', '.join(sorted(set(refused)))}): the judge cannot see what computes on it"
            )
        if beside:
            probe.evasions.append(
                "threads it started before this call ran beside it (the recorder sees only "
                f"the calling thread): {', '.join(beside[:5])}"
            )
        alive = [t.name for t in threading.enumerate() if t not in threads]
        if probe.threads_started or alive:
            probe.evasions.append(
                f"it started {max(probe.threads_started, len(alive))} thread(s) "
                f"(the recorder sees only the calling thread){': ' + ', '.join(alive[:5]) if alive else ''}"
            )
        probe.native_threads = len(_native_threads() - native)
        changed = tampered()
        if changed:
            probe.evasions.append(f"it replaced the judge's own code: {', '.join(changed[:8])}")
