// Shared by the GPU TBE tests (tbe_gpu_forward_test.cpp, tbe_gpu_test.cpp): a synthetic batch on
// the device.
#pragma once

#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity::testing {

struct DeviceInputs {
  gpu::DeviceBuffer indices, offsets, weights_psw;
  embedding::gpu::DeviceBatch view() const {
    return {indices.data(), offsets.data(), weights_psw.size_bytes() > 0 ? weights_psw.as<float>() : nullptr};
  }
};

inline DeviceInputs upload_batch(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch) {
  DeviceInputs d;
  d.indices = gpu::upload(embedding::pack_indices(batch.indices, problem.index_dtype)).value();
  d.offsets = gpu::upload(embedding::pack_indices(batch.offsets, problem.index_dtype)).value();
  if (!batch.per_sample_weights.empty()) d.weights_psw = gpu::upload(batch.per_sample_weights).value();
  return d;
}

}  // namespace parity::testing
