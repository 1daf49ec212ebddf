# A residual add after a GEMM (o_proj or down_proj + the residual stream):
# cuBLASLt adds it as C with beta 1, so the GEMM's output makes no round trip.
pattern gemm_residual
description GEMM + residual add
replace fusescan.gemm_residual.default

variant linear
input x
input w
input r
node g         aten\.linear\.default|auto_deploy\.torch_linear_simple\.default   (x, w)
node add       aten\.add\.Tensor                  (g, r)        commutative
output add
