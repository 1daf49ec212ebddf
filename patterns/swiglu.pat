# The SwiGLU MLP: down(silu(gate(x)) * up(x)), as match_swiglu_pattern sees it.
pattern swiglu
description SwiGLU MLP: two GEMMs on one input, silu, mul, the down GEMM
replace auto_deploy.torch_swiglu_mlp.default
catalog swiglu

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
