# x * 1: a multiply that changes nothing.
pattern noop_mul1
description x * 1

input x
node m         aten\.mul\.(Tensor|Scalar)         (x, 1)        commutative
output m
