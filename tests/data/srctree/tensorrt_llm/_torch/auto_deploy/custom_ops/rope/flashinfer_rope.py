# fusescan test fixture: FlashInfer's RoPE op.
import torch


@torch.library.custom_op("auto_deploy::flashinfer_rope", mutates_args=())
def apply_rope_with_input_pos_flashinfer(q, k, position_ids, cos_sin_cache, is_neox: bool = True):
    return q, k
