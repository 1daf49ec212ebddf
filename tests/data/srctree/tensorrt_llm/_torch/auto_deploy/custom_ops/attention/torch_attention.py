# fusescan test fixture: reference attention ops, one defined by schema.
import torch

torch.library.define("auto_deploy::torch_attention_repeat_kv", "(Tensor kv, int n_rep) -> Tensor")


@torch.library.custom_op("auto_deploy::torch_attention_sdpa", mutates_args=())
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0):
    return query


@torch.library.custom_op("auto_deploy::torch_attention", mutates_args=())
def torch_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0):
    return query
