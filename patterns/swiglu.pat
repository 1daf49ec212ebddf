# The SwiGLU MLP: down(silu(gate(x)) * up(x)), as match_swiglu_pattern sees it; after
# run_decompositions() each linear is mm(view(x), permute(w)) and silu is x * sigmoid(x)
# in fp32 between casts.
# Discovery's swiglu regions are the gate alone (silu(g) * u between the GEMMs): one match
# of this pattern covers such a region, so every region discovery names swiglu is a site
# this pattern counts, and the other way round. Where the gate and up projections are one
# product split in halves (narrow, split, chunk), the gate is counted without the GEMMs.
pattern swiglu
description SwiGLU MLP: two GEMMs on one input, silu, mul, the down GEMM
replace auto_deploy.torch_swiglu_mlp.default
catalog swiglu

variant export
input x
input wg
input wu
input wd
node gate      aten\.(linear|mm|matmul)\.default|auto_deploy\.torch_linear_simple\.default   (x, wg, ...)
node up        aten\.(linear|mm|matmul)\.default|auto_deploy\.torch_linear_simple\.default   (x, wu, ...)
node act       aten\.silu\.default                (gate)
node prod      aten\.mul\.Tensor                  (act, up)     commutative
node down      aten\.(linear|mm|matmul)\.default|auto_deploy\.torch_linear_simple\.default   (prod, wd, ...)
output down

variant decomposed
input x
input wg
input wu
input wd
node xg        aten\.(view|_unsafe_view|reshape)\.default   (x, _)
node wgt       aten\.(permute|t)\.default        (wg, ...)
node gate      aten\.mm\.default                 (xg, wgt)
node g3        aten\.(view|_unsafe_view)\.default   (gate, _)
optional up32  aten\._to_copy\.default           (g3, ...)
node sg        aten\.sigmoid\.default            (up32)
node act       aten\.mul\.Tensor                 (up32, sg)    commutative
optional dn    aten\._to_copy\.default           (act, ...)
node xu        aten\.(view|_unsafe_view|reshape)\.default   (x, _)
node wut       aten\.(permute|t)\.default        (wu, ...)
node upm       aten\.mm\.default                 (xu, wut)
node u3        aten\.(view|_unsafe_view)\.default   (upm, _)
node prod      aten\.mul\.Tensor                 (dn, u3)      commutative
node pv        aten\.(view|_unsafe_view|reshape)\.default   (prod, _)
node wdt       aten\.(permute|t)\.default        (wd, ...)
node down      aten\.mm\.default                 (pv, wdt)
output down

# silu of one half times the other half of one gate/up product
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

# The gate alone where the down projection is not the one match_swiglu_pattern sees (an
# expert's or a shared expert's MLP, flattened tokens): silu(gate GEMM) * up GEMM
variant gate
node gm        aten\.(linear|mm|matmul|bmm|addmm)\.default|auto_deploy\.torch_linear_simple\.default   (...)
optional gv    aten\.(view|_unsafe_view|reshape)\.default   (gm, ...)
node um        aten\.(linear|mm|matmul|bmm|addmm)\.default|auto_deploy\.torch_linear_simple\.default   (...)
optional uv    aten\.(view|_unsafe_view|reshape)\.default   (um, ...)
node act       aten\.silu\.default                (gv)
node out       aten\.mul\.Tensor                  (act, uv)     commutative
output out
where gm != um

variant gate_decomposed
node gm        aten\.(linear|mm|matmul|bmm|addmm)\.default|auto_deploy\.torch_linear_simple\.default   (...)
optional gv    aten\.(view|_unsafe_view|reshape)\.default   (gm, ...)
optional g32   aten\._to_copy\.default            (gv, ...)
node sg        aten\.sigmoid\.default             (g32)
node act       aten\.mul\.Tensor                  (g32, sg)     commutative
optional dn    aten\._to_copy\.default            (act, ...)
node um        aten\.(linear|mm|matmul|bmm|addmm)\.default|auto_deploy\.torch_linear_simple\.default   (...)
optional uv    aten\.(view|_unsafe_view|reshape)\.default   (um, ...)
node out       aten\.mul\.Tensor                  (dn, uv)      commutative
output out
where gm != um
