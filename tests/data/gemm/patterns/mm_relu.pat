# A decomposed linear (mm on a permuted weight) then relu.
pattern mm_relu
description mm on a permuted weight + relu
replace fusescan.mm_relu.default

variant mm
input x
input w
node wt        aten\.permute\.default             (w, ...)
node y         aten\.mm\.default                  (x, wt)
node z         aten\.relu\.default                (y)
output z
