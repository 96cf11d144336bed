// Shared helpers of the GPU attention tests (attention_gpu_forward_test.cpp,
// attention_gpu_backward_test.cpp): problems, device buffers with guard bands, running the
// kernels through the op's GPU slots or a variant by name, and the check against the fp64
// reference with its derived error bounds (attention_gpu_common.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "parity/attention/attention_op.hpp"
#include "parity/core/gpu.hpp"
#include "unit/attention_test_util.hpp"

namespace parity::attention::gpu_testing {

constexpr std::int64_t kTile =
    64;  // the kernels' q and kv tile (src/backends/gpu/attention/params.cuh)
// The q tile of the 128-row forwards (and ws128's kv tile), the wgmma backward's kv tile.
constexpr std::int64_t kTile128 = 128;
constexpr std::size_t kGuardBytes = 256;

AttentionProblem problem_of(AttentionKind kind, int heads, int dim, std::int64_t max_seq_len,
                            DType dtype = DType::kBF16, int dim_v = 0);

template <typename T>
parity::gpu::DeviceBuffer upload(const std::vector<T>& host, std::size_t guard_bytes = 0) {
  const std::size_t bytes = host.size() * sizeof(T);
  auto buffer = parity::gpu::DeviceBuffer::allocate(std::max<std::size_t>(bytes + guard_bytes, 16));
  EXPECT_TRUE(buffer.is_ok());
  EXPECT_TRUE(buffer->fill_bytes(0xff).is_ok());  // NaN in every float type: the guard band
  if (bytes > 0) {
    EXPECT_TRUE(buffer->copy_from_host(host.data(), bytes).is_ok());
  }
  return std::move(buffer).value();
}

struct GpuOutputs {
  std::vector<std::uint16_t> out, grad_q, grad_k, grad_v;
  std::vector<float> lse;
};

// The backward variant named `name` (attention_backward_variants()), or the reason it cannot run.
Result<const AttentionBackwardVariant*> backward_variant_named(const char* name,
                                                               const AttentionProblem& p,
                                                               const ExecutionContext& context);

// forward_variant, backward_variant: null = the op's choice (attention_forward,
// attention_backward), else that variant by name.
GpuOutputs run_gpu(const testing::JaggedCase& c, bool with_backward, bool deterministic = false,
                   const char* forward_variant = nullptr, const char* backward_variant = nullptr);

// Forward (and backward) on the GPU against the fp64 reference, within the bounds derived in
// attention_gpu_common.cpp.
void expect_gpu_matches_reference(const testing::JaggedCase& c, bool with_backward = true,
                                  const char* forward_variant = nullptr,
                                  const char* backward_variant = nullptr);

// `status` has `code` and its message names `fragment`.
void expect_error(const Status& status, StatusCode code, const std::string& fragment);

}  // namespace parity::attention::gpu_testing
