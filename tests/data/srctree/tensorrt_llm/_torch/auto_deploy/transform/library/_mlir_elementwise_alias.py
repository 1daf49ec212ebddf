# fusescan test fixture: the helper legacy elementwise transform names run.
from .mlir_elementwise_fusion import MLIRElementwiseFusion, MLIRElementwiseFusionConfig


def apply_mlir_elementwise_alias(config, gm, cm, factory, shared_config):
    """Run ``mlir_elementwise_fusion`` for a legacy elementwise transform name."""
    return MLIRElementwiseFusion(MLIRElementwiseFusionConfig(stage=config.stage))._apply(gm, cm, factory, shared_config)
