// cuBLASLt plumbing: checked calls, owning wrappers, algo <-> tuple conversion (lt_common.hpp).
#include "backends/cuda/gemm/lt_common.hpp"

#include <cstring>
#include <sstream>
#include <utility>

#include "backends/cuda/gemm/lt_tables.inc"

namespace parity::gemm::lt {

Status lt_error(const char* call, cublasStatus_t status) {
  return device_error(call, " failed: ", cublasLtGetStatusName(status), " (",
                      cublasLtGetStatusString(status), ")");
}

// ---- Handle ----

Result<Handle> Handle::create() {
  Handle handle;
  PARITY_CUBLASLT_TRY(cublasLtCreate(&handle.handle_));
  return handle;
}

Handle::~Handle() {
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

Handle::Handle(Handle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cublasLtDestroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

// ---- Types ----

Result<LtTypes> lt_types(DType ab_dtype, DType cd_dtype) {
  LtTypes types;
  switch (ab_dtype) {
    case DType::kBF16: types.ab = CUDA_R_16BF; break;
    case DType::kF16: types.ab = CUDA_R_16F; break;
    case DType::kF32:
      types.ab = CUDA_R_32F;
      types.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    default:
      return unsupported("cublaslt: a_dtype=", dtype_name(ab_dtype), " is not supported; expected ",
                         "bf16, fp16 or fp32 (run as TF32)");
  }
  switch (cd_dtype) {
    case DType::kBF16: types.cd = CUDA_R_16BF; break;
    case DType::kF16: types.cd = CUDA_R_16F; break;
    case DType::kF32: types.cd = CUDA_R_32F; break;
    default:
      return unsupported("cublaslt: c_dtype=", dtype_name(cd_dtype), " is not supported; expected ",
                         "bf16, fp16 or fp32");
  }
  return types;
}

// ---- MatmulPlan ----

void MatmulPlan::release() {
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (c_ != nullptr) cublasLtMatrixLayoutDestroy(c_);
  desc_ = nullptr;
  a_ = b_ = c_ = nullptr;
}

MatmulPlan::~MatmulPlan() { release(); }

MatmulPlan::MatmulPlan(MatmulPlan&& other) noexcept
    : desc_(std::exchange(other.desc_, nullptr)),
      a_(std::exchange(other.a_, nullptr)),
      b_(std::exchange(other.b_, nullptr)),
      c_(std::exchange(other.c_, nullptr)) {}

MatmulPlan& MatmulPlan::operator=(MatmulPlan&& other) noexcept {
  if (this != &other) {
    release();
    desc_ = std::exchange(other.desc_, nullptr);
    a_ = std::exchange(other.a_, nullptr);
    b_ = std::exchange(other.b_, nullptr);
    c_ = std::exchange(other.c_, nullptr);
  }
  return *this;
}

namespace {

Status make_layout(cublasLtMatrixLayout_t* layout, cudaDataType_t type, std::int64_t rows,
                   std::int64_t cols, std::int64_t ld, std::int64_t batch) {
  PARITY_CUBLASLT_TRY(cublasLtMatrixLayoutCreate(layout, type, static_cast<std::uint64_t>(rows),
                                                 static_cast<std::uint64_t>(cols), ld));
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);
    const std::int64_t stride = ld * cols;
    PARITY_CUBLASLT_TRY(cublasLtMatrixLayoutSetAttribute(
        *layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    PARITY_CUBLASLT_TRY(cublasLtMatrixLayoutSetAttribute(
        *layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return Status::ok();
}

}  // namespace

Result<MatmulPlan> MatmulPlan::create(const GemmProblem& problem, const void* bias) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_CHECK_ARG(problem.batch <= INT32_MAX, "cublaslt: batch=", problem.batch,
                   " exceeds the int32 batch count cuBLASLt takes");
  PARITY_ASSIGN_OR_RETURN(const LtTypes types, lt_types(problem.a_dtype, problem.c_dtype));
  const bool a_transposed = problem.layout == GemmLayout::kTN || problem.layout == GemmLayout::kTT;
  const bool b_transposed = problem.layout == GemmLayout::kNT || problem.layout == GemmLayout::kTT;
  MatmulPlan plan;
  PARITY_CUBLASLT_TRY(cublasLtMatmulDescCreate(&plan.desc_, types.compute, types.scale));
  const cublasOperation_t op_a = a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  PARITY_CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(plan.desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a,
                                                     sizeof(op_a)));
  PARITY_CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(plan.desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b,
                                                     sizeof(op_b)));
  if (problem.epilogue != Epilogue::kNone) {
    const cublasLtEpilogue_t epilogue =
        problem.epilogue == Epilogue::kBias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_RELU;
    PARITY_CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(plan.desc_, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                       &epilogue, sizeof(epilogue)));
    if (problem.epilogue == Epilogue::kBias && bias != nullptr) {
      PARITY_CUBLASLT_TRY(cublasLtMatmulDescSetAttribute(
          plan.desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    }
  }
  const std::int64_t m = problem.m, n = problem.n, k = problem.k;
  PARITY_RETURN_IF_ERROR(make_layout(&plan.a_, types.ab, a_transposed ? k : m, a_transposed ? m : k,
                                     problem.lda_or_packed(), problem.batch));
  PARITY_RETURN_IF_ERROR(make_layout(&plan.b_, types.ab, b_transposed ? n : k, b_transposed ? k : n,
                                     problem.ldb_or_packed(), problem.batch));
  PARITY_RETURN_IF_ERROR(make_layout(&plan.c_, types.cd, m, n, problem.ldc_or_packed(), problem.batch));
  return plan;
}

// ---- Algo tuple ----

namespace {

template <typename T>
Status get_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr,
                  T* value) {
  std::size_t written = 0;
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, value, sizeof(T), &written));
  return Status::ok();
}

template <typename T>
Status set_config(cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr, T value) {
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoConfigSetAttribute(algo, attr, &value, sizeof(T)));
  return Status::ok();
}

}  // namespace

