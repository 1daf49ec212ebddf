# LayerNorm: the composite op, its decomposition (var_mean, center, scale, shift), or written
# out by hand (mean-centred, with or without a bias; rsqrt, or sqrt and a division).
# Discovery names a hand-written LayerNorm only where this pattern covers it: a biased one
# has the ops of a residual add in front of an unbiased one, and only the bias is a weight.
pattern layernorm
description LayerNorm over the last dim: composite, decomposed or written out
replace aten.layer_norm.default
catalog layernorm

variant composite
input x
node ln        aten\.(layer_norm|native_layer_norm)\.default   (x, [_], ...)
output ln

variant decomposed
input x
input w
input b
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node vm        aten\.var_mean\.correction         (up, [-1], ...)
node var       <built-in\sfunction\sgetitem>          (vm, 0)
node mean      <built-in\sfunction\sgetitem>          (vm, 1)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node rs        aten\.rsqrt\.default               (eps)
node cen       aten\.sub\.Tensor                  (up, mean)
node norm      aten\.mul\.Tensor                  (cen, rs)     commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node scaled    aten\.mul\.Tensor                  (down, w)     commutative
node out       aten\.add\.Tensor                  (scaled, b)   commutative
output out
where $eps in [1e-12, 1e-2]

# Written out by hand, mean-centred in fp32, no bias (Cohere's CohereLayerNorm):
#   cast(w) * ((x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps)); x - mean(x) is computed twice
#   as exported, once where a compiler merged the two.
variant centred
input x
input w weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node mean      aten\.mean\.dim                    (up, [-1], True)
node c1        aten\.sub\.Tensor                  (up, mean)
node sq        aten\.pow\.Tensor_Scalar           (c1, 2)
node var       aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node rs        aten\.rsqrt\.default               (eps)
node c2        aten\.sub\.Tensor                  (up, mean)
node norm      aten\.mul\.Tensor                  (c2, rs)      commutative
optional wup   aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (w, ...)
node out       aten\.mul\.Tensor                  (wup, norm)   commutative
output out
where $eps in [1e-12, 1e-2]

variant centred_once
input x
input w weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node mean      aten\.mean\.dim                    (up, [-1], True)
node c1        aten\.sub\.Tensor                  (up, mean)
node sq        aten\.pow\.Tensor_Scalar           (c1, 2)
node var       aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (c1, rs)      commutative
optional wup   aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (w, ...)
node out       aten\.mul\.Tensor                  (wup, norm)   commutative
output out
where $eps in [1e-12, 1e-2]

# Written out by hand with a bias: w * norm + b, the bias a weight (never a computed value:
# that would be a residual add)
variant centred_bias
input x
input w weight
input b weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node mean      aten\.mean\.dim                    (up, [-1], True)
node c1        aten\.sub\.Tensor                  (up, mean)
node sq        aten\.pow\.Tensor_Scalar           (c1, 2)
node var       aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node rs        aten\.rsqrt\.default               (eps)
node c2        aten\.sub\.Tensor                  (up, mean)
node norm      aten\.mul\.Tensor                  (c2, rs)      commutative
optional wup   aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (w, ...)
node scaled    aten\.mul\.Tensor                  (wup, norm)   commutative
optional bup   aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (b, ...)
node out       aten\.add\.Tensor                  (scaled, bup) commutative
output out
where $eps in [1e-12, 1e-2]

variant centred_once_bias
input x
input w weight
input b weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node mean      aten\.mean\.dim                    (up, [-1], True)
node c1        aten\.sub\.Tensor                  (up, mean)
node sq        aten\.pow\.Tensor_Scalar           (c1, 2)
node var       aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (c1, rs)      commutative
optional wup   aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (w, ...)
node scaled    aten\.mul\.Tensor                  (wup, norm)   commutative
optional bup   aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (b, ...)
node out       aten\.add\.Tensor                  (scaled, bup) commutative
output out
where $eps in [1e-12, 1e-2]

# (x - mean) / sqrt(var + eps) * w + b, as older model code writes it
variant centred_div
input x
input w weight
input b weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node mean      aten\.mean\.dim                    (up, [-1], True)
node c1        aten\.sub\.Tensor                  (up, mean)
node sq        aten\.pow\.Tensor_Scalar           (c1, 2)
node var       aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node sd        aten\.sqrt\.default                (eps)
node norm      aten\.div\.Tensor                  (c1, sd)
node scaled    aten\.mul\.Tensor                  (w, norm)     commutative
node out       aten\.add\.Tensor                  (scaled, b)   commutative
output out
where $eps in [1e-12, 1e-2]
