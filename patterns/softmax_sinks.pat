# Softmax with attention sinks (gpt-oss): a learned per-head logit is concatenated to the
# scores, the row max taken over both, the softmax computed, and the sink column dropped.
# AutoDeploy's torch_attention takes the sinks as an argument.
pattern softmax_sinks
description softmax over the scores and a per-head sink logit, the sink column dropped
catalog softmax_sinks

input s
input sinks
node ct        aten\.cat\.default                 ([s, sinks], -1)
node mx        aten\.(max\.dim|amax\.default)     (ct, -1, True)  shared
optional gi    <built-in\sfunction\sgetitem>      (mx, 0)
node sb        aten\.sub\.Tensor                  (ct, gi)
node sm        aten\.(softmax\.int|_softmax\.default)   (sb, -1, ...)
node sl        aten\.slice\.Tensor                (sm, _, 0, -1)
node out       aten\.(dropout\.default|clone\.default)  (sl, ...)
output out
