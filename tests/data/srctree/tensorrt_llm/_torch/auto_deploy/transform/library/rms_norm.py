# fusescan test fixture: transform registrations as transform/library/*.py write them.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("match_rmsnorm_pattern")
class MatchRMSNormPattern(BaseTransform):
    pass


@TransformRegistry.register("fuse_rmsnorm")
class FuseRMSNorm(BaseTransform):
    pass
