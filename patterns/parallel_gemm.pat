# Two GEMMs reading one input (QKV, gate/up): fuse_gemms turns them into one GEMM on the
# concatenated weight and a split. One match is a pair; QKV gives one pair and a third GEMM.
# Biased projections (Qwen2's QKV) decompose to addmm(bias, x, w).
pattern parallel_gemm
description two GEMMs sharing their input
catalog parallel_gemm

variant gemm
input x
input w1
input w2
optional xv1   aten\.view\.default                (x, ...)
optional xv2   aten\.view\.default                (x, ...)
node g1        aten\.(linear|mm|matmul)\.default|auto_deploy\.torch_linear_simple\.default   (xv1, w1, ...)
node g2        aten\.(linear|mm|matmul)\.default|auto_deploy\.torch_linear_simple\.default   (xv2, w2, ...)
output g1, g2

variant addmm
input x
input b1
input b2
input w1
input w2
optional xv1   aten\.view\.default                (x, ...)
optional xv2   aten\.view\.default                (x, ...)
node g1        aten\.addmm\.default               (b1, xv1, w1, ...)
node g2        aten\.addmm\.default               (b2, xv2, w2, ...)
output g1, g2

# matmul decomposed: bmm on 3-d views of the shared operand (expanded first where it broadcasts)
variant batched
input x
input w1
input w2
optional e1    aten\.(expand|view|_unsafe_view|reshape)\.default   (x, ...)
optional v1    aten\.(view|_unsafe_view|reshape)\.default   (e1, ...)
optional e2    aten\.(expand|view|_unsafe_view|reshape)\.default   (x, ...)
optional v2    aten\.(view|_unsafe_view|reshape)\.default   (e2, ...)
node g1        aten\.bmm\.default                 (v1, w1)
node g2        aten\.bmm\.default                 (v2, w2)
output g1, g2
