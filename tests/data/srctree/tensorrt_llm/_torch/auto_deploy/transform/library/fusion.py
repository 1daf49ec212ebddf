# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register('fuse_gemms')
class FuseGemms(BaseTransform):
    pass


@TransformRegistry.register("fuse_fp8_gemms")
class FuseFP8Gemms(BaseTransform):
    pass


@TransformRegistry.register("fuse_fp4_gemms")
class FuseFP4Gemms(BaseTransform):
    pass


@TransformRegistry.register("fuse_gemms_mixed_children")
class FuseGemmsMixedChildren(BaseTransform):
    pass
