# expect: no_triton_kernel
# task: softmax_fp32
# why: pure tensor-operator softmax with no Triton kernel at all
import math

import torch


def softmax(x):
    e = math.e**x
    total = e[:, :1] * 0
    for j in range(x.shape[1]):
        total = total + e[:, j : j + 1]
    return e / total
