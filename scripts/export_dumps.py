#!/usr/bin/env python3
"""Export Hugging Face architectures from their config and write dumps in
AutoDeploy's text format (../shared/REFERENCE.md section 1).

No weights are downloaded: the model is built on the meta device from the
architecture's default config (optionally with fewer layers), exported with
non-strict torch.export with dynamic batch and sequence dims, and printed as

  DIR/001_export_export_to_gm.txt            the exported graph
  DIR/002_post_export_run_decompositions.txt after run_decompositions()

Needs PyTorch and transformers (the GPU machine has both):

  python3 scripts/export_dumps.py --arch gpt2 --layers 2 --out dumps/export_gpt2_2l
  python3 scripts/export_dumps.py --arch llama --layers 2 --quant fp8 --out dumps/fp8_export_llama_2l
  python3 scripts/export_dumps.py --arch gemma2 --out dumps/export_gemma2
  python3 scripts/export_dumps.py --arch gpt2 --layers 2 --set n_embd=4096 \
      --set n_head=32 --set n_inner=14336 --out dumps/export_gpt2_l3w_2l

Architectures: gpt2 (LayerNorm, addmm + tanh GELU), gemma2 (GeGLU-tanh,
(1 + w) RMSNorm, softcapping), llama_eager (Llama with eager attention:
matmul * scale + mask -> softmax), llama (SDPA attention), mixtral (MoE
router and experts), qwen2 (QKV biases), phi3 (fused QKV and gate/up
projections), gpt_neox (parallel residual, partial rotary), falcon.
"""

import argparse
import operator
import os
import sys
import tempfile

ARCHS = {
    # model_type, config overrides, attention implementation
    "gpt2": ("gpt2", {}, "eager"),
    "gemma2": ("gemma2", {}, "eager"),
    "llama_eager": ("llama", {}, "eager"),
    "llama": ("llama", {}, "sdpa"),
    "mixtral": ("mixtral", {}, "sdpa"),
    "qwen2": ("qwen2", {}, "sdpa"),
    "phi3": ("phi3", {}, "sdpa"),
    "gpt_neox": ("gpt_neox", {}, "eager"),
    "falcon": ("falcon", {}, "eager"),
    # beyond the Llama family (norms, RoPE and gates written other ways)
    "cohere": ("cohere", {}, "eager"),             # mean-centred LayerNorm without bias, interleaved RoPE
    "gptj": ("gptj", {}, "eager"),                 # interleaved RoPE (stack + flatten), parallel residual
    "olmo2": ("olmo2", {}, "sdpa"),                # post-norm: norm of the sublayer output, then the add
    "gpt_oss": ("gpt_oss", {"num_local_experts": 4}, "eager"),  # attention sinks, clamped SwiGLU, MoE
    "qwen2_moe": ("qwen2_moe", {"num_experts": 8}, "sdpa"),     # MoE with a shared expert
    "deepseek_v3": ("deepseek_v3", {"n_routed_experts": 8, "first_k_dense_replace": 1, "n_group": 1,
                                    "topk_group": 1}, "eager"),  # MLA, MoE with shared experts
    "mamba2": ("mamba2", {}, "eager"),              # state-space layers, gated RMSNorm
    "qwen3_next": ("qwen3_next", {"num_experts": 16}, "sdpa"),  # linear attention (L2-normed q, k), gated RMSNorm
    "llama4": ("llama4_text", {"num_local_experts": 4}, "sdpa"),  # L2 norm of q and k
    "bamba": ("bamba", {}, "sdpa"),                 # hybrid: Mamba2 layers and attention
    "minimax": ("minimax", {"num_local_experts": 4}, "sdpa"),   # lightning (linear) attention layers
    "qwen3": ("qwen3", {}, "sdpa"),                  # q_norm / k_norm RMSNorms per head
    "stablelm": ("stablelm", {}, "sdpa"),            # LayerNorm, partial rotary
}


def fmt_dim(d):
    return str(d).replace(" ", "") if not isinstance(d, int) else str(d)


