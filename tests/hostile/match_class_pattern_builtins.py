# expect: forbidden_api
# task: softmax_fp32
# why: a `match` statement reads what no attribute or subscript expression shows: a class pattern's keyword takes __builtins__ off the candidate's own function (`case object(__builtins__=...)`) and a mapping pattern pulls eval out of it, with which the candidate imports os and reports its process through the verdict message; the static check never looked inside match statements
import torch
import triton
import triton.language as tl


@triton.jit
def _noop(p):
    pass


def softmax(x):
    _noop[(1,)](x)
    match softmax:
        case object(__builtins__={"eval": ev}):
            pass
    mod = ev("_" + "_import_" + "_('o' + 's')")
    raise RuntimeError(f"imported {mod.__name__}: pid {mod.getpid()}, uid {mod.getuid()}")