Result<AlgoConfig> read_config(const cublasLtMatmulAlgo_t& algo) {
  AlgoConfig config;
  std::int32_t i32 = 0;
  std::uint32_t u32 = 0;
  std::uint16_t u16 = 0;
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_ID, &i32));
  config.algo_id = i32;
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &u32));
  config.tile_id = static_cast<int>(u32);
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &u32));
  config.stages_id = static_cast<int>(u32);
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &i32));
  config.split_k = i32 < 1 ? 1 : i32;
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &u32));
  config.reduction_scheme = static_cast<int>(u32);
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &u32));
  config.cta_swizzling = static_cast<int>(u32);
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &u32));
  config.custom_option = static_cast<int>(u32);
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &u16));
  config.inner_shape_id = u16;
  PARITY_RETURN_IF_ERROR(get_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &u16));
  config.cluster_shape_id = u16;
  return config;
}

Result<cublasLtMatmulAlgo_t> build_algo(cublasLtHandle_t handle, const LtTypes& types,
                                        const AlgoConfig& config) {
  cublasLtMatmulAlgo_t algo{};
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoInit(handle, types.compute, types.scale, types.ab, types.ab,
                                             types.cd, types.cd, config.algo_id, &algo));
  // Attribute sizes must match exactly: ids are uint32 except inner/cluster shape (uint16) and
  // split-K (int32); a wrong size is CUBLAS_STATUS_INVALID_VALUE.
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID,
                                    static_cast<std::uint32_t>(config.tile_id)));
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                    static_cast<std::uint32_t>(config.stages_id)));
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                    static_cast<std::int32_t>(config.split_k)));
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                    static_cast<std::uint32_t>(config.reduction_scheme)));
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING,
                                    static_cast<std::uint32_t>(config.cta_swizzling)));
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION,
                                    static_cast<std::uint32_t>(config.custom_option)));
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID,
                                    static_cast<std::uint16_t>(config.inner_shape_id)));
  PARITY_RETURN_IF_ERROR(set_config(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                    static_cast<std::uint16_t>(config.cluster_shape_id)));
  return algo;
}

// ---- Enumerator tables ----

namespace {

struct SizeEntry {
  int id;
  int first;
  int second;
};

#define PARITY_LT_ENTRY(name, first, second) {static_cast<int>(name), first, second},
constexpr SizeEntry kTiles[] = {PARITY_LT_TILES(PARITY_LT_ENTRY)};
constexpr SizeEntry kStages[] = {PARITY_LT_STAGES(PARITY_LT_ENTRY)};
constexpr SizeEntry kClusters[] = {PARITY_LT_CLUSTERS(PARITY_LT_ENTRY)};
#undef PARITY_LT_ENTRY

template <std::size_t N>
bool lookup(const SizeEntry (&table)[N], int id, int* first, int* second) {
  for (const SizeEntry& entry : table) {
    if (entry.id == id) {
      *first = entry.first;
      *second = entry.second;
      return true;
    }
  }
  return false;
}

template <std::size_t N>
int reverse_lookup(const SizeEntry (&table)[N], int first, int second) {
  for (const SizeEntry& entry : table) {
    if (entry.first == first && entry.second == second) return entry.id;
  }
  return 0;
}

}  // namespace

