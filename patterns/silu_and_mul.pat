# silu(x[..., :n]) * x[..., n:] after the gate/up GEMMs were fused: the halves come
# from a narrow, a split or a chunk of one value whose last dim is 2n; after
# run_decompositions() silu is x * sigmoid(x) in fp32 between casts.
# No `catalog swiglu` line: this pattern needs the gate and up halves split from one tensor,
# while discovery's swiglu regions also come from two GEMMs; they are named by their ops.
pattern silu_and_mul
description silu of one half times the other half of a fused gate/up output
replace auto_deploy.flashinfer_silu_and_mul.default

variant narrow
input x
node gate      aten\.narrow\.default|<built-in\smethod\snarrow.*   (x, -1, 0, $n)
node up        aten\.narrow\.default|<built-in\smethod\snarrow.*   (x, -1, $n, $n)
node act       aten\.silu\.default                (gate)
node out       aten\.mul\.Tensor                  (act, up)     commutative
output out
where dim(x, -1) == 2 * dim(gate, -1)

variant split
input x
node parts     aten\.(split_with_sizes|split|chunk)\.default   (x, ...)
node gate      <built-in\sfunction\sgetitem>          (parts, 0)
node up        <built-in\sfunction\sgetitem>          (parts, 1)
node act       aten\.silu\.default                (gate)
node out       aten\.mul\.Tensor                  (act, up)     commutative
output out
where dim(x, -1) == 2 * dim(gate, -1)

variant split_decomposed
input x
node parts     aten\.(split_with_sizes|split|chunk)\.default   (x, ...)
node gate      <built-in\sfunction\sgetitem>          (parts, 0)
node up        <built-in\sfunction\sgetitem>          (parts, 1)
optional g32   aten\._to_copy\.default            (gate, ...)
node sg        aten\.sigmoid\.default             (g32)
node act       aten\.mul\.Tensor                  (g32, sg)     commutative
optional dn    aten\._to_copy\.default            (act, ...)
node out       aten\.mul\.Tensor                  (dn, up)      commutative
output out
where dim(x, -1) == 2 * dim(gate, -1)
