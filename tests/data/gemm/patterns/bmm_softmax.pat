# Attention scores: a batched product with a transposed key, then softmax.
pattern bmm_softmax
description batched product + softmax
replace fusescan.bmm_softmax.default

variant bmm
input q
input k
node kt        aten\.transpose\.int               (k, ...)
node s         aten\.bmm\.default                 (q, kt)
node p         aten\._softmax\.default            (s, ...)
output p
