# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("fuse_nanojet_gemm_fp8_add")
class FuseNanojet(BaseTransform):
    pass
