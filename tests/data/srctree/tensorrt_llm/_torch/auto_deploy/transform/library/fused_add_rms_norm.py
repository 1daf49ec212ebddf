# fusescan test fixture.
from ...custom_ops.normalization.flashinfer_fused_add_rms_norm import flashinfer_fused_add_rms_norm
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("fuse_add_rms_norm")
class FuseAddRMSNorm(BaseTransform):
    pass
