#!/usr/bin/env python3
"""Discovery on architectures beyond Llama: GPT-2, Gemma 2, Llama with eager
attention, Mixtral, Qwen2, Cohere, GPT-J, OLMo 2, gpt-oss, DeepSeek-V3, Qwen2-MoE, Llama 4, Mamba 2, Bamba,
Phi-3, Qwen3, Qwen3-Next, MiniMax, Falcon, StableLM and GPT-NeoX, 2 layers each, exported from their
default configs by scripts/export_dumps.py (tests/data/export_*_2l), with
counts derived from the architectures' definitions.

usage: check_archs.py FUSESCAN TESTS_DIR
Both flavours of every dump (torch.export and decomposed) must name the same
chains with the same instance counts and kernels, and give the same pattern
match counts; every catalog-named chain's total count must be the same in both
flavours. Exit 1 on a mismatch.
"""
import json, subprocess, sys

from tally import Tally

L = 2
EXPECT = {
    'gpt2': {
        'eager_attention_softmax': ([L], 'auto_deploy.torch_attention_sdpa'),
        'gelu_tanh': ([L], 'gelu'),
        # residual adds into ln_2 / the next ln_1 (grouped), into ln_f, and wte + wpe into ln_1:
        # 2 a layer + 1
        'add_layernorm': ([1, 1, 2 * L - 1], None),
    },
    'gemma2': {
        'eager_attention_softcap': ([L], 'auto_deploy.torch_attention'),
        'gemma_rmsnorm': ([4 * L + 1], None),
        # residual sums into the pre-feed-forward norm and the next layer's input norm
        'add_gemma_rmsnorm': ([2 * L], None),
        'logit_softcap': ([1], None),
        'geglu_tanh': ([L], 'auto_deploy.gelu_tanh_and_mul'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
    'mixtral': {
        'rmsnorm': ([2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
    'qwen2': {
        'rmsnorm': ([2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'add_rmsnorm': ([2 * L], 'auto_deploy.flashinfer_fused_add_rms_norm_inplace'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
    # LayerNorm written out by hand (mean-centred, no bias), one per layer (attention and MLP in
    # parallel) + the final norm: never split into a centring part and an RMSNorm-shaped tail
    # interleaved RoPE (stack of -x[1::2], x[::2], flattened) on q and k
    'cohere': {
        'layernorm': ([L + 1], 'layer_norm'),
        'eager_attention_softmax': ([L], 'auto_deploy.torch_attention_sdpa'),
        'rope_interleaved': ([2 * L], None),
        # each layer's residual sum (x + attention + MLP) into the next LayerNorm, kept
        'add_layernorm': ([L], None),
    },
    # interleaved RoPE on the rotary part of q and k (x[:, :, :, :rotary_dim], full-range
    # slices in front of the strided ones), the rest concatenated back
    # (parallel block: each layer's residual sum into the next ln_1 or ln_f)
    'gptj': {'rope_interleaved': ([2 * L], None),
             'add_layernorm': ([1] * L, None)},
    # post-norm: the norms of the attention and MLP outputs, each followed by the residual add
    # (2 a layer, named with their add); q_norm and k_norm (2 a layer) and the final norm; the
    # last post-norm's add into the final norm must not make them Gemma's (1 + w) norm
    'olmo2': {
        'rmsnorm_add': ([2 * L], None),
        'rmsnorm': ([1, 2 * L], 'auto_deploy.flashinfer_rms_norm'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
    # MLA: input, post-attention, q_a and kv_a norms, 4 a layer + the final norm
    'deepseek_v3': {'rmsnorm': ([4 * L + 1], 'auto_deploy.flashinfer_rms_norm')},
    # MoE with a shared expert: 2 norms a layer + the final norm
    'qwen2_moe': {
        'rmsnorm': ([2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
    # input and post-attention RMSNorms + the final one; q and k normed without a weight
    # (Llama4TextL2Norm: mean, not sum, so not AutoDeploy's l2norm)
    'llama4': {
        'rmsnorm': ([2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'unweighted_rmsnorm': ([2 * L], 'auto_deploy.flashinfer_rms_norm'),
    },
    # state-space layers: the block's RMSNorm and the mixer's gated RMSNorm (rmsnorm(y * silu(z))
    # * w), one of each a layer, + the final norm; silu written as z * sigmoid(z) once decomposed
    'mamba2': {
        'rmsnorm': ([1, L], 'auto_deploy.flashinfer_rms_norm'),
        'gated_rmsnorm': ([L], 'auto_deploy.triton_rmsnorm_gated'),
    },
    # hybrid (default config: both layers Mamba 2): input and feed-forward norms, 2 a layer + 1
    'bamba': {
        'rmsnorm': ([2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'gated_rmsnorm': ([L], 'auto_deploy.triton_rmsnorm_gated'),
    },
    # attention sinks (a softmax a layer); MoE experts' clamped SwiGLU, one a layer (experts batched); 2 norms a layer + the final
    # one, whose casts join the experts' sum and residual add before it (a signature of its own)
    'gpt_oss': {
        'softmax_sinks': ([L], 'auto_deploy.torch_attention'),
        'clamped_swiglu': ([L], None),
        'rmsnorm': ([1, 2 * L], 'auto_deploy.flashinfer_rms_norm'),
    },
    # linear attention (gated delta net, both layers of the default pattern): q and k L2-normed
    # (x * rsqrt(sum(x^2) + eps)), 2 a layer; the output's gated RMSNorm, normalising before
    # the gate (rmsnorm(x) * w * silu(z)), 1 a layer
    'qwen3_next': {
        'l2norm': ([2 * L], 'auto_deploy.fla_l2norm'),
        'gated_rmsnorm': ([L], 'auto_deploy.triton_rmsnorm_gated'),
        # zero-centred (1 + w) RMSNorms: input and post-attention, 2 a layer, + the final one
        # (which must not stay with the experts' sum before it)
        'gemma_rmsnorm': ([2 * L + 1], None),
    },
    # MiniMax: input and post-attention norms (2 a layer), the lightning-attention layer's
    # output norm (layer 1 of the default layer types) and the final one; RoPE on q and k of
    # the softmax-attention layer (layer 0)
    'minimax': {
        'rmsnorm': ([2 * L + 2], 'auto_deploy.flashinfer_rms_norm'),
        'rope_rotate_half': ([2], 'auto_deploy.flashinfer_rope'),
    },
    # Falcon (7B's layout: one input LayerNorm a layer, parallel attention and MLP; multi-query
    # attention, so q and k RoPE chains differ in shape): 2 a layer
    # each layer's residual sum (x + attention + MLP) into the next LayerNorm or the final one
    'falcon': {'rope_rotate_half': ([L, L], 'auto_deploy.flashinfer_rope'),
               'add_layernorm': ([1] * L, None)},
    # fused QKV and gate/up projections: 2 norms a layer + 1, RoPE on q and k
    'phi3': {
        'rmsnorm': ([2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
    # q_norm and k_norm per head (2 a layer) beside the 2 a layer + 1 of the residual stream
    'qwen3': {
        'rmsnorm': ([2 * L, 2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
    # partial rotary (the rotary part of the head, the rest concatenated back)
    # sequential pre-norm: the residual sums into post_attention_layernorm and the next
    # input_layernorm or the final norm, 2 a layer (the embedding's first; the MLP's
    # inference dropout is no op, so the attention's and the MLP's sums are one signature)
    'stablelm': {'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
                 # (decomposed, the dropout is a clone: a copy, whose sum is a signature of its own)
                 'add_layernorm': ([[1, 2 * L - 1], [1, 1, 2 * L - 2]], None)},
    # parallel residual: each layer's sum into both LayerNorms of the next (one fusion) or the final
    'gpt_neox': {'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
                 'add_layernorm': ([1] * L, None)},
    'llama_eager': {
        'eager_attention_softmax': ([L], 'auto_deploy.torch_attention_sdpa'),
        'rmsnorm': ([2 * L + 1], 'auto_deploy.flashinfer_rms_norm'),
        'add_rmsnorm': ([2 * L], 'auto_deploy.flashinfer_fused_add_rms_norm_inplace'),
        'swiglu': ([L], 'auto_deploy.fused_swiglu_mlp'),
        'rope_rotate_half': ([2 * L], 'auto_deploy.flashinfer_rope'),
    },
}
# names that must not appear: Gemma's (1 + w) norm is not AD's RMSNorm
ABSENT = {'gemma2': ['rmsnorm', 'eager_attention_softmax'], 'qwen3_next': ['rmsnorm'], 'cohere': ['rmsnorm', 'rope_rotate_half'],
          'gptj': ['rope_rotate_half'], 'olmo2': ['gemma_rmsnorm', 'rope_interleaved'],
          'llama4': ['l2norm', 'gemma_rmsnorm'],
          'deepseek_v3': ['gemma_rmsnorm'], 'qwen2_moe': ['gemma_rmsnorm']}
# `fusescan match`: each pattern's own count, the same in both flavours
MATCH = {
    'gpt2': {'eager_attention': L, 'gelu_tanh': L, 'layernorm': 2 * L + 1, 'rmsnorm': 0, 'add_layernorm': 2 * L + 1},
    'gemma2': {'rmsnorm_gemma': 4 * L + 1, 'rmsnorm': 0, 'add_rmsnorm': 0, 'geglu_tanh': L,
               'rope_rotate_half': L, 'eager_attention': 0},  # soft-capped: not AD's eager pattern
    'llama_eager': {'eager_attention': L, 'rmsnorm': 2 * L + 1, 'add_rmsnorm': 2 * L, 'rmsnorm_add': 0,
                    'rope_rotate_half': L, 'rmsnorm_gemma': 0, 'swiglu': L},
    # MoE: the router (its division exported in place, div_) and the experts' fused gate/up
    'mixtral': {'moe_router': L, 'silu_and_mul': L, 'rmsnorm': 2 * L + 1, 'add_rmsnorm': 2 * L},
    # biased QKV projections: addmm once decomposed
    'qwen2': {'parallel_gemm': 2 * L, 'swiglu': L, 'rmsnorm': 2 * L + 1},
    'cohere': {'layernorm': L + 1, 'rmsnorm': 0, 'swiglu': L, 'rope_interleaved': 2 * L, 'rope_rotate_half': 0,
               'add_layernorm': L},
    'gptj': {'layernorm': L + 1, 'rope_interleaved': 2 * L, 'rope_rotate_half': 0, 'add_layernorm': L},
    # the RMSNorm pattern also matches inside each post-norm (as AutoDeploy's would)
    'olmo2': {'rmsnorm_add': 2 * L, 'rmsnorm': 4 * L + 1, 'rmsnorm_gemma': 0, 'rope_rotate_half': L,
              'rope_interleaved': 0},
    'deepseek_v3': {'rmsnorm': 4 * L + 1, 'rmsnorm_gemma': 0},
    'qwen2_moe': {'rmsnorm': 2 * L + 1, 'rmsnorm_gemma': 0, 'rope_rotate_half': L},
    'llama4': {'rmsnorm': 2 * L + 1, 'l2norm': 0},
    'phi3': {'rmsnorm': 2 * L + 1, 'rope_rotate_half': L},
    'qwen3_next': {'l2norm': 2 * L, 'gated_rmsnorm': L, 'rmsnorm_gemma': 2 * L + 1},
    'minimax': {'rmsnorm': 2 * L + 2, 'rope_rotate_half': 1},
    'falcon': {'layernorm': L + 1, 'rope_rotate_half': L, 'add_layernorm': L},
    'gpt_oss': {'softmax_sinks': L, 'clamped_swiglu': L, 'rmsnorm': 2 * L + 1, 'swiglu': 0},
    'qwen3': {'rmsnorm': 4 * L + 1, 'rope_rotate_half': L},
    'stablelm': {'rope_rotate_half': L, 'add_layernorm': 2 * L},
    'gpt_neox': {'rope_rotate_half': L, 'add_layernorm': L},
    # AutoDeploy's RMSNorm pattern also matches the tail of each gated norm (as AD would)
    'mamba2': {'gated_rmsnorm': L, 'rmsnorm': 2 * L + 1},
    'bamba': {'gated_rmsnorm': L, 'rmsnorm': 3 * L + 1},
}


def analyse(exe, path):
    out = subprocess.run([exe, 'discover', '--format', 'json', path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f'fusescan failed on {path} ({out.returncode}):\n{out.stderr}')
    return json.loads(out.stdout)['analyses'][0]


def match_counts(exe, path, kept=False):
    out = subprocess.run([exe, 'match', '--format', 'json', path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f'fusescan match failed on {path} ({out.returncode}):\n{out.stderr}')
    return {r['pattern']: (r['matches'], r['kept']) if kept else r['matches'] for r in json.loads(out.stdout)['results']}


# Library patterns that name the same chains as discovery's catalog entries: discovery's count
# is the pattern's own count, or its count once larger patterns keep their sites (gpt-oss's
# sigmoid gate inside its clamped SwiGLU; OLMo 2's final add + RMSNorm under its post-norm)
SAME_AS_DISCOVERY = ['add_rmsnorm', 'add_layernorm', 'sigmoid_mul', 'l2norm', 'gated_rmsnorm', 'softmax_sinks',
                     'clamped_swiglu', 'rope_interleaved', 'rmsnorm_add']


# Residual sums into the norm after them, per architecture, in total: pre-norm layers have two
# (into the post-attention norm and into the next layer's or the final norm), MoE blocks' sums
# (after the experts' combine) and MiniMax's scaled residual included; OLMo 2 normalises after
# its sublayers, so only its last sum meets a norm (the final). Mamba 2 is left out: its float32
# residual reaches the next norm through two casts, and one of its two sums is named.
TOTALS = {arch: {'add_rmsnorm': 2 * L} for arch in ('mixtral', 'qwen2_moe', 'llama4', 'deepseek_v3', 'bamba', 'phi3',
                                                    'qwen3', 'gpt_oss', 'minimax', 'qwen2', 'llama_eager')}
TOTALS['olmo2'] = {'add_rmsnorm': 1}
TOTALS['qwen3_next'] = {'add_gemma_rmsnorm': 2 * L}


def named_counts(a):
    """every catalog-named chain's instances, summed (unnamed `kind:ops` regions aside, and the
    attention internals of SDPA written out, which the export flavour has as the one SDPA op)"""
    c = {}
    for k in a['candidates']:
        if ':' not in k['name'] and '-' not in k['name'] and k['name'] != 'attention_internals':
            c[k['name']] = c.get(k['name'], 0) + k['instances']
    return c


def main():
    exe, root = sys.argv[1:3]
    t = Tally()
    check = t.check

    for arch, want in EXPECT.items():
        flavours = []
        for dump in ('001_export_export_to_gm.txt', '002_post_export_run_decompositions.txt'):
            path = f'{root}/data/export_{arch}_2l/{dump}'
            a = analyse(exe, path)
            flavours.append(named_counts(a))
            got, kern = {}, {}
            for k in a['candidates']:
                got.setdefault(k['name'], []).append(k['instances'])
                kern.setdefault(k['name'], set()).add(k['existing_kernel']['name'])
            for name, (n, kernel) in want.items():
                ok = sorted(got.get(name, [])) in (n if n and isinstance(n[0], list) else [n])
                check(ok, f'{arch} {dump}: {name} {sorted(got.get(name, []))} != {n}')
                check(kern.get(name) == {kernel}, f'{arch} {dump}: {name} kernel {kern.get(name)} != {kernel}')
            for name in ABSENT.get(arch, []):
                check(name not in got, f'{arch} {dump}: lists {name}')
            m = match_counts(exe, path)
            for pat, n in MATCH[arch].items():
                check(m.get(pat) == n, f'{arch} {dump}: match {pat} {m.get(pat)} != {n}')
            mk, named = match_counts(exe, path, kept=True), named_counts(a)
            for name, n in TOTALS.get(arch, {}).items():
                check(named.get(name, 0) == n, f'{arch} {dump}: {name} {named.get(name, 0)} in all != {n}')
            for pat in SAME_AS_DISCOVERY:
                check(named.get(pat, 0) in mk.get(pat, (0, 0)),
                      f'{arch} {dump}: {pat} discovery {named.get(pat, 0)}, match (own, kept) {mk.get(pat)}')
            if arch == 'gemma2':
                rope = [k for k in a['candidates'] if k['name'] == 'rope_rotate_half']
                check(rope and rope[0]['pairs'] == L, f'{arch} {dump}: rope q/k pairs')
        # every named chain, not only the ones above: the same count in both flavours
        for name in sorted(set(flavours[0]) | set(flavours[1])):
            n = (flavours[0].get(name, 0), flavours[1].get(name, 0))
            check(n[0] == n[1], f'{arch}: {name} {n[0]} in the export flavour, {n[1]} decomposed')
    handwritten(exe, root, check)
    return t.finish()


def handwritten(exe, root, check):
    """tests/data/handwritten: two LayerNorms written out with a bias (w * norm + b, the bias
    a weight) and one without, fed by a residual add of two computed values: the biased ones
    named layernorm with their bias add, the unbiased one without the residual add, which
    with it is add_layernorm; match counts the same"""
    path = f'{root}/data/handwritten/001_export_export_to_gm.txt'
    a = analyse(exe, path)
    ln = sorted((k['instances'], len(k['sites'][0])) for k in a['candidates'] if k['name'] == 'layernorm')
    check(ln == [(1, 9), (2, 10)], f'handwritten: layernorm (instances, nodes) {ln} != [(1, 9), (2, 10)]')
    add = [k['sites'] for k in a['candidates'] if k['name'] == 'add_layernorm']
    check(add == [[add[0][0]]] and 'res' in add[0][0], f'handwritten: add_layernorm {add}')
    m = match_counts(exe, path)
    check(m.get('layernorm') == 3 and m.get('add_layernorm') == 1, f'handwritten: match {m}')


if __name__ == '__main__':
    sys.exit(main())
