# fusescan test fixture: SiLU * mul ops; a registered op may call another.
import torch


@torch.library.custom_op("auto_deploy::flashinfer_silu_and_mul", mutates_args=())
def flashinfer_silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    return x


@torch.library.custom_op("auto_deploy::trtllm_silu_and_mul", mutates_args=())
def trtllm_silu_and_mul(x: torch.Tensor, scale=None, out_dtype=None) -> torch.Tensor:
    return torch.ops.trtllm.silu_and_mul(x, scale=scale, dtype=None)
