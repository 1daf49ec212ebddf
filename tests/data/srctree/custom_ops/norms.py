# fusescan test fixture: registrations in the forms TensorRT-LLM uses.
import torch


@torch.library.custom_op("auto_deploy::torch_rmsnorm", mutates_args=())
def torch_rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return x


@torch.library.custom_op(
    "auto_deploy::flashinfer_fused_add_rms_norm", mutates_args=("residual",)
)
def fused_add_rms_norm(x, residual, w, eps):
    return x


torch.library.define("auto_deploy::torch_attention_repeat_kv", "(Tensor kv, int n_rep) -> Tensor")