def fmt_shape(t):
    if t.dim() == 0:
        return "scalar"
    return "x".join(fmt_dim(d) for d in t.shape)


def fmt_val(val):
    """Output info of one value: (shape, dtype) strings."""
    import torch

    if isinstance(val, torch.Tensor):
        return fmt_shape(val), str(val.dtype)
    if isinstance(val, (torch.SymInt,)):
        return "?", "SymInt"
    if isinstance(val, (torch.SymFloat,)):
        return "?", "SymFloat"
    if isinstance(val, (list, tuple)):
        parts = [fmt_val(v) if v is not None else ("?", "None") for v in val]
        return ("(" + ", ".join(p[0] for p in parts) + ")",
                "(" + ", ".join(p[1] for p in parts) + ")")
    if val is None:
        return "?", "NoneType"
    return "?", type(val).__name__


def node_info(node):
    if "val" not in node.meta:
        return "?", "N/A"
    return fmt_val(node.meta["val"])


def ref_info(node):
    """How a reference to node prints: multi-output nodes print ? : tuple."""
    val = node.meta.get("val")
    if isinstance(val, (list, tuple)):
        return "?", "tuple"
    return node_info(node)


def fmt_arg(a, top):
    import torch.fx as fx

    if isinstance(a, fx.Node):
        if not top:
            return a.name
        shape, dtype = ref_info(a)
        return f"%{a.name} : {shape} : {dtype}"
    if isinstance(a, (list, tuple)):
        inner = ", ".join(fmt_arg(x, False) for x in a)
        if isinstance(a, tuple):
            return "(" + inner + ("," if len(a) == 1 else "") + ")"
        return "[" + inner + "]"
    if isinstance(a, str):
        return a if top else repr(a)
    return str(a)


def fmt_target(node):
    t = node.target
    if node.op == "call_function":
        if t is operator.getitem:
            return "<built-in function getitem>"
        return str(t)
    return str(t)


def print_graph(gm, transform, stage):
    lines = [f"# Transform: {transform}", f"# Stage: {stage}",
             "# GraphModules found: 1", "", "", "=" * 80,
             "# GraphModule: (root)", "=" * 80, ""]
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            continue
        if node.op == "placeholder":
            shape, dtype = node_info(node)
            lines.append(f"%{node.name} : {shape} : {dtype}")
        elif node.op == "output":
            outs = node.args[0]
            if not isinstance(outs, (list, tuple)):
                outs = [outs]
            lines.append("output " + ", ".join(
                "%" + o.name if hasattr(o, "name") else str(o) for o in outs))
        else:
            args = ", ".join(fmt_arg(a, True) for a in node.args)
            shape, dtype = node_info(node)
            lines.append(f"%{node.name} = {fmt_target(node)}({args}) : {shape} : {dtype}")
    return "\n".join(lines) + "\n"


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def build(arch, layers, sets, device="meta"):
    """the architecture's model from its config, bf16, on `device` (meta: no
    weights; a real device: weights drawn by the model's own initialisation
    from torch's current seed)"""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    model_type, overrides, attn = ARCHS[arch]
    cfg = AutoConfig.for_model(model_type, **overrides)
    for key, value in sets:
        if not hasattr(cfg, key):
            raise SystemExit(f"export_dumps: --set {key}: {model_type}'s config has no such field")
        setattr(cfg, key, bool(value) if isinstance(getattr(cfg, key), bool) else value)  # typed configs
    if layers:
        for key in ("num_hidden_layers", "n_layer"):
            if hasattr(cfg, key):
                setattr(cfg, key, layers)
    cfg.use_cache = False
    cfg._attn_implementation = attn
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16,
                                                 attn_implementation=attn)
    model.eval()
    return model, cfg


FP8_SKIP = ("lm_head", "mlp.gate", "block_sparse_moe.gate", "router")  # kept bf16, as FP8 checkpoints keep them


