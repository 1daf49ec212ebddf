# fusescan test fixture: the reference RoPE ops.
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


@torch.library.custom_op("auto_deploy::torch_rope_with_explicit_cos_sin", mutates_args=())
def torch_apply_rope_with_explicit_cos_sin(q, k, cos, sin, unsqueeze_dim: int = 1):
    return q, k


@torch.library.custom_op("auto_deploy::torch_rope_with_qk_interleaving", mutates_args=())
def torch_apply_rope_with_qk_interleaving(q, k, cos, sin, unsqueeze_dim: int = 1):
    q = q.unflatten(-1, (-1, 2)).transpose(-1, -2).reshape_as(q)
    k = k.unflatten(-1, (-1, 2)).transpose(-1, -2).reshape_as(k)
    return q, k
