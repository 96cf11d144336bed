// The cuBLASLt descriptor of one gemm::Gemm run problem (run_descriptors.hpp).
#include "backends/cuda/gemm/run_descriptors.hpp"

namespace parity::gemm::detail {
namespace {

Status make_layout(cublasLtMatrixLayout_t* layout, cudaDataType_t type, std::int64_t rows,
                   std::int64_t cols, std::int64_t ld, std::int64_t batch, std::int64_t stride) {
  PARITY_CUBLASLT_TRY(cublasLtMatrixLayoutCreate(layout, type, static_cast<std::uint64_t>(rows),
                                                 static_cast<std::uint64_t>(cols), ld));
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    PARITY_CUBLASLT_TRY(cublasLtMatrixLayoutSetAttribute(
        *layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    PARITY_CUBLASLT_TRY(cublasLtMatrixLayoutSetAttribute(
        *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return Status::ok();
}

}  // namespace

cublasLtEpilogue_t lt_epilogue(RunEpilogue epilogue) {
  switch (epilogue) {
    case RunEpilogue::kNone:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case RunEpilogue::kBias:
      return CUBLASLT_EPILOGUE_BIAS;
    case RunEpilogue::kRelu:
      return CUBLASLT_EPILOGUE_RELU;
    case RunEpilogue::kBiasRelu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case RunEpilogue::kBiasReluAux:
      return CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
    case RunEpilogue::kGelu:
      return CUBLASLT_EPILOGUE_GELU;
    case RunEpilogue::kBiasGelu:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
    case RunEpilogue::kBiasGeluAux:
      return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case RunEpilogue::kDRelu:
      return CUBLASLT_EPILOGUE_DRELU;
    case RunEpilogue::kDReluBgrad:
      return CUBLASLT_EPILOGUE_DRELU_BGRAD;
    case RunEpilogue::kDGelu:
      return CUBLASLT_EPILOGUE_DGELU;
    case RunEpilogue::kDGeluBgrad:
      return CUBLASLT_EPILOGUE_DGELU_BGRAD;
    case RunEpilogue::kBgradA:
      return CUBLASLT_EPILOGUE_BGRADA;
    case RunEpilogue::kBgradB:
      return CUBLASLT_EPILOGUE_BGRADB;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

LtDescriptors::~LtDescriptors() {
  if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
  for (auto* layout : {a, b, c}) {
    if (layout != nullptr) cublasLtMatrixLayoutDestroy(layout);
  }
}

Result<lt::LtTypes> run_types(const GemmRunProblem& p) {
  PARITY_ASSIGN_OR_RETURN(lt::LtTypes types, lt::lt_types(p.shape.a_dtype, p.shape.c_dtype));
  if (p.shape.a_dtype == DType::kF32 && !p.allow_tf32) types.compute = CUBLAS_COMPUTE_32F;
  return types;
}

Status build_descriptors(const GemmRunProblem& p, const lt::LtTypes& types, LtDescriptors* out) {
  const GemmProblem& s = p.shape;
  PARITY_CHECK_ARG(s.batch <= INT32_MAX, "gemm: batch=", s.batch,
                   " exceeds cuBLASLt's int32 count");
  const bool a_t = s.layout == GemmLayout::kTN || s.layout == GemmLayout::kTT;
  const bool b_t = s.layout == GemmLayout::kNT || s.layout == GemmLayout::kTT;
  PARITY_CUBLASLT_TRY(cublasLtMatmulDescCreate(&out->desc, types.compute, types.scale));
  PARITY_RETURN_IF_ERROR(
      set_desc(out->desc, CUBLASLT_MATMUL_DESC_TRANSA, a_t ? CUBLAS_OP_T : CUBLAS_OP_N));
  PARITY_RETURN_IF_ERROR(
      set_desc(out->desc, CUBLASLT_MATMUL_DESC_TRANSB, b_t ? CUBLAS_OP_T : CUBLAS_OP_N));
  PARITY_RETURN_IF_ERROR(
      set_desc(out->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, lt_epilogue(p.epilogue)));
  if (epilogue_reads_bias(p.epilogue)) {
    PARITY_RETURN_IF_ERROR(set_desc(out->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                    static_cast<std::int32_t>(types.cd)));
  } else if (p.bias_grad_length() > 0) {  // the API's bias gradients are fp32
    PARITY_RETURN_IF_ERROR(set_desc(out->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                    static_cast<std::int32_t>(CUDA_R_32F)));
  }
  if (epilogue_aux_kind(p.epilogue) != AuxKind::kNone) {
    const std::int64_t aux_ld = p.default_aux_ld();
    PARITY_RETURN_IF_ERROR(set_desc(out->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld));
    if (s.batch > 1) {
      PARITY_RETURN_IF_ERROR(set_desc(out->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                                      static_cast<std::int64_t>(aux_ld * s.n)));
    }
  }
  PARITY_RETURN_IF_ERROR(make_layout(&out->a, types.ab, a_t ? s.k : s.m, a_t ? s.m : s.k,
                                     s.lda_or_packed(), s.batch, p.stride_a_or_packed()));
  PARITY_RETURN_IF_ERROR(make_layout(&out->b, types.ab, b_t ? s.n : s.k, b_t ? s.k : s.n,
                                     s.ldb_or_packed(), s.batch, p.stride_b_or_packed()));
  PARITY_RETURN_IF_ERROR(
      make_layout(&out->c, types.cd, s.m, s.n, s.ldc_or_packed(), s.batch, p.stride_c_or_packed()));
  return Status::ok();
}

}  // namespace parity::gemm::detail
