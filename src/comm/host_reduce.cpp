#include "comm/host_reduce.hpp"

#include <algorithm>
#include <cstring>

namespace parity::comm::detail {
namespace {

template <typename T>
void fold_typed(ReduceOp op, const T* blocks, int num_blocks, std::int64_t block_elements,
                T* output) {
  for (std::int64_t i = 0; i < block_elements; ++i) {
    T acc = blocks[i];
    for (int b = 1; b < num_blocks; ++b) {
      const T value = blocks[static_cast<std::int64_t>(b) * block_elements + i];
      acc = op == ReduceOp::kMax ? std::max(acc, value) : static_cast<T>(acc + value);
    }
    output[i] = acc;
  }
}

template <typename T>
void divide_typed(T* data, std::int64_t count, int divisor) {
  for (std::int64_t i = 0; i < count; ++i)
    data[i] = static_cast<T>(data[i] / static_cast<T>(divisor));
}

}  // namespace

bool is_float_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kBF16 ||
         dtype == DType::kF16;
}

void widen_to_f32(DType dtype, const void* input, float* output, std::int64_t count) {
  const auto* bits = static_cast<const std::uint16_t*>(input);
  for (std::int64_t i = 0; i < count; ++i) {
    output[i] = dtype == DType::kBF16 ? bf16_bits_to_float(bits[i]) : fp16_bits_to_float(bits[i]);
  }
}

void narrow_from_f32(DType dtype, const float* input, void* output, std::int64_t count) {
  auto* bits = static_cast<std::uint16_t*>(output);
  for (std::int64_t i = 0; i < count; ++i) {
    bits[i] = dtype == DType::kBF16 ? float_to_bf16_bits(input[i]) : float_to_fp16_bits(input[i]);
  }
}

void divide_in_place(DType dtype, void* data, std::int64_t count, int divisor) {
  switch (dtype) {
    case DType::kF32:
      divide_typed(static_cast<float*>(data), count, divisor);
      break;
    case DType::kF64:
      divide_typed(static_cast<double*>(data), count, divisor);
      break;
    case DType::kI32:
      divide_typed(static_cast<std::int32_t*>(data), count, divisor);
      break;
    case DType::kI64:
      divide_typed(static_cast<std::int64_t*>(data), count, divisor);
      break;
    default:
      break;  // bf16/fp16 are divided in fp32 before narrowing
  }
}

void fold_blocks(DType dtype, ReduceOp op, const void* blocks, int num_blocks,
                 std::int64_t block_elements, void* output) {
  switch (dtype) {
    case DType::kF32:
      fold_typed(op, static_cast<const float*>(blocks), num_blocks, block_elements,
                 static_cast<float*>(output));
      break;
    case DType::kF64:
      fold_typed(op, static_cast<const double*>(blocks), num_blocks, block_elements,
                 static_cast<double*>(output));
      break;
    case DType::kI32:
      fold_typed(op, static_cast<const std::int32_t*>(blocks), num_blocks, block_elements,
                 static_cast<std::int32_t*>(output));
      break;
    case DType::kI64:
      fold_typed(op, static_cast<const std::int64_t*>(blocks), num_blocks, block_elements,
                 static_cast<std::int64_t*>(output));
      break;
    default:
      break;
  }
}

}  // namespace parity::comm::detail
