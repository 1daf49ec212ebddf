# fusescan test fixture: the registered op is the in-place one; the function
# fuse_add_rms_norm inserts is a Python wrapper over it, not a registered op.
import torch


@torch.library.custom_op(
    "auto_deploy::flashinfer_fused_add_rms_norm_inplace", mutates_args={"x", "residual"}
)
def flashinfer_fused_add_rms_norm_inplace(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> None:
    return


@flashinfer_fused_add_rms_norm_inplace.register_fake
def _(x, residual, weight, eps):
    return


def flashinfer_fused_add_rms_norm(x, residual, weight, eps):
    """Wrapper that calls the in-place op and returns the modified tensors."""
    torch.ops.auto_deploy.flashinfer_fused_add_rms_norm_inplace(x, residual, weight, eps)
    return x, residual
