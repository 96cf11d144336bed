// Tensor maps through the driver entry point (tensor_map.hpp).
#include "backends/cuda/common/tensor_map.hpp"
#include "backends/cuda/common/tensor_map_f32.hpp"

#include <cuda_runtime.h>

#include <atomic>

#include "backends/cuda/common/cuda_try.hpp"

namespace parity::cuda {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

constexpr unsigned kEntryPointVersion = 12000;  // cuTensorMapEncodeTiled's signature since 12.0
constexpr std::int64_t kSwizzleBytes = 128;     // the swizzle span: one box row
constexpr int kMaxBoxRows = 256;

Status encode_tiled_entry(EncodeTiled& encode) {
  static std::atomic<EncodeTiled> cached{nullptr};
  encode = cached.load(std::memory_order_acquire);
  if (encode != nullptr) return Status::ok();
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  PARITY_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry,
                                                   kEntryPointVersion, cudaEnableDefault, &query));
  if (query != cudaDriverEntryPointSuccess || entry == nullptr) {
    return device_error("cuTensorMapEncodeTiled: the driver has no entry point (query result ",
                        static_cast<int>(query), ")");
  }
  encode = reinterpret_cast<EncodeTiled>(entry);
  cached.store(encode, std::memory_order_release);
  return Status::ok();
}

// The 2-D map of elements of element_bytes with 128-byte box rows (kSwizzleBytes / element_bytes
// columns) and the 128-byte swizzle.
Status encode_swizzled(const Matrix16Box& matrix, CUtensorMapDataType element, int element_bytes,
                       CUtensorMap& map) {
  const std::int64_t swizzle_columns = kSwizzleBytes / element_bytes;
  if (matrix.box_rows < 1 || matrix.box_rows > kMaxBoxRows) {
    return invalid_argument("tensor map: box_rows ", matrix.box_rows, " is out of range [1, ",
                            kMaxBoxRows, "]");
  }
  if (matrix.rows < 1 || matrix.cols < swizzle_columns || matrix.row_stride < matrix.cols) {
    return invalid_argument("tensor map: rows=", matrix.rows, ", cols=", matrix.cols,
                            ", row_stride=", matrix.row_stride, " (needs rows >= 1, cols >= ",
                            swizzle_columns, ", row_stride >= cols)");
  }
  EncodeTiled encode = nullptr;
  PARITY_RETURN_IF_ERROR(encode_tiled_entry(encode));
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(matrix.cols),
                              static_cast<cuuint64_t>(matrix.rows)};
  const cuuint64_t stride_bytes[1] = {static_cast<cuuint64_t>(matrix.row_stride) *
                                       static_cast<cuuint64_t>(element_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(swizzle_columns),
                             static_cast<cuuint32_t>(matrix.box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  map = CUtensorMap{};
  const CUresult result =
      encode(&map, element, 2, const_cast<void*>(matrix.base), dims, stride_bytes, box,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    return invalid_argument("tensor map: cuTensorMapEncodeTiled refused base=", matrix.base,
                            ", rows=", matrix.rows, ", cols=", matrix.cols,
                            ", row_stride=", matrix.row_stride, ", box_rows=", matrix.box_rows,
                            " (CUresult ", static_cast<int>(result),
                            "; the base must be 16-byte aligned, the row stride a multiple of "
                            "16 bytes)");
  }
  return Status::ok();
}

}  // namespace

Status encode_matrix16_swizzled(const Matrix16Box& matrix, CUtensorMap& map) {
  return encode_swizzled(matrix, matrix.element, 2, map);
}

Status encode_matrix32_swizzled(const Matrix16Box& matrix, CUtensorMap& map) {
  return encode_swizzled(matrix, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, map);
}

}  // namespace parity::cuda
