# Interleaved (GPT-J style) RoPE: x*cos + flatten(stack(-x_odd, x_even))*sin. The halves are
# the even and odd elements of the last dim, which exports write as -1 or as its index, after
# full-range slices of the leading dims (x[:, :, :, ::2]).
pattern rope_interleaved
description interleaved RoPE on one tensor
replace auto_deploy.torch_rope_with_qk_interleaving.default
catalog rope_interleaved

variant stack
input x
input cos
input sin
node xc        aten\.mul\.Tensor                  (x, cos)      commutative
optional ea    aten\.slice\.Tensor                (x, _, 0, 9223372036854775807)
optional eb    aten\.slice\.Tensor                (ea, _, 0, 9223372036854775807)
node ev        aten\.slice\.Tensor                (eb, $d, 0, _, 2)
optional oa    aten\.slice\.Tensor                (x, _, 0, 9223372036854775807)
optional ob    aten\.slice\.Tensor                (oa, _, 0, 9223372036854775807)
node od        aten\.slice\.Tensor                (ob, $d, 1, _, 2)
node ng        aten\.neg\.default                 (od)
node st        aten\.stack\.default               ([ng, ev], -1)
node fl        aten\.(flatten\.using_ints|view\.default|reshape\.default)   (st, ...)
node xs        aten\.mul\.Tensor                  (fl, sin)     commutative
node out       aten\.add\.Tensor                  (xc, xs)      commutative
output out

# run_decompositions() writes stack as unsqueeze + cat and flatten as view
variant decomposed
input x
input cos
input sin
node xc        aten\.mul\.Tensor                  (x, cos)      commutative
optional ea    aten\.slice\.Tensor                (x, _, 0, 9223372036854775807)
optional eb    aten\.slice\.Tensor                (ea, _, 0, 9223372036854775807)
node ev        aten\.slice\.Tensor                (eb, $d, 0, _, 2)
optional oa    aten\.slice\.Tensor                (x, _, 0, 9223372036854775807)
optional ob    aten\.slice\.Tensor                (oa, _, 0, 9223372036854775807)
node od        aten\.slice\.Tensor                (ob, $d, 1, _, 2)
node ng        aten\.neg\.default                 (od)
node un        aten\.unsqueeze\.default           (ng, _)
node ue        aten\.unsqueeze\.default           (ev, _)
node st        aten\.cat\.default                 ([un, ue], -1)
node fl        aten\.(flatten\.using_ints|view\.default|reshape\.default|_unsafe_view\.default)   (st, ...)
node xs        aten\.mul\.Tensor                  (fl, sin)     commutative
node out       aten\.add\.Tensor                  (xc, xs)      commutative
output out
