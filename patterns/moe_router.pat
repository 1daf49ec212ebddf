# MoE routing: softmax over the experts, top-k, renormalise the kept weights (Mixtral
# exports the division in place, div_: the single-use rule keeps that invisible).
pattern moe_router
description softmax -> topk -> normalise
replace auto_deploy.triton_fused_topk_softmax.default

input logits
optional up    aten\.(to\.dtype|_to_copy\.default)          (logits, ...)
node sm        aten\.(softmax\.int|_softmax\.default)   (up, -1, ...)
node tk        aten\.topk\.default                (sm, $k, ...)
node vals      <built-in\sfunction\sgetitem>          (tk, 0)
node idx       <built-in\sfunction\sgetitem>          (tk, 1)
node s         aten\.sum\.dim_IntList             (vals, [-1], True)
node nv        aten\.div_?\.Tensor                 (vals, s)
output nv, idx
where $k in [1, 256]
