# Gemma's RMSNorm scales by (1 + w), which AutoDeploy's rmsnorm pattern does not match.
pattern rmsnorm_gemma
description Gemma RMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + w)
replace auto_deploy.torch_rmsnorm.default
catalog gemma_rmsnorm

input x
input w weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node sq        aten\.pow\.Tensor_Scalar           (up, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (up, rs)      commutative
optional wf    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (w, ...)
node w1        aten\.add\.(Tensor|Scalar)         (wf, $one)    commutative
node out       aten\.mul\.Tensor                  (norm, w1)    commutative
output out
where $eps in [1e-10, 1e-2]
where $one in [1, 1]
