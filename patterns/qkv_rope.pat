# The QKV projections and rotate-half RoPE of q and k (one match = one attention's): after
# fuse_gemms q, k and v are columns of one GEMM's output, and RoPE reads q's and k's columns
# where they lie (heads viewed, then transposed) instead of copies of them. v's columns pass
# through. The exported graph's form: three linears on one input (a bias allowed).
pattern qkv_rope
description QKV projections + rotate-half RoPE of q and k
replace fusescan.qkv_rope.default

input x
input wq
input wk
input wv
input cos
input sin
node gq        aten\.linear\.default|auto_deploy\.torch_linear_simple\.default   (x, wq, ...)
node vq        aten\.view\.default                (gq, ...)
node q         aten\.transpose\.int               (vq, 1, 2)
node gk        aten\.linear\.default|auto_deploy\.torch_linear_simple\.default   (x, wk, ...)
node vk        aten\.view\.default                (gk, ...)
node k         aten\.transpose\.int               (vk, 1, 2)
node gv        aten\.linear\.default|auto_deploy\.torch_linear_simple\.default   (x, wv, ...)
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
output qo, ko, gv
