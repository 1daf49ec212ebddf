# Eager attention: matmul(q, k^T) * scale [+ mask] -> softmax (fp32) -> [cast] ->
# [dropout] -> matmul(., v), as match_eager_attention sees it.
pattern eager_attention
description eager scaled-dot-product attention
replace auto_deploy.torch_attention_sdpa.default

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
