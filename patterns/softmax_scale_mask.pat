# softmax(scale * x + mask) over the last dim, as eager attention computes its weights.
pattern softmax_scale_mask
description softmax of scaled, masked scores
replace fusescan.softmax_scale_mask.default

input x
input mask
node sc        aten\.(mul|div)\.(Tensor|Scalar)   (x, $scale)
node am        aten\.add\.Tensor                  (sc, mask)    commutative
optional up    aten\.(to\.dtype|_to_copy\.default)          (am, ...)
node sm        aten\.(softmax\.int|_softmax\.default)   (up, -1, ...)
output sm
where $scale in [1e-6, 1e6]
