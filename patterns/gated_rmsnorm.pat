# Gated RMSNorm of state-space layers (Mamba 2, Bamba, Nemotron-H): the output y is gated by
# silu(z), then RMS-normalised and scaled, in fp32; AutoDeploy's torch_rmsnorm_gated with
# norm_before_gate=False. Decomposed graphs write silu(z) as z * sigmoid(z).
pattern gated_rmsnorm
description gated RMSNorm: rmsnorm(y * silu(z)) * w
replace auto_deploy.torch_rmsnorm_gated.default
catalog gated_rmsnorm

variant silu
input y
input z
input w weight
optional yu    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (y, ...)
optional zu    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (z, ...)
node act       aten\.silu\.default                (zu)
node gated     aten\.mul\.Tensor                  (yu, act)     commutative
node sq        aten\.pow\.Tensor_Scalar           (gated, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (gated, rs)   commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node out       aten\.mul\.Tensor                  (w, down)     commutative
output out
where $eps in [1e-10, 1e-2]

variant sigmoid
input y
input z
input w weight
optional yu    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (y, ...)
optional zu    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (z, ...)
node sg        aten\.sigmoid\.default             (zu)
node act       aten\.mul\.Tensor                  (zu, sg)      commutative
node gated     aten\.mul\.Tensor                  (yu, act)     commutative
node sq        aten\.pow\.Tensor_Scalar           (gated, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (gated, rs)   commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node out       aten\.mul\.Tensor                  (w, down)     commutative
output out
where $eps in [1e-10, 1e-2]

# Qwen3-Next's Qwen3NextRMSNormGated normalises first: rmsnorm(x) * w * silu(z)
# (norm_before_gate=True)
variant norm_first
input x
input z
input w weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node sq        aten\.pow\.Tensor_Scalar           (up, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (up, rs)      commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node scaled    aten\.mul\.Tensor                  (w, down)     commutative
optional zu    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (z, ...)
node act       aten\.silu\.default                (zu)
node out       aten\.mul\.Tensor                  (scaled, act) commutative
output out
where $eps in [1e-10, 1e-2]

variant norm_first_sigmoid
input x
input z
input w weight
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node sq        aten\.pow\.Tensor_Scalar           (up, 2)
node mean      aten\.mean\.dim                    (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (mean, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (up, rs)      commutative
optional down  aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (norm, ...)
node scaled    aten\.mul\.Tensor                  (w, down)     commutative
optional zu    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (z, ...)
node sg        aten\.sigmoid\.default             (zu)
node act       aten\.mul\.Tensor                  (zu, sg)      commutative
node out       aten\.mul\.Tensor                  (scaled, act) commutative
output out
where $eps in [1e-10, 1e-2]
