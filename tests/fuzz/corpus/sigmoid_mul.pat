# A sigmoid gate times another value: Mamba's and Qwen3-Next's output gates, MiniMax's
# attention gate. x * sigmoid(x) is SiLU (run_decompositions() writes silu that way), not a
# gate: the two operands must be different values. Casts around it are free.
pattern sigmoid_mul
description sigmoid(g) * x, x another value than g
replace auto_deploy.fused_sigmoid_mul.default
catalog sigmoid_mul

input g
input x
node sg        aten\.sigmoid\.default             (g)
node out       aten\.mul\.Tensor                  (sg, x)       commutative
output out
where g != x
