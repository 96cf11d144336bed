// Element types used across ops, with sizes and names for CLI parsing and results files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parity/core/status.hpp"

namespace parity {

enum class DType : std::uint8_t { kF32, kF16, kBF16, kF64, kI32, kI64, kU8 };

constexpr std::size_t dtype_size_bytes(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kF64: return 8;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kU8: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t);
// Accepts fp32/f32/float32, fp16/f16/half, bf16, fp64, int32/i32, int64/i64.
Result<DType> parse_dtype(std::string_view text);

// Unit roundoff u = 2^-p for the float types (half an ulp at 1.0): the basis of derived tolerances.
double unit_roundoff(DType t);

// Host-side conversions used by references and tests (round-to-nearest-even).
std::uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16_bits(float value);
float fp16_bits_to_float(std::uint16_t bits);

}  // namespace parity
