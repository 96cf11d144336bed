#include "backends/cuda/register_backends.hpp"

namespace parity::gpu::detail {

void register_backends() { gemm::detail::register_cuda_gemm_run_backend(); }

}  // namespace parity::gpu::detail