bool tile_size(int tile_id, int* rows, int* cols) { return lookup(kTiles, tile_id, rows, cols); }
int tile_id_for(int rows, int cols) { return reverse_lookup(kTiles, rows, cols); }
bool stages_size(int stages_id, int* k_extent, int* depth) {
  return lookup(kStages, stages_id, k_extent, depth);
}
bool cluster_size(int cluster_id, int* along_m, int* along_n) {
  return lookup(kClusters, cluster_id, along_m, along_n);
}
int cluster_id_for(int along_m, int along_n) { return reverse_lookup(kClusters, along_m, along_n); }

namespace {

ReductionScheme to_reduction(int split_k, int scheme) {
  if (split_k <= 1) return ReductionScheme::kNone;
  switch (scheme) {
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return ReductionScheme::kInPlace;
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return ReductionScheme::kOutputType;
    // COMPUTE_TYPE, and NONE with a split (the library then picks; Hopper algos only offer
    // COMPUTE_TYPE, origami.md §5.2).
    default: return ReductionScheme::kComputeType;
  }
}

}  // namespace

Candidate to_candidate(const AlgoConfig& config, const cublasLtMatmulAlgo_t& algo, DType ab_dtype,
                       std::uint64_t workspace_bytes) {
  Candidate candidate;
  int rows = 0, cols = 0;
  if (tile_size(config.tile_id, &rows, &cols)) {
    candidate.tile_m = rows;
    candidate.tile_n = cols;
  }
  int k_extent = 0, depth = 0;
  if (stages_size(config.stages_id, &k_extent, &depth)) {
    candidate.tile_k = k_extent;
    candidate.stages = depth;
  }
  int along_m = 1, along_n = 1;
  if (cluster_size(config.cluster_shape_id, &along_m, &along_n)) {
    candidate.cluster_m = along_m;
    candidate.cluster_n = along_n;
  }
  // Hopper wgmma: m64 per warpgroup, N up to 256, K = 32 bytes of operand (16 bf16/fp16, 8 tf32);
  // tiles narrower than 64 rows are capped at their own size (the kernel then runs the transpose).
  candidate.mi_m = candidate.tile_m < 64 ? candidate.tile_m : 64;
  candidate.mi_n = candidate.tile_n < 256 ? candidate.tile_n : 256;
  candidate.mi_k = ab_dtype == DType::kF32 ? 8 : 16;
  candidate.split_k = config.split_k;
  candidate.reduction = to_reduction(config.split_k, config.reduction_scheme);
  candidate.kernel_family = config.algo_id;
  candidate.variant = config.custom_option;
  candidate.group_size = config.cta_swizzling != 0 ? 2 : 1;
  candidate.workspace_bytes = workspace_bytes;
  candidate.has_payload = true;
  static_assert(sizeof(algo.data) == sizeof(candidate.payload), "payload holds the algo struct");
  std::memcpy(candidate.payload.data(), algo.data, sizeof(algo.data));
  return candidate;
}

cublasLtMatmulAlgo_t algo_from_payload(const Candidate& candidate) {
  cublasLtMatmulAlgo_t algo{};
  std::memcpy(algo.data, candidate.payload.data(), sizeof(algo.data));
  return algo;
}

std::string describe_config(const AlgoConfig& config) {
  std::ostringstream out;
  int rows = 0, cols = 0, k_extent = 0, depth = 0, along_m = 0, along_n = 0;
  out << "algo" << config.algo_id << " tile=";
  if (tile_size(config.tile_id, &rows, &cols)) out << rows << "x" << cols;
  else out << "id" << config.tile_id;
  out << " stages=";
  if (stages_size(config.stages_id, &k_extent, &depth)) {
    out << k_extent << "x";
    if (depth == 0) out << "AUTO";
    else out << depth;
  } else {
    out << "id" << config.stages_id;
  }
  out << " cluster=";
  if (cluster_size(config.cluster_shape_id, &along_m, &along_n)) out << along_m << "x" << along_n;
  else out << (config.cluster_shape_id == 0 ? "auto" : "id" + std::to_string(config.cluster_shape_id));
  out << " custom=" << config.custom_option << " splitk=" << config.split_k;
  if (config.split_k > 1) out << " red=" << config.reduction_scheme;
  if (config.cta_swizzling != 0) out << " swizzle=" << config.cta_swizzling;
  return out.str();
}

}  // namespace parity::gemm::lt
