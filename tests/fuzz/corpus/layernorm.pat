# LayerNorm: the composite op, or its decomposition (var_mean, center, scale, shift).
pattern layernorm
description LayerNorm over the last dim, composite or decomposed
replace aten.layer_norm.default

variant composite
input x
node ln        aten\.(layer_norm|native_layer_norm)\.default   (x, [_], ...)
output ln

variant decomposed
input x
input w
input b
optional up    aten\.(to\.dtype|_to_copy\.default)          (x, ...)
node vm        aten\.var_mean\.correction         (up, [-1], ...)
node var       <built-in\sfunction\sgetitem>          (vm, 0)
node mean      <built-in\sfunction\sgetitem>          (vm, 1)
node eps       aten\.add\.(Tensor|Scalar)         (var, $eps)
node rs        aten\.rsqrt\.default               (eps)
node cen       aten\.sub\.Tensor                  (up, mean)
node norm      aten\.mul\.Tensor                  (cen, rs)     commutative
optional down  aten\.(to\.dtype|_to_copy\.default)          (norm, ...)
node scaled    aten\.mul\.Tensor                  (down, w)     commutative
node out       aten\.add\.Tensor                  (scaled, b)   commutative
output out
where $eps in [1e-12, 1e-2]
