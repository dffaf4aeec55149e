# expect: runtime_error
# task: softmax_fp32
# why: the call raises an exception whose __str__ itself raises: formatting the message in the worker ran the candidate's code and failed there, and the candidate's failure came back as harness_error (the judge's fault); it must be the candidate's runtime_error, its message saying the text could not be formatted
import triton
import triton.language as tl


@triton.jit
def _noop(p):
    pass


class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no message")


def softmax(x):
    _noop[(1,)](x)
    raise Unprintable()
