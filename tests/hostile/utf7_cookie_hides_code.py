# coding: utf-7
# expect: syntax_error
# task: softmax_fp32
# why: a utf-7 coding cookie: the static check parsed the text as read (UTF-8), where the last comment is a comment, but Python's importer decodes the file by its cookie, and in utf-7 that comment's plus-escaped sequences decode to new lines of code: numpy reads the tensors' memory through __array_interface__ and computes the softmax, a Triton kernel copies it into the output, and the candidate passed the full judge; a cookie declaring anything but UTF-8 is refused
import torch
import triton
import triton.language as tl


@triton.jit
def _decoy(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr - (-offs), tl.zeros([BLOCK], tl.float32), mask=offs < n)


def softmax(x):
    y = torch.empty_like(x)
    _decoy[(1,)](y, 1, BLOCK=16)
    return y


# +AAo-import numpy as np+AAoACgAK-class +AF8-View+ADoACg-    pass+AAoACgAK-def +AF8-np+AF8-of+ACg-t+ACkAOgAK-    v +AD0- +AF8-View+ACgAKQAK-    v+AC4AXwBf-array+AF8-interface+AF8AXw- +AD0- +AHsAIg-data+ACIAOg- +ACg-t+AC4-data+AF8-ptr+ACgAKQAs- False+ACkALA- +ACI-shape+ACIAOg- tuple+ACg-t+AC4-shape+ACkALA- +ACI-typestr+ACIAOg- +ACIAPA-f4+ACIALA- +ACI-version+ACIAOg- 3+AH0ACg-    return np+AC4-asarray+ACg-v+ACkACgAKAAoAQA-triton+AC4-jit+AAo-def +AF8-copy+ACg-src+ACw- dst+ACw- n+ACw- BLOCK+ADo- tl+AC4-constexpr+ACkAOgAK-    pid +AD0- tl+AC4-program+AF8-id+ACg-0+ACkACg-    offs +AD0- pid +ACo- BLOCK +ACs- tl+AC4-arange+ACg-0+ACw- BLOCK+ACkACg-    m +AD0- offs +ADw- n+AAo-    tl+AC4-store+ACg-dst +ACs- offs+ACw- tl+AC4-load+ACg-src +ACs- offs+ACw- mask+AD0-m+ACkALA- mask+AD0-m+ACkACgAKAAo-def softmax+ACg-x+ACkAOgAK-    x +AD0- x+AC4-contiguous+ACgAKQAK-    tmp +AD0- torch+AC4-empty+AF8-like+ACg-x+ACkACg-    a +AD0- +AF8-np+AF8-of+ACg-x+ACkACg-    b +AD0- +AF8-np+AF8-of+ACg-tmp+ACkACg-    e +AD0- np+AC4-exp+ACg-a +AC0- a+AC4-max+ACg-axis+AD0-1+ACw- keepdims+AD0-True+ACkAKQAK-    b+AFsALgAuAC4AXQ- +AD0- e +AC8- e+AC4-sum+ACg-axis+AD0-1+ACw- keepdims+AD0-True+ACkACg-    y +AD0- torch+AC4-empty+AF8-like+ACg-x+ACkACg-    n +AD0- x+AC4-numel+ACgAKQAK-    +AF8-copy+AFsAKA-triton+AC4-cdiv+ACg-n+ACw- 1024+ACkALAApAF0AKA-tmp+ACw- y+ACw- n+ACw- BLOCK+AD0-1024+ACkACg-    return y+AAoACg-
