// The cuBLASLt provider: enumeration (once per problem class, cached), per-shape check, the
// heuristic's own picks, and running a candidate. origami.md §5 and §7.4 give the facts this
// follows: on Hopper the heuristic uses one algo family (id 66 on cuBLAS 13.1) whose space is
// ~423 tiles x 9 clusters x 8 custom options x split-K; cluster AUTO fails AlgoCheck, so clusters
// are always explicit; MAX_WORKSPACE_BYTES must be set or split-K silently disappears.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "backends/cuda/gemm/lt_common.hpp"
#include "parity/gemm/cublaslt.hpp"

namespace parity::gemm {

using lt::AlgoConfig;

namespace {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// A problem of the class with every leading dimension in the class's alignment (and no finer):
// the class's space is checked against it once, so what is cached does not depend on which shape
// happened to come first. ld*elem = alignment * odd when the alignment is below 16 bytes.
GemmProblem representative_problem(const GemmProblem& problem) {
  GemmProblem rep = problem;
  const auto elem = static_cast<std::int64_t>(dtype_size_bytes(problem.a_dtype));
  const int align = problem.alignment_class_bytes();
  const std::int64_t size = align >= 16 ? 4096 : 4096 - std::max<std::int64_t>(1, align / elem);
  rep.m = rep.n = rep.k = size;
  rep.batch = 1;
  rep.lda = rep.ldb = rep.ldc = 0;
  rep.alignment_bytes = align;
  return rep;
}

// The pruned grid (origami.md §7.4), as (tile rows, cols) x clusters x custom options x split-K.
struct GridPart {
  std::vector<std::pair<int, int>> tiles;
  std::vector<std::pair<int, int>> clusters;
  std::vector<int> custom_options;  // clipped to the algo's CUSTOM_OPTION_MAX
  std::vector<int> split_k;         // values > 1 need SPLITK_SUPPORT
};

std::vector<GridPart> pruned_grid() {
  const std::vector<std::pair<int, int>> kFourClusters = {{1, 1}, {2, 1}, {1, 2}, {2, 2}};
  return {
      // The workhorse tiles, every custom option (undocumented; measured, not guessed).
      {{{128, 128}, {256, 128}, {128, 256}, {192, 128}, {128, 192}},
       kFourClusters, {0, 1, 2, 3, 4, 5, 6, 7}, {1}},
      // Other sizes the heuristic picks on the dev shapes (M x 128 in steps of 16-24, squares),
      // custom options 0 and 7 (the two its top-1 uses most).
      {{{64, 64}, {64, 128}, {128, 64}, {64, 256}, {256, 64}, {96, 128}, {128, 96}, {112, 128},
        {144, 128}, {160, 128}, {168, 128}, {176, 128}, {192, 192}, {320, 128}, {128, 320}},
       kFourClusters, {0, 7}, {1}},
      // Skinny tiles for small M or N.
      {{{64, 8}, {64, 16}, {64, 32}, {128, 16}, {128, 32}, {8, 64}, {16, 64}, {32, 64}, {16, 128},
        {32, 128}},
       {{1, 1}}, {0}, {1}},
      // Split-K for too few output tiles or long K.
      {{{64, 64}, {64, 128}, {128, 64}, {128, 128}, {256, 128}, {128, 256}},
       {{1, 1}, {1, 2}}, {0}, {2, 3, 4, 8}},
  };
}

template <typename T>
Status cap_value(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr, T* value) {
  std::size_t written = 0;
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoCapGetAttribute(&algo, attr, value, sizeof(T), &written));
  return Status::ok();
}

Result<std::vector<std::uint32_t>> cap_array(const cublasLtMatmulAlgo_t& algo,
                                             cublasLtMatmulAlgoCapAttributes_t attr) {
  std::size_t bytes = 0;
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &bytes));
  std::vector<std::uint32_t> values(bytes / sizeof(std::uint32_t));
  if (values.empty()) return values;
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoCapGetAttribute(&algo, attr, values.data(),
                                                        values.size() * sizeof(std::uint32_t), &bytes));
  return values;
}

struct CachedConfig {
  AlgoConfig config;
  cublasLtMatmulAlgo_t algo;
};

struct ClassSpace {
  EnumerationReport report;
  std::vector<CachedConfig> configs;
};

}  // namespace

