#include "convert.hpp"

#include <string>

namespace parity::python {

void raise_if_error(const Status& status) {
  if (status.is_ok()) return;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      throw nb::value_error(status.message().c_str());
    case StatusCode::kUnsupported:
      throw UnsupportedError(status.message());
    default:
      throw std::runtime_error(status.to_string());
  }
}

Result<DType> array_dtype(const HostArray& array, bool as_bf16) {
  const nb::dlpack::dtype type = array.dtype();
  const auto code = static_cast<nb::dlpack::dtype_code>(type.code);
  if (type.lanes != 1) return invalid_argument("vector dtypes are not supported");
  if (code == nb::dlpack::dtype_code::Float) {
    if (type.bits == 32) return DType::kF32;
    if (type.bits == 16) return DType::kF16;
    if (type.bits == 64) return DType::kF64;
  } else if (code == nb::dlpack::dtype_code::Bfloat && type.bits == 16) {
    return DType::kBF16;
  } else if (code == nb::dlpack::dtype_code::Int) {
    if (type.bits == 32) return DType::kI32;
    if (type.bits == 64) return DType::kI64;
  } else if (code == nb::dlpack::dtype_code::UInt) {
    if (type.bits == 16 && as_bf16) return DType::kBF16;
    if (type.bits == 8) return DType::kU8;
  }
  return invalid_argument("unsupported dtype (code ", static_cast<int>(type.code), ", ", static_cast<int>(type.bits),
                          " bits)");
}

void require_array(const HostArray& array, std::string_view name, DType expected, std::int64_t expected_elements,
                   bool as_bf16) {
  const Result<DType> dtype = array_dtype(array, as_bf16);
  if (!dtype.is_ok()) raise_if_error(dtype.status().with_context(name));
  if (*dtype != expected) {
    raise_if_error(invalid_argument(name, ": dtype ", dtype_name(*dtype), ", expected ", dtype_name(expected)));
  }
  const auto elements = static_cast<std::int64_t>(array.size());
  if (elements != expected_elements) {
    raise_if_error(invalid_argument(name, ": ", elements, " elements, expected ", expected_elements));
  }
}

}  // namespace parity::python
