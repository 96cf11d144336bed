// Internal: installs every GPU backend into the CPU library's hooks: the device-memory hooks, the
// gemm::Gemm GPU factory, and the GPU variants of the nn and TBE ops. Runs once from a static
// initialiser in runtime.cu: that object is linked into every program that touches the GPU
// (device_count, DeviceBuffer), whereas the initialiser of an object nothing references would be
// dropped by the static linker.
#pragma once

namespace parity::gemm::detail {
void register_cuda_gemm_run_backend();
}  // namespace parity::gemm::detail

namespace parity::nn::gpu_variants {
void install();
}  // namespace parity::nn::gpu_variants

namespace parity::embedding::gpu_variants {
void install();
}  // namespace parity::embedding::gpu_variants

namespace parity::attention::gpu_variants {
void install();
void install_hstu_layer();  // hstu_layer_gpu.cpp; called by install()
}  // namespace parity::attention::gpu_variants

namespace parity::gpu::detail {
void register_device_hooks();
void register_backends();
}  // namespace parity::gpu::detail
