// cuBLASLt plumbing shared by the provider's files: the checked-call macro, owning wrappers for the
// handle, the matmul descriptor and the matrix layouts of one GemmProblem, and the conversion
// between a cublasLtMatmulAlgo_t and the version-tagged tuple that describes it (origami.md §5.4:
// persist the tuple, not the struct). Internal to src/backends/cuda/gemm/.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <string>

#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/problem.hpp"

// Every cuBLASLt call goes through this: a failure becomes kDeviceError naming the call and the
// library's status name and text ("cublasLtMatmul(...) failed: CUBLAS_STATUS_NOT_SUPPORTED (...)").
#define PARITY_CUBLASLT_TRY(call)                                                              \
  do {                                                                                         \
    const cublasStatus_t parity_lt_status_ = (call);                                           \
    if (parity_lt_status_ != CUBLAS_STATUS_SUCCESS) {                                          \
      return ::parity::gemm::lt::lt_error(#call, parity_lt_status_);                           \
    }                                                                                          \
  } while (0)

namespace parity::gemm::lt {

Status lt_error(const char* call, cublasStatus_t status);

// The most workspace any candidate may ask for (origami.md §7.4: allow >= 64 MiB; split-K needs
// s*M*N*4 + 16 bytes). Also the heuristic's MAX_WORKSPACE_BYTES, so it sees the same space.
inline constexpr std::uint64_t kMaxWorkspaceBytes = 64ull << 20;

class Handle {
 public:
  static Result<Handle> create();
  Handle() = default;
  ~Handle();
  Handle(Handle&& other) noexcept;
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

// Descriptor + layouts for one problem. D aliases C (beta applies to D's previous contents).
class MatmulPlan {
 public:
  static Result<MatmulPlan> create(const GemmProblem& problem, const void* bias = nullptr);
  MatmulPlan() = default;
  ~MatmulPlan();
  MatmulPlan(MatmulPlan&& other) noexcept;
  MatmulPlan& operator=(MatmulPlan&& other) noexcept;
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;

  cublasLtMatmulDesc_t desc() const { return desc_; }
  cublasLtMatrixLayout_t a() const { return a_; }
  cublasLtMatrixLayout_t b() const { return b_; }
  cublasLtMatrixLayout_t c() const { return c_; }

 private:
  void release();
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr;
  cublasLtMatrixLayout_t b_ = nullptr;
  cublasLtMatrixLayout_t c_ = nullptr;
};

// Compute and data types for the problem's class: bf16/fp16 accumulate in fp32; fp32 runs as TF32.
struct LtTypes {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
  cudaDataType_t ab = CUDA_R_16BF;
  cudaDataType_t cd = CUDA_R_16BF;
};
Result<LtTypes> lt_types(DType ab_dtype, DType cd_dtype);

// The tuple that identifies a configuration within one cuBLASLt version.
struct AlgoConfig {
  int algo_id = 0;
  int tile_id = 0;
  int stages_id = 0;
  int split_k = 1;
  int reduction_scheme = 0;  // CUBLASLT_REDUCTION_SCHEME_*
  int cta_swizzling = 0;
  int custom_option = 0;
  int inner_shape_id = 0;
  int cluster_shape_id = 0;
  friend bool operator==(const AlgoConfig&, const AlgoConfig&) = default;
};

Result<AlgoConfig> read_config(const cublasLtMatmulAlgo_t& algo);
// AlgoInit for the class's types, then every ConfigSetAttribute (each call checked).
Result<cublasLtMatmulAlgo_t> build_algo(cublasLtHandle_t handle, const LtTypes& types,
                                        const AlgoConfig& config);

// Sizes behind the enumerators (false when the id is not in this header's tables).
bool tile_size(int tile_id, int* rows, int* cols);
int tile_id_for(int rows, int cols);  // 0 when no such tile
bool stages_size(int stages_id, int* k_extent, int* depth);
bool cluster_size(int cluster_id, int* along_m, int* along_n);
int cluster_id_for(int along_m, int along_n);  // 0 (AUTO) when no such shape

// Features the models read, from the tuple; the payload carries the algo struct itself.
Candidate to_candidate(const AlgoConfig& config, const cublasLtMatmulAlgo_t& algo, DType ab_dtype,
                       std::uint64_t workspace_bytes);
// "algo66 tile=256x128 stages=64xAUTO cluster=1x2 custom=7 splitk=1 red=none swizzle=0"
std::string describe_config(const AlgoConfig& config);

cublasLtMatmulAlgo_t algo_from_payload(const Candidate& candidate);

}  // namespace parity::gemm::lt
