// fusescan test fixture: a C++ op library.
#include <torch/library.h>

TORCH_LIBRARY(trtllm, m)
{
    m.def("noaux_tc_op(Tensor scores, int k) -> Tensor");
    m.def("silu_and_mul(Tensor x) -> Tensor");
}
