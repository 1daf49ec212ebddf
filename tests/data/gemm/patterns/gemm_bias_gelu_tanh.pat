# GPT-2's c_fc: addmm (bias inside) then GELU, the tanh approximation (the
# dump omits approximate=; "tanh" in the pattern's name says it).
pattern gemm_bias_gelu_tanh
description addmm + bias + GELU (tanh)
replace fusescan.gemm_bias_gelu_tanh.default

variant addmm
input b
input x
input w
node g         aten\.addmm\.default               (b, x, w)
node act       aten\.gelu\.default                (g)
output act
