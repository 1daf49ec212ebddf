# x + 0: AutoDeploy's cleanup_noop_add removes it.
pattern noop_add
description x + 0

input x
node a         aten\.add\.(Tensor|Scalar)         (x, 0)        commutative
output a
