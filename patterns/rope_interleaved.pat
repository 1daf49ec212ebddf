# Interleaved (GPT-J style) RoPE: x*cos + flatten(stack(-x_odd, x_even))*sin.
pattern rope_interleaved
description interleaved RoPE on one tensor
replace auto_deploy.torch_rope_with_qk_interleaving.default

input x
input cos
input sin
node xc        aten\.mul\.Tensor                  (x, cos)      commutative
node ev        aten\.slice\.Tensor                (x, -1, 0, _, 2)
node od        aten\.slice\.Tensor                (x, -1, 1, _, 2)
node ng        aten\.neg\.default                 (od)
node st        aten\.stack\.default               ([ng, ev], -1)
node fl        aten\.(flatten\.using_ints|view\.default|reshape\.default)   (st, ...)
node xs        aten\.mul\.Tensor                  (fl, sin)     commutative
node out       aten\.add\.Tensor                  (xc, xs)      commutative
output out
