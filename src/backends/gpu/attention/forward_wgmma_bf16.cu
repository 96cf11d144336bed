// wgmma forward attention kernels for bf16 elements, and the check that this build and device
// run them (one TU per type: they compile in parallel).
#include <array>
#include <atomic>

#include "backends/gpu/attention/launch_wgmma_kernels.cuh"

namespace parity::attention::gpu::detail {

template Status launch_forward_wgmma<Elem16::kBF16, WgmmaForward::kRound2>(
    const AttentionProblem&, const AttentionParams&, gpuStream_t);

#if defined(PARITY_GPU_CUDA)
namespace {

// Known-good devices (the check runs on every forward call otherwise); refusals are recomputed
// for their message.
constexpr int kCachedDevices = 64;
std::array<std::atomic<bool>, kCachedDevices> runnable_device{};

}  // namespace
#endif

Status wgmma_forward_runnable() {
#if defined(PARITY_GPU_CUDA)
  int device = 0, major = 0, minor = 0;
  PARITY_GPU_TRY(cudaGetDevice(&device));
  const bool cached = device >= 0 && device < kCachedDevices;
  if (cached && runnable_device[device].load(std::memory_order_relaxed)) return Status::ok();
  PARITY_GPU_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  PARITY_GPU_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) {
    return unsupported("attention forward wgmma: device ", device, " has compute capability ",
                       major, ".", minor, " (wgmma needs sm_90a: 9.0)");
  }
  // The binary the runtime loads for this device: the sm_90a body uses dynamic shared memory
  // only; any other (plain sm_90, PTX) has the not-sm90a marker, a static shared variable.
  cudaFuncAttributes attributes{};
  PARITY_GPU_TRY(cudaFuncGetAttributes(
      &attributes, reinterpret_cast<const void*>(
                       kernels::attention_forward_wgmma_kernel<Elem16::kBF16,
                                                               kernels::Mode::kPointwise, 128>)));
  if (attributes.sharedSizeBytes != 0) {
    return unsupported("attention forward wgmma: the binary loaded for device ", device,
                       " is not sm_90a code (build with CMAKE_CUDA_ARCHITECTURES including "
                       "90a-real)");
  }
  if (cached) runnable_device[device].store(true, std::memory_order_relaxed);
  return Status::ok();
#else
  return unsupported("attention forward wgmma: NVIDIA Hopper (sm_90a) only");
#endif
}

}  // namespace parity::attention::gpu::detail
