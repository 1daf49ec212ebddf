# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("fuse_nanojet_swiglu_gemm_fp8")
class FuseNanojet(BaseTransform):
    pass
