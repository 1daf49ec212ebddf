// fusescan test fixture: a C++ op library (TORCH_LIBRARY_FRAGMENT + m.def).
#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(trtllm, m)
{
    m.def("noaux_tc_op(Tensor scores, int k) -> Tensor");
    m.def("silu_and_mul(Tensor x, Tensor? scale, ScalarType? dtype) -> Tensor");
}
