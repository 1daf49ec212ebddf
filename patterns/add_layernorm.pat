# Residual add feeding a LayerNorm (GPT-2's residual stream, parallel blocks' x + attention +
# MLP): the sum is a second output where the stream goes on (not into the final norm). The
# LayerNorm as the composite op (a dropout between sum and norm, GPT-2's embeddings), or
# written out by hand (mean-centred, no bias, Cohere) as in layernorm.pat.
pattern add_layernorm
description residual add + LayerNorm, the sum kept as a second output
replace aten.layer_norm.default
catalog add_layernorm

variant composite
input a
input b
node sum       aten\.add\.Tensor                  (a, b)        commutative
optional drop  aten\.(dropout\.default|clone\.default)          (sum, ...)    shared
node ln        aten\.(layer_norm|native_layer_norm)\.default   (drop, [_], ...)
output ln, sum

variant centred
input a
input b
input w weight
node sum       aten\.add\.Tensor                  (a, b)        commutative
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (sum, ...)
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
output out, sum
where $eps in [1e-12, 1e-2]

variant centred_once
input a
input b
input w weight
node sum       aten\.add\.Tensor                  (a, b)        commutative
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (sum, ...)
node mean      aten\.mean\.dim                    (up, [-1], True)
node c1        aten\.sub\.Tensor                  (up, mean)
node sq        aten\.pow\.Tensor_Scalar           (c1, 2)
node var       aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (c1, rs)      commutative
optional wup   aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (w, ...)
node out       aten\.mul\.Tensor                  (wup, norm)   commutative
output out, sum
where $eps in [1e-12, 1e-2]
