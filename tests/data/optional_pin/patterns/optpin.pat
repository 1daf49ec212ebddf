# Two outputs: o2 reads a through an optional add whose second argument (e,
# from m) is in no tree when the add is absent. m must not pin o2's search:
# only a does (through the optional's first argument).
pattern optpin
description an optional node's other argument is no pin

input a
input m
node o1        aten\.mul\.Tensor                  (a, m)
node e         aten\.exp\.default                 (m)
optional opt   aten\.add\.Tensor                  (a, e)
node o2        aten\.neg\.default                 (opt)
output o1, o2
