// PARITY_CUDA_TRY for NVIDIA-only host code (.cpp under src/backends/cuda/, compiled by the host
// compiler, where the device portability header cannot be included): a failing CUDA runtime call
// becomes a kDeviceError Status naming the call, the CUDA error string, file and line.
#pragma once

#include <cuda_runtime.h>

#include "parity/core/status.hpp"

#define PARITY_CUDA_TRY(call)                                                                   \
  do {                                                                                          \
    const cudaError_t parity_cuda_error_ = (call);                                              \
    if (parity_cuda_error_ != cudaSuccess) {                                                    \
      return ::parity::device_error(#call, " failed: ", cudaGetErrorString(parity_cuda_error_), \
                                    " (", __FILE__, ":", __LINE__, ")");                        \
    }                                                                                           \
  } while (0)
