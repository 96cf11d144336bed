// Tensor maps of fp32 matrices (tensor_map.cpp), e.g. the targets of bulk tensor reduce-adds
// (cp.reduce.async.bulk.tensor .add.f32). Apart from tensor_map.hpp so that the 16-bit users'
// translation units do not depend on it. NVIDIA-only host code.
#pragma once

#include "backends/cuda/common/tensor_map.hpp"

namespace parity::cuda {

// The 2-D tensor map of a row-major fp32 matrix with the 128-byte swizzle, boxes of 32 columns
// (128 bytes) x box_rows rows; `matrix.element` is ignored. Errors as encode_matrix16_swizzled.
Status encode_matrix32_swizzled(const Matrix16Box& matrix, CUtensorMap& map);

}  // namespace parity::cuda
