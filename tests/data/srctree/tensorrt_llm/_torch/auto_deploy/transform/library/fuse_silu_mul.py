# fusescan test fixture: a compatibility alias, as some trees have it.
from ..interface import BaseTransform, TransformRegistry
from ._mlir_elementwise_alias import apply_mlir_elementwise_alias


@TransformRegistry.register("fuse_silu_mul")
class FuseSiluMul(BaseTransform):
    def _apply(self, gm, cm, factory, shared_config):
        return apply_mlir_elementwise_alias(self.config, gm, cm, factory, shared_config)
