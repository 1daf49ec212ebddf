# Post-norm (OLMo 2): the sublayer's output is RMS-normalised, then added to the residual
# stream; the residual add is the norm kernel's epilogue (one read of each input, one write).
pattern rmsnorm_add
description post-norm: residual + rmsnorm(sublayer output)
catalog rmsnorm_add

input x
input w weight
input r
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node sq        aten\.pow\.Tensor_Scalar           (up, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (up, rs)      commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node scaled    aten\.mul\.Tensor                  (w, down)     commutative
optional oc    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (scaled, ...)
node out       aten\.add\.Tensor                  (r, oc)       commutative
output out
where $eps in [1e-10, 1e-2]