struct CublasLtProvider::Impl {
  lt::Handle handle;
  std::map<std::uint64_t, ClassSpace> spaces;  // by problem_class_hash
  std::vector<std::uint64_t> space_order;      // first-seen order, for reports
  double last_heuristic_us = 0.0;
  double last_check_ms = 0.0;
  // The descriptor and layouts of the last problem run, rebuilt when the problem changes.
  std::string plan_key;
  lt::MatmulPlan plan;

  Result<lt::LtTypes> types_of(const GemmProblem& problem) const {
    return lt::lt_types(problem.a_dtype, problem.c_dtype);
  }

  Result<std::vector<cublasLtMatmulHeuristicResult_t>> query_heuristic(const GemmProblem& problem,
                                                                       int count);
  Result<const ClassSpace*> class_space(const GemmProblem& problem);
  Result<const lt::MatmulPlan*> plan_for(const GemmProblem& problem, const void* bias);
  // AlgoCheck against the problem: ok with the workspace it needs, or the reason it cannot run.
  Result<std::uint64_t> check_algo(const GemmProblem& problem, const cublasLtMatmulAlgo_t& algo);
};

namespace {

std::string plan_key_of(const GemmProblem& problem, const void* bias) {
  return detail::concat(problem.describe(), " lda=", problem.lda_or_packed(), " ldb=",
                        problem.ldb_or_packed(), " ldc=", problem.ldc_or_packed(), " bias=", bias);
}

}  // namespace

Result<const lt::MatmulPlan*> CublasLtProvider::Impl::plan_for(const GemmProblem& problem,
                                                               const void* bias) {
  std::string key = plan_key_of(problem, bias);
  if (key != plan_key || plan.desc() == nullptr) {
    PARITY_ASSIGN_OR_RETURN(plan, lt::MatmulPlan::create(problem, bias));
    plan_key = std::move(key);
  }
  return &plan;
}

Result<std::uint64_t> CublasLtProvider::Impl::check_algo(const GemmProblem& problem,
                                                         const cublasLtMatmulAlgo_t& algo) {
  PARITY_ASSIGN_OR_RETURN(const lt::MatmulPlan* p, plan_for(problem, nullptr));
  cublasLtMatmulHeuristicResult_t result{};
  const cublasStatus_t status = cublasLtMatmulAlgoCheck(handle.get(), p->desc(), p->a(), p->b(),
                                                        p->c(), p->c(), &algo, &result);
  if (status != CUBLAS_STATUS_SUCCESS) {
    return unsupported("cublasLtMatmulAlgoCheck rejects ", lt::describe_config(*lt::read_config(algo)),
                       " for ", problem.describe(), ": ", cublasLtGetStatusName(status));
  }
  return static_cast<std::uint64_t>(result.workspaceSize);
}

