#!/usr/bin/env python3
"""Write the FP8 fixtures under tests/data from the bf16 ones, with no torch.

Each bf16 linear of a fixture (every one but the LM head and the MoE router) is
rewritten as an FP8 checkpoint's graph prints it, in the dump format of the
bf16 file it came from (../shared/REFERENCE.md section 1):

  plain   torch.export of a torchao-style static FP8 linear: the quantization
          written out, (x / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn),
          then torch._scaled_mm(x_fp8, w_fp8.t(), s_in, s_w, bias, None, out_dtype)
          between two reshapes (fp8_export_<arch>_2l)
  ad      AutoDeploy after quantize_fp8_linear_from_config and fuse_fp8_linear
          (backend trtllm): auto_deploy.trtllm_quant_fp8_linear(x, w_fp8, bias,
          input_scale, weight_scale) (fp8_adrun_<arch>_2l)
  fg      fine-grained FP8 (DeepSeek-V3 style): auto_deploy.trtllm_finegrained_fp8_linear
          (x, w_fp8, bias, weight_scale) with one float32 scale per 128 x 128 weight
          block (fp8fg_adrun_<arch>_2l)

Scales are buffers (get_attr nodes, never printed): per linear an input scale
and a weight scale, 0-d float32 (`scalar`), named after the weight. Every
projection has its own input scale, as FP8 checkpoints store them.

  python3 scripts/fp8_fixtures.py            # rewrite the fixtures
  python3 scripts/fp8_fixtures.py --check    # exit 1 if a committed one differs
"""

import argparse
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data")

# (output directory, flavour, source file under tests/data, transform, stage)
FIXTURES = [
    ("fp8_export_tiny_llama_2l", "plain", "export_tiny_llama_2l/001_export_export_to_gm.txt"),
    ("fp8_export_qwen3_2l", "plain", "export_qwen3_2l/001_export_export_to_gm.txt"),
    ("fp8_export_mixtral_2l", "plain", "export_mixtral_2l/001_export_export_to_gm.txt"),
    ("fp8_export_gemma2_2l", "plain", "export_gemma2_2l/001_export_export_to_gm.txt"),
    ("fp8_adrun_tiny_llama_2l", "ad", "adrun_tiny_llama_2l/035_compile_compile_model.txt"),
    ("fp8_adrun_qwen3_2l", "ad", "export_qwen3_2l/001_export_export_to_gm.txt"),
    ("fp8_adrun_mixtral_2l", "ad", "export_mixtral_2l/001_export_export_to_gm.txt"),
    ("fp8_adrun_gemma2_2l", "ad", "export_gemma2_2l/001_export_export_to_gm.txt"),
    ("fp8fg_adrun_deepseek_v3_2l", "fg", "export_deepseek_v3_2l/001_export_export_to_gm.txt"),
]

OUT_FILE = {
    "plain": ("001_export_export_to_gm.txt", None),
    "ad": ("001_post_load_fusion_fuse_fp8_linear.txt", ("fuse_fp8_linear", "post_load_fusion")),
    "fg": ("001_post_load_fusion_fuse_finegrained_fp8_linear.txt",
           ("fuse_finegrained_fp8_linear", "post_load_fusion")),
}

LINEAR = re.compile(
    r"^%(?P<out>\w+) = (?P<op>aten\.linear\.default|auto_deploy\.torch_linear_simple\.default)"
    r"\((?P<x>%\w+) : (?P<xs>[^:]+) : (?P<xd>torch\.\w+), "
    r"%(?P<w>\w+) : (?P<ws>\d+x\d+) : torch\.bfloat16"
    r"(?:, (?P<b>None|%\w+ : \d+ : torch\.\w+))?\) : (?P<os>[^:]+) : (?P<od>torch\.\w+)$")
SYM_SIZE = re.compile(r"^%(\w+) = aten\.sym_size\.int\(%input_ids : [^)]*, (\d)\) :")
FP8 = "torch.float8_e4m3fn"
F32 = "torch.float32"
SKIP = re.compile(r"lm_head|(^|_)mlp_gate_weight$|block_sparse_moe_gate_weight$")


def stem(weight):
    return weight[: -len("_weight")] if weight.endswith("_weight") else weight


def ref(name, shape, dtype):
    return f"%{name} : {shape} : {dtype}"


def flat_shape(shape):
    """'s72xs70x256' -> ('s70*s72', 256): leading dims as sympy prints their product."""
    dims = shape.split("x")
    lead, k = dims[:-1], dims[-1]
    ints = [int(d) for d in lead if d.isdigit()]
    syms = sorted(d for d in lead if not d.isdigit())
    if any(not re.fullmatch(r"s\d+", s) for s in syms):
        raise ValueError(f"leading dims {lead} are not plain symbols")
    c = 1
    for i in ints:
        c *= i
    parts = ([str(c)] if c != 1 or not syms else []) + syms
    return "*".join(parts), int(k)


def bias_arg(m):
    return m.group("b") or "None"


