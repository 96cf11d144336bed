#include "parity/core/dtype.hpp"

#include <bit>
#include <cmath>
#include <string>

namespace parity {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "fp32";
    case DType::kF16: return "fp16";
    case DType::kBF16: return "bf16";
    case DType::kF64: return "fp64";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
    case DType::kU8: return "uint8";
  }
  return "unknown";
}

Result<DType> parse_dtype(std::string_view text) {
  std::string s(text);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "fp32" || s == "f32" || s == "float32" || s == "float") return DType::kF32;
  if (s == "fp16" || s == "f16" || s == "float16" || s == "half") return DType::kF16;
  if (s == "bf16" || s == "bfloat16") return DType::kBF16;
  if (s == "fp64" || s == "f64" || s == "float64" || s == "double") return DType::kF64;
  if (s == "int32" || s == "i32") return DType::kI32;
  if (s == "int64" || s == "i64") return DType::kI64;
  if (s == "uint8" || s == "u8") return DType::kU8;
  return invalid_argument("dtype: unknown value '", text,
                          "' (expected one of fp32, fp16, bf16, fp64, int32, int64, uint8)");
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::kF32: return std::ldexp(1.0, -24);
    case DType::kF16: return std::ldexp(1.0, -11);
    case DType::kBF16: return std::ldexp(1.0, -8);
    case DType::kF64: return std::ldexp(1.0, -53);
    default: return 0.0;
  }
}

std::uint16_t float_to_bf16_bits(float value) {
  auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);
  const std::uint32_t rounding_bias = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + rounding_bias) >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_fp16_bits(float value) {
  // IEEE binary16, round to nearest even, with subnormals, infinities and NaN.
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000;
  const std::uint32_t abs_bits = bits & 0x7FFFFFFF;
  if (abs_bits > 0x7F800000) return static_cast<std::uint16_t>(sign | 0x7E00);  // NaN
  if (abs_bits >= 0x477FF000) return static_cast<std::uint16_t>(sign | 0x7C00);  // overflow -> inf
  if (abs_bits < 0x38800000) {  // subnormal or zero in fp16
    const float abs_value = std::bit_cast<float>(abs_bits);
    const float scaled = abs_value * 16777216.0f;  // 2^24: fp16 subnormal step is 2^-24
    const auto mant = static_cast<std::uint32_t>(std::nearbyint(scaled));
    return static_cast<std::uint16_t>(sign | mant);
  }
  const std::uint32_t exponent = ((abs_bits >> 23) - 127 + 15) << 10;
  const std::uint32_t mantissa = abs_bits & 0x7FFFFF;
  std::uint32_t half = exponent | (mantissa >> 13);
  const std::uint32_t remainder = mantissa & 0x1FFF;
  if (remainder > 0x1000 || (remainder == 0x1000 && (half & 1))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

float fp16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1F;
  const std::uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000 | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

}  // namespace parity
