# fusescan test fixture.
from ..interface import BaseTransform, TransformRegistry


@TransformRegistry.register("match_repeat_kv")
class MatchRepeatKV(BaseTransform):
    pass


@TransformRegistry.register("match_eager_attention")
class MatchEagerAttention(BaseTransform):
    pass


@TransformRegistry.register("match_sdpa_to_torch_attention")
class MatchSdpaToTorchAttention(BaseTransform):
    pass


@TransformRegistry.register("match_grouped_attention")
class MatchGroupedAttention(BaseTransform):
    pass


@TransformRegistry.register("match_attention_layout")
class MatchAttentionLayout(BaseTransform):
    pass
