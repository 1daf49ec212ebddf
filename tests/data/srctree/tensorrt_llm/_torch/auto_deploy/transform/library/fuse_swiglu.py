# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("match_swiglu_pattern")
class MatchSwiGLUPattern(BaseTransform):
    pass


@TransformRegistry.register("fuse_swiglu")
class FuseSwiGLU(BaseTransform):
    pass
