# The gate and up GEMMs of a SwiGLU MLP with silu(gate) * up: the epilogue
# over two products reading one input (the down projection not included).
pattern gate_up_swiglu
description gate / up GEMMs + SwiGLU
replace fusescan.gate_up_swiglu.default

variant linear
input x
input wg
input wu
node gate      aten\.linear\.default|auto_deploy\.torch_linear_simple\.default   (x, wg)
node up        aten\.linear\.default|auto_deploy\.torch_linear_simple\.default   (x, wu)
node act       aten\.silu\.default                (gate)
node prod      aten\.mul\.Tensor                  (act, up)     commutative
output prod
