# L2Norm as AutoDeploy's match_l2norm_pattern sees it.
pattern l2norm
description L2Norm: x * rsqrt(sum(x * x) + eps), computed in fp32
replace auto_deploy.torch_l2norm.default
catalog l2norm

input x
optional up    aten\.(to\.dtype|_to_copy\.default|type_as\.default)          (x, ...)
node sq        aten\.mul\.Tensor                  (up, up)
node ss        aten\.sum\.dim_IntList             (sq, [-1], True)
node eps       aten\.add\.(Tensor|Scalar)         (ss, $eps)
node rs        aten\.rsqrt\.default               (eps)
node norm      aten\.mul\.Tensor                  (up, rs)      commutative
output norm
where $eps in [1e-12, 1e-2]
