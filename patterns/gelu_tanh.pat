# The tanh GELU written out in elementwise ops, as GPT-2's gelu_new prints:
#   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  ==  aten.gelu(x, approximate='tanh')
pattern gelu_tanh
description tanh-approximated GELU written out (gelu_new)
replace aten.gelu.default
catalog gelu_tanh

input x
node half      aten\.mul\.(Tensor|Scalar)         (x, 0.5)      commutative
node cube      aten\.pow\.Tensor_Scalar           (x, 3)
node cubec     aten\.mul\.(Tensor|Scalar)         (cube, $c)    commutative
node inner     aten\.add\.Tensor                  (x, cubec)    commutative
node scaled    aten\.mul\.(Tensor|Scalar)         (inner, $k)   commutative
node th        aten\.tanh\.default                (scaled)
node one       aten\.add\.(Tensor|Scalar)         (th, 1)       commutative
node out       aten\.mul\.Tensor                  (half, one)   commutative
output out
where $c in [0.0447, 0.0448]
where $k in [0.7978, 0.7979]
