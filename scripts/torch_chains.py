"""The eight chains of the GPU benchmark as PyTorch writes them, and how to feed
them the inputs a kernel fusescan emitted takes (shared by
scripts/bench_torch.py and tests/scripts/check_torch_op.py).

Every function takes its inputs in the order fusescan's numerics.json lists
them, and `acc`, the dtype of its explicit upcasts: float32 as the models
write them, float64 for the reference (with float64 inputs every cast is
then the identity, as fusescan's float64 reference ignores casts)."""
import math
import os
import re
import sys

import torch
import torch.nn.functional as F

BF16 = torch.bfloat16


def rms(x, w, acc=torch.float32, eps=1e-5):  # Llama's RMSNorm, as the HF code writes it
    h = x.to(acc)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return w * h.to(x.dtype)


def add_rms(x, r, w, acc=torch.float32):
    s = x + r
    return s, rms(s, w, acc)


def swiglu(a, b, acc=None):
    return F.silu(a) * b


def rope(q, k, cos, sin, acc=None):  # x * cos + rotate_half(x) * sin of q and k, projections [b, s, h, d] seen as [b, h, s, d]
    def one(x):
        x = x.transpose(1, 2)
        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin
    return one(q), one(k)


def geglu_tanh(a, b, acc=None):
    return F.gelu(a, approximate="tanh") * b


def layernorm(x, w, b, acc=None):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def new_gelu(x, acc=None):  # GPT-2
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def softmax(x, mask, acc=torch.float32):  # eager attention: softmax(scale * scores + mask) in fp32, back to bf16
    return F.softmax(x * 0.08838834764831845 + mask, dim=-1, dtype=acc).to(x.dtype)


# name, fusescan candidate, benchmark dump (Llama-3-8B widths: gpu-carry/dumps,
# scripts/gpu_check.sh prepare), test fixture (tests/data), torch function
CHAINS = [
    ("rmsnorm", "rmsnorm-3feecfe3", "llama3_8b_001.txt", "export_tiny_llama_2l", rms),
    ("add_rmsnorm", "add_rmsnorm-aeb77c08", "llama3_8b_001.txt", "export_tiny_llama_2l", add_rms),
    ("swiglu", "swiglu-b5058ea8", "llama3_8b_001.txt", "export_tiny_llama_2l", swiglu),
    ("rope", "rope_rotate_half-3bc3ce9c", "llama3_8b_001.txt", "export_tiny_llama_2l", rope),
    ("geglu_tanh", "geglu_tanh-38faf084", "gemma2_l3w_001.txt", "export_gemma2_l3w_2l", geglu_tanh),
    ("layernorm", "layernorm", "gpt2_l3w_001.txt", "export_gpt2_l3w_2l", layernorm),
    ("bias_gelu", "gelu_tanh-82011eea", "gpt2_l3w_001.txt", "export_gpt2_l3w_2l", new_gelu),
    ("softmax", "eager_attention_softmax-104f9fe6", "llama_eager_001.txt", "export_llama_eager_2l", softmax),
]


def listify(x):
    """an op's or a function's outputs as a list"""
    return list(x) if isinstance(x, (tuple, list)) else [x]


def input_names(numerics):
    """fusescan's numerics.json -> the region's input node names, in the functions' order"""
    return re.findall(r"%(\S+) \S+ [a-z0-9]+", numerics["shapes"].split(" -> ")[0])


def load_op(numerics):
    """the module `--emit` wrote (numerics.json says which), imported: registers fusescan::NAME"""
    path = numerics["kernels"]["emitted"].split(" ")[0]
    emit_dir, mod = os.path.dirname(path), os.path.basename(path)[:-3]
    sys.path.insert(0, emit_dir)
    try:
        return __import__(mod)
    finally:
        sys.path.remove(emit_dir)


def symbols_at(op, tokens):
    """the emitted op's symbols at a token count: batch 1, the rest the tokens"""
    names = [s["name"] for s in op.DESC["symbols"]]
    return {n: (tokens if i == len(names) - 1 else 1) for i, n in enumerate(names)}


def shape_dtype(t, s):
    """a descriptor tensor's shape at the symbols' values s, and its dtype"""
    return ([d if isinstance(d, int) else eval(d, {"__builtins__": {}}, s) for d in t["shape"]],
            getattr(torch, t["dtype"].split(".")[-1]))


def traffic(op, tokens):
    """the bytes one call of the op reads and writes at a token count (its inputs and outputs)"""
    s = symbols_at(op, tokens)
    return sum(math.prod(shape) * dtype.itemsize for shape, dtype in
               (shape_dtype(t, s) for t in op.DESC["inputs"] + op.DESC["outputs"]))


def draw_inputs(op, names, tokens, gen):
    """random inputs (uniform in [-2, 2], never all zeros) at a token count:
    (in the functions' order, in the op's order)"""
    s = symbols_at(op, tokens)
    by_node = {}
    for t in op.DESC["inputs"]:
        shape, dtype = shape_dtype(t, s)
        by_node[t["node"]] = torch.empty(shape, device="cuda", dtype=dtype).uniform_(-2, 2, generator=gen)
    return [by_node[n] for n in names], [by_node[t["node"]] for t in op.DESC["inputs"]]
