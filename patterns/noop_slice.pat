# A slice that selects everything: AutoDeploy's cleanup_noop_slice removes it.
pattern noop_slice
description slice(x, dim, 0, INT64_MAX)

input x
node s         aten\.slice\.Tensor                (x, _, 0, 9223372036854775807)
output s
