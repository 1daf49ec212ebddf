# A GEMM epilogue: bias add and an activation after a GEMM (GPT-2's c_fc, BERT's
# intermediate). The bias is inside addmm / linear, or a separate add.
pattern gemm_bias_act
description GEMM + bias + activation
replace fusescan.gemm_bias_act.default
catalog gemm_bias_act

variant addmm
input b
input x
input w
node g         aten\.addmm\.default               (b, x, w, ...)
optional gv    aten\.(view|reshape|_unsafe_view)\.default   (g, ...)
node act       aten\.(gelu|relu|silu|sigmoid|tanh)\.default   (gv, ...)
output act

variant linear
input x
input w
input b
node g         aten\.linear\.default|auto_deploy\.torch_linear_simple\.default   (x, w, b)
node act       aten\.(gelu|relu|silu|sigmoid|tanh)\.default   (g, ...)
output act

variant add
input x
input w
input b
node g         aten\.(linear|mm|matmul)\.default|auto_deploy\.torch_linear_simple\.default   (x, w, ...)
optional gv    aten\.(view|reshape|_unsafe_view)\.default   (g, ...)
node ba        aten\.add\.Tensor                  (gv, b)       commutative
node act       aten\.(gelu|relu|silu|sigmoid|tanh)\.default   (ba, ...)
output act
