// Internal: installs every GPU backend into the CPU library's hooks (gemm::Gemm's GPU factory, the
// nn/train GPU variants). Runs once from a static initialiser in runtime.cu: that object is linked
// into every program that touches the GPU (device_count, DeviceBuffer), whereas the initialiser of
// an object nothing references would be dropped by the static linker.
#pragma once

namespace parity::gemm::detail {
void register_cuda_gemm_run_backend();
}  // namespace parity::gemm::detail

namespace parity::gpu::detail {
void register_backends();
}  // namespace parity::gpu::detail
