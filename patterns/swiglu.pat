# The SwiGLU MLP: down(silu(gate(x)) * up(x)), as match_swiglu_pattern sees it; after
# run_decompositions() each linear is mm(view(x), permute(w)) and silu is x * sigmoid(x)
# in fp32 between casts.
# No `catalog swiglu` line: this pattern spans the three GEMMs, while discovery's swiglu
# regions are the gate alone (silu(g) * u between the GEMMs), named by their ops.
pattern swiglu
description SwiGLU MLP: two GEMMs on one input, silu, mul, the down GEMM
replace auto_deploy.torch_swiglu_mlp.default

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
