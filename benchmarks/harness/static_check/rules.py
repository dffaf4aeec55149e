"""The static check's policy as data: the import allow-list, the torch allow-list, the
well-known compute APIs grouped by why each is forbidden, the tensor methods a candidate may call,
the builtins, dunders and frame attributes it may not touch, and the reasons given for refused
imports. The package docstring (``benchmarks.harness.static_check``) explains the policy."""

from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of a table literal (keeps long tables readable)."""
    return tuple(text.split())


ALLOWED_IMPORT_ROOTS: frozenset[str] = frozenset(
    _words("torch triton math typing functools itertools dataclasses __future__")
)

# Why a well-known API is forbidden, by group. GLOBAL_FORBIDDEN is their union; an entry forbids
# the dotted name itself and everything under it.
FORBIDDEN_GROUPS: dict[str, tuple[str, ...]] = {
    "a PyTorch compute namespace": _words(
        """
        torch.nn torch.special torch.linalg torch.fft torch.sparse torch.masked torch.nested
        torch.signal torch.distributions torch.ao torch.quantization torch.autograd torch.func
        torch.vmap torch.amp torch.autocast torch.random
        """
    ),
    "PyTorch dispatcher operators (aten and registered custom ops)": _words("torch.ops"),
    "a PyTorch compiler, tracer or dispatcher hook (work done outside the candidate's kernels)": (
        _words(
            """
            torch.compile torch.jit torch.fx torch.export torch.library torch.overrides
            torch.utils torch.backends torch.cuda.jiterator torch.cuda.graph torch.cuda.graphs
            torch.cuda.CUDAGraph torch.cuda.make_graphed_callables torch.testing torch.profiler
            torch.distributed torch.multiprocessing torch.hub torch.package torch.onnx
            """
        )
    ),
    "a way to load precomputed data": _words(
        "torch.load torch.save torch.from_numpy torch.frombuffer torch.from_file"
    ),
    "a PyTorch compute function": _words(
        """
        torch.matmul torch.mm torch.bmm torch.addmm torch.addbmm torch.baddbmm torch.addmv
        torch.mv torch.dot torch.vdot torch.inner torch.outer torch.ger torch.einsum
        torch.tensordot torch.kron torch.chain_matmul

        torch.softmax torch.log_softmax torch.layer_norm torch.group_norm torch.batch_norm
        torch.rms_norm torch.relu torch.sigmoid torch.tanh torch.dropout torch.embedding
        torch.conv1d torch.conv2d torch.conv3d torch.conv_transpose1d torch.conv_transpose2d
        torch.conv_transpose3d

        torch.exp torch.exp2 torch.expm1 torch.log torch.log2 torch.log10 torch.log1p
        torch.sqrt torch.rsqrt torch.pow torch.abs torch.neg torch.reciprocal torch.sin
        torch.cos torch.erf torch.clamp torch.clip torch.add torch.sub torch.subtract
        torch.mul torch.multiply torch.div torch.divide torch.true_divide torch.floor_divide
        torch.fmod torch.remainder torch.maximum torch.minimum torch.lerp torch.addcmul
        torch.addcdiv torch.nan_to_num torch.where

        torch.sum torch.mean torch.prod torch.max torch.min torch.amax torch.amin
        torch.argmax torch.argmin torch.var torch.std torch.norm torch.logsumexp torch.cumsum
        torch.cumprod torch.cummax torch.cummin torch.logcumsumexp

        torch.sort torch.argsort torch.topk torch.kthvalue torch.median torch.gather
        torch.scatter torch.scatter_add torch.scatter_reduce torch.index_select
        torch.index_add torch.masked_select torch.take torch.cat torch.concat torch.stack
        torch.flip torch.roll torch.tril torch.triu torch.cdist torch.histc torch.bincount
        torch.unique torch.searchsorted torch.bucketize

        torch.allclose torch.isclose torch.equal torch.rand torch.randn torch.randint
        torch.randperm torch.multinomial torch.normal torch.bernoulli
        """
    ),
    "evaluates strings as code": _words(
        "typing.get_type_hints typing.ForwardRef typing.evaluate_forward_ref "
        # registering a function evaluates its string annotations (typing.get_type_hints): a
        # string annotation carried eval, exec and any import past this check (red team,
        # 2026-12-08: tests/hostile/singledispatch_annotation_eval.py)
        "functools.singledispatch functools.singledispatchmethod"
    ),
    "bypasses the Triton compiler (compiler internals or prebuilt binaries)": _words(
        """
        triton.compile triton.compiler triton.tools triton.backends triton.runtime.build
        triton.runtime.cache triton.runtime.driver.active.utils.load_binary
        """
    ),
    "changes the machine's state (GPU clocks)": _words("triton.testing.set_gpu_clock"),
    "reads and sets the environment and Triton's compiler configuration": _words("triton.knobs"),
}

GLOBAL_FORBIDDEN: tuple[str, ...] = tuple(
    name for names in FORBIDDEN_GROUPS.values() for name in names
)

# The torch namespace is allow-listed: a dotted name under torch is allowed only when it is one
# of these (or an attribute of one, e.g. torch.float16.itemsize, torch.version.cuda).
TORCH_ALLOWED: frozenset[str] = frozenset(
    "torch." + name
    for name in _words(
        """
        float16 half float32 float float64 double bfloat16 complex32 complex64 complex128
        cfloat cdouble chalf int8 int16 short int32 int int64 long uint8 uint16 uint32 uint64
        bool float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu
        float4_e2m1fn_x2

        Tensor Size dtype device Generator layout strided memory_format contiguous_format
        channels_last channels_last_3d preserve_format finfo iinfo is_tensor
        is_floating_point is_complex numel get_default_dtype promote_types result_type
        can_cast broadcast_shapes version types __version__

        no_grad inference_mode enable_grad set_grad_enabled is_grad_enabled
        is_inference_mode_enabled

        empty empty_like empty_strided zeros zeros_like ones ones_like full full_like arange
        tensor as_tensor scalar_tensor

        as_strided reshape flatten unflatten squeeze unsqueeze permute transpose t narrow
        select chunk split tensor_split unbind movedim moveaxis swapaxes swapdims broadcast_to
        view_as_real view_as_complex clone detach

        cuda.is_available cuda.is_initialized cuda.current_device cuda.device_count
        cuda.get_device_properties cuda.get_device_capability cuda.get_device_name
        cuda.get_arch_list cuda.device cuda.device_of cuda.set_device cuda.current_stream
        cuda.default_stream cuda.Stream cuda.stream cuda.Event cuda.synchronize
        cuda.mem_get_info cuda.memory_allocated cuda.max_memory_allocated
        cuda.memory_reserved cuda.empty_cache
        """
    )
)

# Torch modules a candidate may import or alias as a whole.
TORCH_MODULES_ALLOWED: frozenset[str] = frozenset(
    _words("torch torch.cuda torch.version torch.types")
)

# Class entry points (KernelBench's ModelNew) may hold weights with these, anywhere in the file.
NN_HOLDERS: frozenset[str] = frozenset(
    {"torch.nn"}
    | {
        "torch.nn." + name
        for name in _words("Module Parameter ParameterList ParameterDict ModuleList ModuleDict")
    }
)
# ... and inside a class's __init__ only: torch.nn.init, torch's random constructors, and the
# torch.nn layer classes (found by issubclass(obj, torch.nn.Module), see library._is_nn_layer).
INIT_ONLY_PREFIXES: tuple[str, ...] = ("torch.nn.init",)
INIT_ONLY_RANDOM: frozenset[str] = frozenset(
    "torch." + name
    for name in _words("randn rand randint randn_like rand_like randint_like normal randperm")
)

# Tensor methods that allocate, view, convert or describe. Every other callable of torch.Tensor
# is compute (properties such as shape, dtype, device, T are metadata and always allowed).
TENSOR_METHODS_ALLOWED: frozenset[str] = frozenset(
    _words(
        """
        size stride dim ndimension numel nelement element_size data_ptr const_data_ptr
        storage_offset is_contiguous is_floating_point is_complex is_signed is_pinned is_shared
        is_inference is_conj is_neg is_same_size get_device dim_order item

        view view_as reshape reshape_as contiguous permute transpose transpose_ t t_ unsqueeze
        unsqueeze_ squeeze squeeze_ flatten unflatten ravel expand expand_as broadcast_to
        narrow select unbind split split_with_sizes chunk tensor_split as_strided movedim
        moveaxis swapaxes swapaxes_ swapdims swapdims_ unfold diagonal detach detach_
        resolve_conj resolve_neg

        to type type_as float half bfloat16 double int long short char byte bool cfloat
        cdouble chalf cuda cpu clone copy_ pin_memory record_stream

        new new_empty new_empty_strided new_zeros new_ones new_full new_tensor zero_ fill_
        requires_grad_
        """
    )
)

# Tensor method names that Python's own containers also use: not flagged on unknown objects.
CONTAINER_METHOD_NAMES: frozenset[str] = frozenset(_words("index values"))

FORBIDDEN_BUILTINS: dict[str, str] = {
    "eval": "evaluates a string as code",
    "exec": "executes a string as code",
    "compile": "compiles a string to code",
    "__import__": "imports a module by a computed name",
    "globals": "snoops on module globals",
    "locals": "snoops on frame locals",
    "vars": "snoops on an object's namespace",
    "dir": "enumerates names to reach them dynamically",
    "open": "reads or writes files (e.g. the task's reference or cached outputs)",
    "breakpoint": "enters a debugger",
    "input": "reads stdin",
    "help": "interactive help",
    "exit": "exits the process",
    "quit": "exits the process",
}
DYNAMIC_ATTR_BUILTINS: frozenset[str] = frozenset(_words("getattr setattr delattr"))

DUNDER_ATTRS_ALLOWED: frozenset[str] = frozenset(
    _words("__name__ __qualname__ __doc__ __init__ __version__")
)
DUNDER_NAMES_ALLOWED: frozenset[str] = frozenset(
    _words("__name__ __qualname__ __doc__ __file__ __debug__ __module__")
)
FORBIDDEN_METHOD_DEFS: frozenset[str] = frozenset(_words("__torch_function__ __torch_dispatch__"))
# What the judge calls on a class entry point (ModelNew) while it copies the reference's weights
# in and moves it to the device, untraced: an override (or a hook registered on the loading)
# ran PyTorch compute on the weights there, off the clock and unseen (red team, 2026-12-08:
# tests/hostile/model_new_load_state_dict_precompute.py)
BIND_METHOD_DEFS: frozenset[str] = frozenset(
    _words("load_state_dict _load_from_state_dict _apply to cuda cpu requires_grad_ state_dict")
)
BIND_HOOKS: frozenset[str] = frozenset(
    _words(
        """register_load_state_dict_pre_hook register_load_state_dict_post_hook
        _register_load_state_dict_pre_hook _register_state_dict_hook register_state_dict_pre_hook
        register_state_dict_post_hook"""
    )
)

# Attributes that reach interpreter frames and code objects without sys or inspect
# (a generator's gi_frame.f_back is its caller's frame, the judge's included).
FRAME_ATTRS: frozenset[str] = frozenset(
    _words(
        """
        gi_frame gi_code gi_yieldfrom cr_frame cr_code cr_await ag_frame ag_code f_back f_locals
        f_globals f_builtins f_code f_trace tb_frame tb_next co_code co_consts co_names
        get_capture_scope
        """
    )
)

# Modules that must never be reached, whatever object they hang off (typing.sys, x.os, ...).
DANGEROUS_MODULE_NAMES: frozenset[str] = frozenset(
    _words(
        """
        os sys subprocess ctypes cffi signal builtins importlib inspect gc threading _thread
        multiprocessing concurrent asyncio posix nt shutil socket pickle marshal runpy code
        codeop pty faulthandler resource mmap atexit operator numpy pathlib tempfile glob
        traceback unittest sysconfig linecache socketserver
        """
    )
)

# Names of OS facilities (process, environment and file functions and classes of os, pathlib,
# tempfile, shutil, subprocess) refused as an attribute of any object: they are how a re-exported
# or smuggled module or object would be used.
OS_FACILITY_NAMES: frozenset[str] = frozenset(
    _words(
        """
        environ environb getenv putenv setenv unsetenv system popen Popen fork forkpty execv
        execve execvp execvpe spawnv spawnve posix_spawn kill killpg setsid Path PurePath
        PosixPath mkdtemp mkstemp NamedTemporaryFile TemporaryDirectory TemporaryFile
        gettempdir rmtree listdir scandir unlink rmdir
        """
    )
)

# The str methods that read attributes and items of their arguments as the format string says
# ("{0.__globals__[os]}"): allowed only on a constant format string whose fields pass the
# attribute rules.
FORMAT_METHODS: frozenset[str] = frozenset(_words("format format_map vformat"))

# Dunder strings a candidate may write as constants (other dunders in a string are keys into
# namespaces: d["__builtins__"], "{0.__globals__}").
DUNDER_STRINGS_ALLOWED: frozenset[str] = frozenset(_words("__main__"))

JIT_DECORATORS: frozenset[str] = frozenset({"triton.jit", "triton.runtime.jit.jit"})

# Calls whose result is never a tensor: `torch.finfo(dt).max` is a number, not Tensor.max.
NON_TENSOR_RESULTS: frozenset[str] = frozenset(
    _words(
        """
        torch.finfo torch.iinfo torch.device torch.Size torch.cuda.get_device_properties
        torch.cuda.Stream torch.cuda.Event torch.cuda.current_stream torch.cuda.default_stream
        triton.Config
        """
    )
)


def why_import(root: str) -> str:
    """Why a candidate may not import the module `root`, and what it may import instead."""
    reasons = {
        "numpy": "NumPy compute would be a CPU fallback",
        "os": "leaves the sandbox (processes, files, exit)",
        "sys": "reaches the interpreter (exit, frames, sys.modules)",
        "subprocess": "starts processes",
        "signal": "can defeat the judge's timeout",
        "ctypes": "calls native code directly (and can crash the judge)",
        "threading": "work on another thread can outlive the call and hide from the timer",
        "multiprocessing": "work in another process hides from the judge",
        "inspect": "snoops on the judge's frames",
        "gc": "snoops on every live object (the judge's reference outputs included)",
        "importlib": "imports by computed name",
        "builtins": "reaches eval/exec/__import__",
        "operator": "hides operators (matmul) behind functions",
        "time": "timing is the judge's job; monkeypatching clocks fakes it",
    }
    allowed = ", ".join(sorted(ALLOWED_IMPORT_ROOTS))
    why = reasons.get(root, "not on the import allow-list")
    return f"{why}; a candidate may import only {allowed}"
