# LayerNorm: the composite op, its decomposition (var_mean, center, scale, shift), or written
# out by hand (mean-centred, no bias).
pattern layernorm
description LayerNorm over the last dim: composite, decomposed or written out
replace aten.layer_norm.default

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