def plain_lines(m, k, sizes):
    """The torchao-style chain for one linear; its last node keeps the linear's name."""
    xs, w, (n, kk) = m.group("xs"), m.group("w"), m.group("ws").split("x")
    s_in, s_w = ref(stem(w) + "_input_scale", "scalar", F32), ref(stem(w) + "_weight_scale", "scalar", F32)
    x = f"{m.group('x')} : {xs} : {m.group('xd')}"
    lines = [
        f"%div_fp8_{k} = aten.div.Tensor({x}, {s_in}) : {xs} : {m.group('xd')}",
        f"%clamp_fp8_{k} = aten.clamp.default({ref(f'div_fp8_{k}', xs, m.group('xd'))}, -448.0, 448.0)"
        f" : {xs} : {m.group('xd')}",
        f"%to_fp8_{k} = aten.to.dtype({ref(f'clamp_fp8_{k}', xs, m.group('xd'))}, {FP8}) : {xs} : {FP8}",
    ]
    a = ref(f"to_fp8_{k}", xs, FP8)
    rows, kdim = flat_shape(xs)
    two_d = len(xs.split("x")) == 2
    if not two_d:
        lines.append(f"%reshape_fp8_{k} = aten.reshape.default({a}, [-1, {kdim}]) : {rows}x{kdim} : {FP8}")
        a = ref(f"reshape_fp8_{k}", f"{rows}x{kdim}", FP8)
    lines.append(f"%t_fp8_{k} = aten.t.default({ref(w, m.group('ws'), FP8)}) : {kk}x{n} : {FP8}")
    mm = f"_scaled_mm_{k}" if not two_d else m.group("out")
    lines.append(f"%{mm} = aten._scaled_mm.default({a}, {ref(f't_fp8_{k}', f'{kk}x{n}', FP8)}, {s_in}, {s_w}, "
                 f"{bias_arg(m)}, None, {m.group('od')}) : {rows}x{n} : {m.group('od')}")
    if not two_d:
        lead = [sizes[i] for i in range(len(xs.split("x")) - 1)]
        lines.append(f"%{m.group('out')} = aten.reshape.default({ref(mm, f'{rows}x{n}', m.group('od'))}, "
                     f"[{', '.join(lead)}, {n}]) : {m.group('os')} : {m.group('od')}")
    return lines


def ad_lines(m, _k, _sizes):
    w = m.group("w")
    x = f"{m.group('x')} : {m.group('xs')} : {m.group('xd')}"
    return [f"%{m.group('out')} = auto_deploy.trtllm_quant_fp8_linear.default({x}, {ref(w, m.group('ws'), FP8)}, "
            f"{bias_arg(m)}, {ref(stem(w) + '_input_scale', 'scalar', F32)}, "
            f"{ref(stem(w) + '_weight_scale', 'scalar', F32)}) : {m.group('os')} : {m.group('od')}"]


def fg_lines(m, _k, _sizes):
    w = m.group("w")
    n, kk = (int(v) for v in m.group("ws").split("x"))
    blocks = f"{-(-n // 128)}x{-(-kk // 128)}"
    x = f"{m.group('x')} : {m.group('xs')} : {m.group('xd')}"
    return [f"%{m.group('out')} = auto_deploy.trtllm_finegrained_fp8_linear.default({x}, "
            f"{ref(w, m.group('ws'), FP8)}, {bias_arg(m)}, {ref(stem(w) + '_weight_scale', blocks, F32)})"
            f" : {m.group('os')} : {m.group('od')}"]


REWRITE = {"plain": plain_lines, "ad": ad_lines, "fg": fg_lines}


def header(lines, names):
    """Rewrites the '# Transform' / '# Stage' lines for a post-load dump."""
    if not names:
        return lines
    out = []
    for line in lines:
        if line.startswith("# Transform: "):
            line = "# Transform: " + names[0]
        elif line.startswith("# Stage: "):
            line = "# Stage: " + names[1]
        out.append(line)
    return out


def convert(text, flavour):
    lines = text.split("\n")
    sizes = {}
    for line in lines:
        s = SYM_SIZE.match(line)
        if s and int(s.group(2)) not in sizes:
            sizes[int(s.group(2))] = s.group(1)
    out, k = [], 0
    for line in header(lines, OUT_FILE[flavour][1]):
        m = LINEAR.match(line)
        if not m or SKIP.search(m.group("w")):
            out.append(line)
            continue
        out.extend(REWRITE[flavour](m, k, sizes))
        k += 1
    if not k:
        raise ValueError("no linear to quantize")
    return "\n".join(out)


def generate():
    """{relative path: text} of every fixture."""
    files = {}
    for name, flavour, src in FIXTURES:
        with open(os.path.join(DATA, src), encoding="utf-8") as f:
            text = f.read()
        files[os.path.join(name, OUT_FILE[flavour][0])] = convert(text, flavour)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed fixtures, write nothing")
    args = ap.parse_args()
    stale = 0
    for rel, text in generate().items():
        path = os.path.join(DATA, rel)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                print(f"{path}: out of date (run scripts/fp8_fixtures.py)", file=sys.stderr)
                stale += 1
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