Result<std::vector<cublasLtMatmulHeuristicResult_t>> CublasLtProvider::Impl::query_heuristic(
    const GemmProblem& problem, int count) {
  PARITY_CHECK_ARG(count >= 1 && count <= 64, "cublaslt heuristic: count=", count,
                   " (expected 1..64)");
  PARITY_ASSIGN_OR_RETURN(const lt::MatmulPlan* p, plan_for(problem, nullptr));
  cublasLtMatmulPreference_t preference = nullptr;
  PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceCreate(&preference));
  struct PreferenceGuard {
    cublasLtMatmulPreference_t p;
    ~PreferenceGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{preference};
  const std::uint64_t workspace = lt::kMaxWorkspaceBytes;
  PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
  // The default minimum alignment preference is 256 B; say what the problem really guarantees.
  const auto align = static_cast<std::uint32_t>(problem.alignment_class_bytes());
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceSetAttribute(preference, attr, &align, sizeof(align)));
  }
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(count));
  int returned = 0;
  const auto start = std::chrono::steady_clock::now();
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle.get(), p->desc(), p->a(), p->b(), p->c(), p->c(), preference, count, results.data(),
      &returned);
  last_heuristic_us = 1000.0 * elapsed_ms(start);
  // NOT_SUPPORTED means "no configuration for this problem": an empty answer, not a failure.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return std::vector<cublasLtMatmulHeuristicResult_t>{};
  if (status != CUBLAS_STATUS_SUCCESS) return lt::lt_error("cublasLtMatmulAlgoGetHeuristic", status);
  results.resize(static_cast<std::size_t>(returned));
  std::erase_if(results, [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  return results;
}

// Long on purpose: the cached enumeration of one problem class, each cuBLASLt call checked in turn.
Result<const ClassSpace*> CublasLtProvider::Impl::class_space(const GemmProblem& problem) {
  const std::uint64_t key = problem_class_hash(problem_class(problem));
  if (auto found = spaces.find(key); found != spaces.end()) return &found->second;

  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(const lt::LtTypes types, types_of(problem));
  const GemmProblem rep = representative_problem(problem);
  ClassSpace space;
  space.report.problem_class = detail::concat(gemm_dtype_name(problem.a_dtype), " ",
                                              layout_name(problem.layout), " align=",
                                              rep.alignment_bytes, " epilogue=",
                                              epilogue_name(problem.epilogue));
  int ids[64];
  int id_count = 0;
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoGetIds(handle.get(), types.compute, types.scale, types.ab,
                                               types.ab, types.cd, types.cd, 64, ids, &id_count));
  space.report.algo_ids.assign(ids, ids + id_count);

  // The family the heuristic itself uses for this class (66 on Hopper, cuBLAS 13.1), and its stage.
  PARITY_ASSIGN_OR_RETURN(auto picks, query_heuristic(rep, 1));
  if (!picks.empty()) {
    PARITY_ASSIGN_OR_RETURN(const AlgoConfig top, lt::read_config(picks.front().algo));
    space.report.family_algo_id = top.algo_id;
    cublasLtMatmulAlgo_t base{};
    PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoInit(handle.get(), types.compute, types.scale, types.ab,
                                               types.ab, types.cd, types.cd, top.algo_id, &base));
    PARITY_ASSIGN_OR_RETURN(const auto tile_ids, cap_array(base, CUBLASLT_ALGO_CAP_TILE_IDS));
    PARITY_ASSIGN_OR_RETURN(const auto stage_ids, cap_array(base, CUBLASLT_ALGO_CAP_STAGES_IDS));
    std::int32_t custom_max = 0, splitk_support = 0;
    std::uint32_t reduction_mask = 0;
    PARITY_RETURN_IF_ERROR(cap_value(base, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custom_max));
    PARITY_RETURN_IF_ERROR(cap_value(base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splitk_support));
    PARITY_RETURN_IF_ERROR(cap_value(base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &reduction_mask));
    // Stage: the heuristic's own if the algo lists it (Hopper lists only 64xAUTO).
    int stage = top.stages_id;
    if (!stage_ids.empty() &&
        std::find(stage_ids.begin(), stage_ids.end(), static_cast<std::uint32_t>(stage)) == stage_ids.end()) {
      stage = static_cast<int>(stage_ids.front());
    }
    const int reduction = (reduction_mask & CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE) != 0
                              ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
                              : (reduction_mask & CUBLASLT_REDUCTION_SCHEME_INPLACE) != 0
                                    ? CUBLASLT_REDUCTION_SCHEME_INPLACE
                                    : CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
    auto offered = [&](int tile_id) {
      return tile_id != 0 && std::find(tile_ids.begin(), tile_ids.end(),
                                       static_cast<std::uint32_t>(tile_id)) != tile_ids.end();
    };
    PARITY_ASSIGN_OR_RETURN(const lt::MatmulPlan* p, plan_for(rep, nullptr));
    for (const GridPart& part : pruned_grid()) {
      for (const auto& [rows, cols] : part.tiles) {
        const int tile_id = lt::tile_id_for(rows, cols);
        if (!offered(tile_id)) continue;
        for (const auto& [cm, cn] : part.clusters) {
          for (int custom : part.custom_options) {
            if (custom > custom_max) continue;
            for (int split : part.split_k) {
              if (split > 1 && splitk_support == 0) continue;
              AlgoConfig config = top;
              config.tile_id = tile_id;
              config.stages_id = stage;
              config.cluster_shape_id = lt::cluster_id_for(cm, cn);
              config.custom_option = custom;
              config.split_k = split;
              config.reduction_scheme = split > 1 ? reduction : CUBLASLT_REDUCTION_SCHEME_NONE;
              config.cta_swizzling = 0;
              ++space.report.configs_built;
              auto algo = lt::build_algo(handle.get(), types, config);
              if (!algo.is_ok()) continue;  // a value this algo does not take: not a candidate
              cublasLtMatmulHeuristicResult_t result{};
              if (cublasLtMatmulAlgoCheck(handle.get(), p->desc(), p->a(), p->b(), p->c(), p->c(),
                                          &*algo, &result) != CUBLAS_STATUS_SUCCESS) {
                continue;
              }
              space.configs.push_back({config, *algo});
            }
          }
        }
      }
    }
  }
  space.report.configs_passed_check = static_cast<int>(space.configs.size());
  space.report.enumerate_ms = elapsed_ms(start);
  space_order.push_back(key);
  return &spaces.emplace(key, std::move(space)).first->second;
}

