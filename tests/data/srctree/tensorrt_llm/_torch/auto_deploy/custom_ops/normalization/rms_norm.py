# fusescan test fixture, in TensorRT-LLM's layout: RMSNorm ops registered as
# tensorrt_llm/_torch/auto_deploy/custom_ops/normalization/rms_norm.py does.
import torch


@torch.library.custom_op("auto_deploy::flashinfer_rms_norm", mutates_args=())
def flashinfer_rmsnorm(input: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return input


@flashinfer_rmsnorm.register_fake
def _(input: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(input)


@torch.library.custom_op("auto_deploy::triton_rms_norm", mutates_args=())
def triton_rmsnorm(input: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return input


@torch.library.custom_op("auto_deploy::torch_rmsnorm", mutates_args=())
def torch_rmsnorm(input: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    input = input.to(torch.float32)
    variance = input.pow(2).mean(-1, keepdim=True)
    return weight * (input * torch.rsqrt(variance + eps))


@torch.library.custom_op("auto_deploy::torch_rmsnorm_gated", mutates_args=())
def torch_rmsnorm_gated(x, weight, gate, eps: float, group_size: int, norm_before_gate: bool = False):
    return x


@torch.library.custom_op("auto_deploy::triton_rmsnorm_gated", mutates_args=())
def triton_rmsnorm_gated(x, weight, gate, eps: float, group_size: int, norm_before_gate: bool = False):
    return x
