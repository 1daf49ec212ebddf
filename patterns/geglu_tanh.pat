# GeGLU with the tanh GELU (Gemma): gelu(gate, approximate='tanh') * up. Dumps never print
# keyword arguments, so the composite variant cannot tell tanh from exact GELU; the
# decomposed variant matches the tanh formula itself.
pattern geglu_tanh
description gelu_tanh(gate) * up
replace auto_deploy.gelu_tanh_and_mul.default
catalog geglu_tanh

variant composite
input gate
input up
node act       aten\.gelu\.default                (gate, ...)
node out       aten\.mul\.Tensor                  (act, up)     commutative
output out

variant decomposed
input gate
input up
node half      aten\.mul\.(Tensor|Scalar)         (gate, 0.5)   commutative
node cube      aten\.pow\.Tensor_Scalar           (gate, 3)
node cubec     aten\.mul\.(Tensor|Scalar)         (cube, $c)    commutative
node inner     aten\.add\.Tensor                  (gate, cubec) commutative
node scaled    aten\.mul\.(Tensor|Scalar)         (inner, $k)   commutative
node th        aten\.tanh\.default                (scaled)
node one       aten\.add\.(Tensor|Scalar)         (th, 1)       commutative
node act       aten\.mul\.Tensor                  (half, one)   commutative
node out       aten\.mul\.Tensor                  (act, up)     commutative
output out
where $c in [0.0447, 0.0448]
where $k in [0.7978, 0.7979]