def quantize_fp8(model):
    """every nn.Linear but the LM head and MoE routers swapped for a static
    per-tensor FP8 linear as torchao / transformers write one: weight in
    float8_e4m3fn, 0-d float32 input and weight scales (buffers), forward
    (x / s_in).clamp(-448, 448).to(float8_e4m3fn), then torch._scaled_mm.
    Scales are 1.0: a dump needs their shapes, not their values."""
    import torch

    class StaticFP8Linear(torch.nn.Module):
        def __init__(self, lin):
            super().__init__()
            self.weight = torch.nn.Parameter(lin.weight.detach().to(torch.float8_e4m3fn), requires_grad=False)
            self.bias = lin.bias
            self.register_buffer("input_scale", torch.tensor(1.0, dtype=torch.float32, device=lin.weight.device))
            self.register_buffer("weight_scale", torch.tensor(1.0, dtype=torch.float32, device=lin.weight.device))

        def forward(self, x):
            q = (x / self.input_scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
            out = torch._scaled_mm(q.reshape(-1, q.shape[-1]), self.weight.t(), self.input_scale,
                                   self.weight_scale, self.bias, None, x.dtype)
            return out.reshape(*x.shape[:-1], out.shape[-1])

    for name, mod in list(model.named_modules()):
        for child, lin in list(mod.named_children()):
            full = f"{name}.{child}" if name else child
            if isinstance(lin, torch.nn.Linear) and not any(full.endswith(k) for k in FP8_SKIP):
                setattr(mod, child, StaticFP8Linear(lin))
    return model


def export(model, device, tokens=16):
    """the model exported as AutoDeploy exports it: non-strict, batch and
    sequence dims symbolic, traced at a sequence of `tokens`. Dim.AUTO keeps
    both symbolic and records the guards the model needs (Gemma 2's
    sliding-window mask fails a named Dim's range). A size the model derives
    from the length (a chunk count) is traced at its value for `tokens`:
    where that is 1, the trace may fix it, and the dump then holds only up to
    one chunk."""
    import torch
    from torch.export import Dim

    ids = torch.zeros((2, tokens), dtype=torch.int64, device=device)
    with torch.no_grad():
        return torch.export.export(model, (ids,), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO},), strict=False)


def config_field(text):
    key, eq, value = text.partition("=")
    try:
        return key, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: want KEY=INT") from None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", required=True, choices=sorted(ARCHS))
    ap.add_argument("--layers", type=int, default=0,
                    help="number of decoder layers (default: the config's)")
    ap.add_argument("--set", action="append", default=[], type=config_field, metavar="KEY=INT",
                    help="override a config field (repeatable), e.g. n_embd=4096")
    ap.add_argument("--trace-tokens", type=int, default=16, metavar="N",
                    help="the sequence length traced, 2 to 65536 (default 16); past a chunk's length "
                         "(256 for Mamba 2, Bamba and MiniMax, 64 for Qwen3-Next) the chunk count stays symbolic")
    ap.add_argument("--quant", choices=["fp8"],
                    help="quantize the linears first: fp8 = static per-tensor FP8 written out "
                         "(div, clamp, to(float8_e4m3fn), torch._scaled_mm; docs/fp8.md)")
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args()
    if not 2 <= args.trace_tokens <= 65536:
        ap.error(f"--trace-tokens {args.trace_tokens}: want 2 to 65536")

    model, cfg = build(args.arch, args.layers, args.set)
    if args.quant == "fp8":
        model = quantize_fp8(model)
    ep = export(model, "meta", args.trace_tokens)
    os.makedirs(args.out, exist_ok=True)
    write_atomic(os.path.join(args.out, "001_export_export_to_gm.txt"),
                 print_graph(ep.module(), "export_to_gm", "export"))
    dec = ep.run_decompositions()
    write_atomic(os.path.join(args.out, "002_post_export_run_decompositions.txt"),
                 print_graph(dec.module(), "run_decompositions", "post_export"))
    print(f"{args.arch}: {cfg.model_type}, {getattr(cfg, 'num_hidden_layers', '?')} layers,"
          f" hidden {getattr(cfg, 'hidden_size', '?')} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
