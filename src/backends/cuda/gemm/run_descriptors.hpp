// The cuBLASLt descriptor and layouts of one gemm::Gemm run problem (epilogue, bias/aux types, aux
// leading dimension, batch strides): built once by the GPU backend of gemm::Gemm, and by the run
// benchmark for its bare-cublasLtMatmul reference, so both launch the identical descriptor.
// Internal to src/backends/cuda/.
#pragma once

#include <cublasLt.h>

#include <cstdint>

#include "backends/cuda/gemm/lt_common.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/gemm.hpp"

namespace parity::gemm::detail {

cublasLtEpilogue_t lt_epilogue(RunEpilogue epilogue);

// Owned descriptor and layouts of one run problem (the provider's MatmulPlan has packed strides
// and no aux attributes).
struct LtDescriptors {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  LtDescriptors() = default;
  LtDescriptors(const LtDescriptors&) = delete;
  LtDescriptors& operator=(const LtDescriptors&) = delete;
  ~LtDescriptors();
};

template <typename T>
Status set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  PARITY_CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(T)));
  return Status::ok();
}

// Compute and data types of the run: fp32 without allow_tf32 computes in plain fp32.
Result<lt::LtTypes> run_types(const GemmRunProblem& p);

Status build_descriptors(const GemmRunProblem& p, const lt::LtTypes& types, LtDescriptors* out);

}  // namespace parity::gemm::detail
