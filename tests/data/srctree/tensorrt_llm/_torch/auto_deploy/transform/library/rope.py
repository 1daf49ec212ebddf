# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("match_rope_pattern")
class MatchRopePattern(BaseTransform):
    pass


@TransformRegistry.register("optimize_rope")
class OptimizeRope(BaseTransform):
    pass
