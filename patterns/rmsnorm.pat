# RMSNorm as AutoDeploy's match_rmsnorm_pattern sees it:
#   w * cast(cast(x, f32) * rsqrt(mean(cast(x, f32)^2, -1, keepdim) + eps))
pattern rmsnorm
description RMSNorm: x * rsqrt(mean(x^2) + eps) * w, computed in fp32
replace auto_deploy.torch_rmsnorm.default
catalog rmsnorm

input x
input w weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node sq        aten\.pow\.Tensor_Scalar           (up, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (up, rs)      commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node out       aten\.mul\.Tensor                  (w, down)     commutative
output out
where $eps in [1e-10, 1e-2]
