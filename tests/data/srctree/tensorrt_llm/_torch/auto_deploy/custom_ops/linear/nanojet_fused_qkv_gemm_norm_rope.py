# fusescan test fixture: NanoJet's op, defined only where nanojet imports.
import torch


def register() -> bool:
    @torch.library.custom_op("auto_deploy::nanojet_fused_qkv_gemm_norm_rope", mutates_args=())
    def nanojet_fused_qkv_gemm_norm_rope(x: torch.Tensor) -> torch.Tensor:
        return x

    return True
