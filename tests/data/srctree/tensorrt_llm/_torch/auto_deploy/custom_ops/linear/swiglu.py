# fusescan test fixture: SwiGLU MLP ops; torch_swiglu_mlp is the reference op.
import torch
import torch.nn.functional as F


def _silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


@torch.library.custom_op("auto_deploy::torch_swiglu_mlp", mutates_args=())
def torch_swiglu_mlp(input, gate_weight, up_weight, down_weight, gate_bias, up_bias, down_bias):
    return input


@torch.library.custom_op("auto_deploy::fused_swiglu_mlp", mutates_args=())
def fused_swiglu_mlp(input, gate_up_weight, down_weight, gate_up_bias, down_bias):
    return input
