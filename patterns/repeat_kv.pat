# repeat_kv for grouped-query attention: unsqueeze, expand, then a reshape that copies.
pattern repeat_kv
description repeat the kv heads n_rep times
replace auto_deploy.torch_attention_repeat_kv.default
catalog repeat_kv

input kv
optional s0    aten\.slice\.Tensor                (kv, 0, 0, 9223372036854775807)
node un        aten\.unsqueeze\.default           (s0, 2)
optional s1    aten\.slice\.Tensor                (un, _, 0, 9223372036854775807)
node ex        aten\.expand\.default              (s1, ...)
optional cl    aten\.clone\.default               (ex, ...)
node out       aten\.(reshape|view|_unsafe_view)\.default   (cl, ...)
output out
