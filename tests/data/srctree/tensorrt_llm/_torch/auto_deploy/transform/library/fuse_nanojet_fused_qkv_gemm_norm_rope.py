# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("fuse_nanojet_fused_qkv_gemm_norm_rope")
class FuseNanojet(BaseTransform):
    pass
