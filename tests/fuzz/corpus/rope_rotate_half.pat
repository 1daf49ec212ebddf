# Rotate-half RoPE on q and k of one attention: q*cos + cat(-q2, q1)*sin, the same for k
# with the same cos and sin. One match is a q/k pair.
pattern rope_rotate_half
description rotate-half RoPE applied to q and k
replace auto_deploy.torch_rope_with_explicit_cos_sin.default
catalog rope_rotate_half

input q
input k
input cos
input sin
node qc        aten\.mul\.Tensor                  (q, cos)      commutative
node q1        aten\.slice\.Tensor                (q, _, 0, $h)
node q2        aten\.slice\.Tensor                (q, _, $h, _)
node qn        aten\.neg\.default                 (q2)
node qcat      aten\.cat\.default                 ([qn, q1], -1)
node qs        aten\.mul\.Tensor                  (qcat, sin)   commutative
node qo        aten\.add\.Tensor                  (qc, qs)      commutative
node kc        aten\.mul\.Tensor                  (k, cos)      commutative
node k1        aten\.slice\.Tensor                (k, _, 0, $h)
node k2        aten\.slice\.Tensor                (k, _, $h, _)
node kn        aten\.neg\.default                 (k2)
node kcat      aten\.cat\.default                 ([kn, k1], -1)
node ks        aten\.mul\.Tensor                  (kcat, sin)   commutative
node ko        aten\.add\.Tensor                  (kc, ks)      commutative
output qo, ko
