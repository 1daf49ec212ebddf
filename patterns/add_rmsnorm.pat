# Residual add feeding an RMSNorm: the sum is a second output (the residual stream).
pattern add_rmsnorm
description residual add + RMSNorm, the sum kept as a second output
replace python.flashinfer_fused_add_rms_norm
catalog add_rmsnorm

variant decomposed
input a
input b
input w weight
node sum       aten\.add\.Tensor                  (a, b)        commutative
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (sum, ...)
node sq        aten\.pow\.Tensor_Scalar           (up, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (up, rs)      commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node out       aten\.mul\.Tensor                  (w, down)     commutative
output out, sum
where $eps in [1e-10, 1e-2]

# The residual add in front of one of AutoDeploy's norm ops (after match_rmsnorm_pattern and
# fuse_rmsnorm): what fuse_add_rms_norm rewrites (add [-> cast] -> flashinfer_rms_norm).
variant norm_op
input a
input b
input w weight
node sum       aten\.add\.Tensor                  (a, b)        commutative
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (sum, ...)
node out       auto_deploy\.(torch_rmsnorm|flashinfer_rms_norm|triton_rms_norm)\.default   (up, w, $eps)
output out, sum
where $eps in [1e-10, 1e-2]
