#include "backends/cuda/register_backends.hpp"

namespace parity::gpu::detail {

void register_backends() {
  register_device_hooks();
  gemm::detail::register_cuda_gemm_run_backend();
  nn::gpu_variants::install();
  embedding::gpu_variants::install();
  attention::gpu_variants::install();
}

}  // namespace parity::gpu::detail
