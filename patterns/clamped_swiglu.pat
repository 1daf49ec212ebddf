# gpt-oss's clamped SwiGLU: the gate clamped from above and the up half on both sides at the
# same limit, then (up + 1) * gate * sigmoid(alpha * gate). One kernel after the gate/up GEMM.
pattern clamped_swiglu
description clamped SwiGLU: (clamp(up, -l, l) + 1) * g * sigmoid(alpha * g), g = clamp(gate, max=l)
catalog clamped_swiglu

input gate
input up
node g         aten\.clamp\.default               (gate, None, $limit)
node u         aten\.clamp\.default               (up, _, $limit)
node ga        aten\.mul\.Tensor                  (g, $alpha)
node sg        aten\.sigmoid\.default             (ga)
node glu       aten\.mul\.Tensor                  (g, sg)       commutative
node u1        aten\.add\.Tensor                  (u, 1)
node out       aten\.mul\.Tensor                  (u1, glu)     commutative
output out
