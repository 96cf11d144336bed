// Shared by the nanobind sources: a library Status becomes a Python exception carrying the
// library's message (ValueError for the caller's input, NotImplementedError for what this build or
// hardware cannot run, RuntimeError otherwise), and numpy arrays are checked against what an op
// expects before any pointer reaches the library.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"

namespace parity::python {

namespace nb = nanobind;

/// kUnsupported: registered by the module as parity.UnsupportedError (a NotImplementedError, so
/// also a RuntimeError).
struct UnsupportedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Any C-contiguous host array; dtype and size are checked by `require_array`.
using HostArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

/// Throws the Python exception that matches `status` (nothing when ok).
void raise_if_error(const Status& status);

template <typename T>
T value_or_raise(Result<T> result) {
  raise_if_error(result.status());
  return std::move(result).value();
}

/// The library dtype of an array: float32/float16/float64/int32/int64/uint8; bfloat16 arrives as
/// uint16 and is named by the caller (`as_bf16`).
Result<DType> array_dtype(const HostArray& array, bool as_bf16 = false);

/// ValueError "name: dtype X, expected Y" / "name: N elements, expected M" unless `array` holds
/// `expected_elements` elements of `expected`.
void require_array(const HostArray& array, std::string_view name, DType expected,
                   std::int64_t expected_elements, bool as_bf16 = false);

}  // namespace parity::python
