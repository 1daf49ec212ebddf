# Eager attention: matmul(q, k^T) * scale [+ mask] -> softmax (fp32) -> [cast] ->
# [dropout] -> matmul(., v), as match_eager_attention sees it; after
# run_decompositions() the matmuls are bmm on 3-d views and dropout is a clone.
pattern eager_attention
description eager scaled-dot-product attention
replace auto_deploy.torch_attention_sdpa.default

variant export
input q
input k
input v
input mask
optional kt    aten\.transpose\.int               (k, ...)
node qk        aten\.matmul\.default              (q, kt)
node sc        aten\.(mul|div)\.(Tensor|Scalar)   (qk, $scale)
optional am    aten\.add\.Tensor                  (sc, mask)
optional up    aten\.(to\.dtype|_to_copy\.default)          (am, ...)
node sm        aten\.(softmax\.int|_softmax\.default)   (up, -1, ...)
optional dn    aten\.(to\.dtype|_to_copy\.default)          (sm, ...)
optional dr    aten\.dropout\.default             (dn, ...)
node out       aten\.matmul\.default              (dr, v)
output out
where $scale in [1e-6, 1e6]

variant decomposed
input q
input k
input v
input mask
node qk        aten\.bmm\.default                 (q, k)
node qk4       aten\.(view|_unsafe_view)\.default (qk, _)
node sc        aten\.(mul|div)\.(Tensor|Scalar)   (qk4, $scale)
optional am    aten\.add\.Tensor                  (sc, mask)
optional up    aten\._to_copy\.default            (am, ...)
node sm        aten\._softmax\.default            (up, -1, ...)
optional dn    aten\._to_copy\.default            (sm, ...)
optional dr    aten\.clone\.default               (dn, ...)
node ex        aten\.expand\.default              (dr, _)
node p3        aten\.(view|_unsafe_view|reshape)\.default   (ex, _)
node pv        aten\.bmm\.default                 (p3, v)
node out       aten\.(view|_unsafe_view)\.default (pv, _)
output out
where $scale in [1e-6, 1e6]
