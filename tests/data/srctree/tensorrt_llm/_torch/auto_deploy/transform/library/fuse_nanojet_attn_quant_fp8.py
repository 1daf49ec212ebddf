# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("fuse_nanojet_attn_quant_fp8")
class FuseNanojet(BaseTransform):
    pass