// ---- CublasLtProvider ----

CublasLtProvider::CublasLtProvider(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CublasLtProvider::~CublasLtProvider() = default;

Result<std::unique_ptr<CublasLtProvider>> CublasLtProvider::create() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    return unsupported("cublaslt: no CUDA device visible; the cuBLASLt provider needs one");
  }
  auto impl = std::make_unique<Impl>();
  PARITY_ASSIGN_OR_RETURN(impl->handle, lt::Handle::create());
  return std::unique_ptr<CublasLtProvider>(new CublasLtProvider(std::move(impl)));
}

std::size_t CublasLtProvider::library_version() { return cublasLtGetVersion(); }
std::uint64_t CublasLtProvider::max_workspace_bytes() const { return lt::kMaxWorkspaceBytes; }
double CublasLtProvider::last_heuristic_us() const { return impl_->last_heuristic_us; }
double CublasLtProvider::last_check_ms() const { return impl_->last_check_ms; }

std::vector<EnumerationReport> CublasLtProvider::enumeration_reports() const {
  std::vector<EnumerationReport> reports;
  for (std::uint64_t key : impl_->space_order) reports.push_back(impl_->spaces.at(key).report);
  return reports;
}

Result<std::vector<Candidate>> CublasLtProvider::heuristic(const GemmProblem& problem, int count) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_ASSIGN_OR_RETURN(const auto results, impl_->query_heuristic(problem, count));
  std::vector<Candidate> candidates;
  for (std::size_t rank = 0; rank < results.size(); ++rank) {
    PARITY_ASSIGN_OR_RETURN(const AlgoConfig config, lt::read_config(results[rank].algo));
    Candidate candidate = lt::to_candidate(config, results[rank].algo, problem.a_dtype,
                                           results[rank].workspaceSize);
    candidate.heuristic_rank = static_cast<int>(rank);
    candidates.push_back(candidate);
  }
  return candidates;
}

Result<std::vector<Candidate>> CublasLtProvider::enumerate(const GemmProblem& problem) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_ASSIGN_OR_RETURN(const ClassSpace* space, impl_->class_space(problem));
  std::vector<Candidate> candidates;
  std::vector<AlgoConfig> keys;
  const auto start = std::chrono::steady_clock::now();
  for (const CachedConfig& cached : space->configs) {
    auto workspace = impl_->check_algo(problem, cached.algo);
    if (!workspace.is_ok()) {
      if (workspace.status().code() == StatusCode::kUnsupported) continue;
      return workspace.status();
    }
    if (*workspace > lt::kMaxWorkspaceBytes) continue;
    candidates.push_back(lt::to_candidate(cached.config, cached.algo, problem.a_dtype, *workspace));
    keys.push_back(cached.config);
  }
  impl_->last_check_ms = elapsed_ms(start);
  // Always the heuristic's own picks, so the oracle and the selector see what cuBLASLt would run.
  PARITY_ASSIGN_OR_RETURN(const auto picks, heuristic(problem, 8));
  for (const Candidate& pick : picks) {
    PARITY_ASSIGN_OR_RETURN(const AlgoConfig config, lt::read_config(lt::algo_from_payload(pick)));
    const auto same = std::find(keys.begin(), keys.end(), config);
    if (same != keys.end()) {
      candidates[static_cast<std::size_t>(same - keys.begin())].heuristic_rank = pick.heuristic_rank;
    } else {
      candidates.push_back(pick);
      keys.push_back(config);
    }
  }
  return candidates;
}

