# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("mlir_elementwise_fusion")
class MLIRElementwiseFusion(BaseTransform):
    pass
