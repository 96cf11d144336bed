// Tensor maps (TMA descriptors) for Hopper bulk tensor copies, NVIDIA-only host code. The driver
// function cuTensorMapEncodeTiled is looked up through the runtime
// (cudaGetDriverEntryPointByVersion), so nothing links libcuda.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "parity/core/status.hpp"

namespace parity::cuda {

// A row-major matrix of 16-bit elements in device memory, read in boxes of 64 columns (128
// bytes, the 128-byte swizzle span) x box_rows rows.
struct Matrix16Box {
  const void* base = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;        // elements per row
  std::int64_t row_stride = 0;  // elements between rows (>= cols)
  int box_rows = 0;             // 1..256
  CUtensorMapDataType element = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};

// The 2-D tensor map of the matrix with the 128-byte swizzle: a box lands in shared memory as
// box_rows rows of 128 bytes, 16-byte chunk c of row r at r * 128 + ((c ^ (r % 8)) * 16) from a
// 1024-byte-aligned destination. Rows past `rows` read as zeros. kInvalidArgument when the
// driver refuses the layout (alignment, strides), kDeviceError when the entry point is missing.
// An out-parameter, not a Result: the map is 64-byte aligned and 128 bytes.
Status encode_matrix16_swizzled(const Matrix16Box& matrix, CUtensorMap& map);

}  // namespace parity::cuda
