// Host launch for the portable block reduction (see kernels.cuh).
#include <algorithm>

#include "backends/gpu/reduce/kernels.cuh"
#include "parity/core/gpu.hpp"

namespace parity::gpu {

Result<double> reduce_sum(const DeviceBuffer& values, std::int64_t count, StreamHandle stream) {
  PARITY_CHECK_ARG(count >= 0, "reduce_sum: count=", count, " must be >= 0");
  PARITY_CHECK_ARG(static_cast<std::size_t>(count) * sizeof(float) <= values.size_bytes(),
                   "reduce_sum: count=", count, " floats exceed the buffer of ", values.size_bytes(), " bytes");
  constexpr int kBlockThreads = 256;
  int device = 0;
  int sm_count = 0;
  PARITY_GPU_TRY(gpuGetDevice(&device));
  PARITY_GPU_TRY(gpuDeviceGetAttribute(&sm_count, gpuDevAttrMultiProcessorCount, device));
  // Enough blocks to fill the chip a few times over; never more than there is work for.
  const std::int64_t wanted = (count + kBlockThreads - 1) / kBlockThreads;
  const int blocks = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, 4LL * sm_count)));
  PARITY_ASSIGN_OR_RETURN(auto partials, DeviceBuffer::allocate(sizeof(double) * (blocks + 1)));
  auto s = static_cast<gpuStream_t>(stream);
  double* partial_ptr = partials.as<double>();
  gpu_device::reduce_sum_block_partials_kernel<kBlockThreads>
      <<<blocks, kBlockThreads, 0, s>>>(static_cast<const float*>(values.data()), count, partial_ptr);
  PARITY_GPU_CHECK_LAUNCH(reduce_sum_block_partials_kernel);
  gpu_device::reduce_sum_final_kernel<kBlockThreads><<<1, kBlockThreads, 0, s>>>(partial_ptr, blocks,
                                                                                partial_ptr + blocks);
  PARITY_GPU_CHECK_LAUNCH(reduce_sum_final_kernel);
  double total = 0.0;
  PARITY_GPU_TRY(gpuMemcpyAsync(&total, partial_ptr + blocks, sizeof(double), gpuMemcpyDeviceToHost, s));
  PARITY_GPU_TRY(gpuStreamSynchronize(s));
  return total;
}

}  // namespace parity::gpu