Status CublasLtProvider::check(const GemmProblem& problem, const Candidate& candidate) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_CHECK_ARG(candidate.has_payload, "cublaslt check: candidate '", candidate.short_name(),
                   "' has no cuBLASLt payload; build it with enumerate() or candidate_from_features()");
  PARITY_ASSIGN_OR_RETURN(const std::uint64_t workspace,
                          impl_->check_algo(problem, lt::algo_from_payload(candidate)));
  if (workspace > lt::kMaxWorkspaceBytes) {
    return unsupported("cublaslt: ", candidate.short_name(), " needs ", workspace,
                       " bytes of workspace; the provider allows ", lt::kMaxWorkspaceBytes);
  }
  return Status::ok();
}

Status CublasLtProvider::run(const GemmProblem& problem, const Candidate& candidate,
                             const GemmOperands& operands) {
  PARITY_CHECK_ARG(candidate.has_payload, "cublaslt run: candidate '", candidate.short_name(),
                   "' has no cuBLASLt payload");
  PARITY_CHECK_ARG(operands.a != nullptr && operands.b != nullptr && operands.d != nullptr,
                   "cublaslt run: operands a, b and d must be device pointers (got a=", operands.a,
                   " b=", operands.b, " d=", operands.d, ")");
  PARITY_CHECK_ARG(problem.epilogue != Epilogue::kBias || operands.bias != nullptr,
                   "cublaslt run: epilogue=bias needs operands.bias (got null)");
  PARITY_CHECK_ARG(operands.workspace_bytes >= candidate.workspace_bytes, "cublaslt run: ",
                   candidate.short_name(), " needs workspace_bytes >= ", candidate.workspace_bytes,
                   " (got ", operands.workspace_bytes, ")");
  PARITY_ASSIGN_OR_RETURN(const lt::MatmulPlan* p, impl_->plan_for(problem, operands.bias));
  const cublasLtMatmulAlgo_t algo = lt::algo_from_payload(candidate);
  PARITY_CUBLASLT_TRY(cublasLtMatmul(impl_->handle.get(), p->desc(), &operands.alpha, operands.a,
                                     p->a(), operands.b, p->b(), &operands.beta, operands.d, p->c(),
                                     operands.d, p->c(), &algo, operands.workspace,
                                     operands.workspace_bytes,
                                     static_cast<cudaStream_t>(operands.stream)));
  return Status::ok();
}

std::string CublasLtProvider::configuration(const Candidate& candidate) const {
  if (!candidate.has_payload) return "(no payload) " + candidate.short_name();
  auto config = lt::read_config(lt::algo_from_payload(candidate));
  return config.is_ok() ? lt::describe_config(*config) : "(unreadable payload)";
}

Result<Candidate> CublasLtProvider::candidate_from_features(const GemmProblem& problem,
                                                            const Candidate& features) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_ASSIGN_OR_RETURN(const lt::LtTypes types, impl_->types_of(problem));
  PARITY_ASSIGN_OR_RETURN(const ClassSpace* space, impl_->class_space(problem));
  AlgoConfig config;
  config.algo_id = features.kernel_family != 0 ? features.kernel_family : space->report.family_algo_id;
  config.tile_id = lt::tile_id_for(features.tile_m, features.tile_n);
  PARITY_CHECK_ARG(config.tile_id != 0, "cublaslt: tile=", features.tile_m, "x", features.tile_n,
                   " is not a cuBLASLt tile");
  config.cluster_shape_id = lt::cluster_id_for(features.cluster_m, features.cluster_n);
  PARITY_CHECK_ARG(config.cluster_shape_id != 0, "cublaslt: cluster=", features.cluster_m, "x",
                   features.cluster_n, " is not a cuBLASLt cluster shape");
  // Stage: the cached family's stage unless the features name another K extent with AUTO depth.
  config.stages_id = space->configs.empty() ? 0 : space->configs.front().config.stages_id;
  config.custom_option = features.variant;
  config.split_k = features.split_k;
  config.reduction_scheme = features.split_k > 1 ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE : 0;
  PARITY_ASSIGN_OR_RETURN(const cublasLtMatmulAlgo_t algo, lt::build_algo(impl_->handle.get(), types, config));
  PARITY_ASSIGN_OR_RETURN(const std::uint64_t workspace, impl_->check_algo(problem, algo));
  Candidate candidate = lt::to_candidate(config, algo, problem.a_dtype, workspace);
  candidate.heuristic_rank = -1;
  return candidate;
}

}  // namespace parity::gemm
