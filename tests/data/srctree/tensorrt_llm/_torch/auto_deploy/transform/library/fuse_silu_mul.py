# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("fuse_silu_mul")
class FuseSiluMul(BaseTransform):
    pass
