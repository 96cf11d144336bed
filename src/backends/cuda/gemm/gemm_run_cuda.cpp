// The GPU backend of gemm::Gemm (cuBLASLt). create() prepares the matmul descriptor and layouts of
// the exact problem (epilogue, bias/aux types, aux leading dimension, batch strides) and selects
// the configuration once: the analytical selector ranks the cuBLASLt provider's candidates for the
// problem's class (the epilogue priced as the nearest one the model knows), and the best-ranked
// candidate that cublasLtMatmulAlgoCheck accepts for the real descriptor wins; when the class is
// outside the model (fp32 without TF32) or no ranked candidate passes, cuBLASLt's heuristic top-1
// for the real descriptor is used. run() only sets the pointers that changed and calls
// cublasLtMatmul. Registered with the CPU library at static-initialisation time.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/common/cuda_try.hpp"
#include "backends/cuda/gemm/gemm_run_measure.hpp"
#include "backends/cuda/gemm/lt_common.hpp"
#include "backends/cuda/gemm/run_descriptors.hpp"
#include "gemm/gemm_run_backend.hpp"
#include "parity/core/gpu.hpp"
#include "parity/gemm/cublaslt.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"
#include "parity/gemm/workflow.hpp"


namespace parity::gemm::detail {
namespace {

// Alignment run() requires of the bias, bias-gradient and aux pointers (selection assumes it).
constexpr int kVectorAlignmentBytes = 16;

// The epilogue the analytical model prices in place of `epilogue` (it knows none, bias, relu):
// the extra traffic of aux and bias-gradient vectors is small next to D's own.
Epilogue model_epilogue(RunEpilogue epilogue) {
  if (epilogue_reads_bias(epilogue)) return Epilogue::kBias;
  if (epilogue == RunEpilogue::kRelu) return Epilogue::kRelu;
  return Epilogue::kNone;
}

// Process-wide per device: the handle runs use (cuBLASLt calls may share a handle across
// threads), the provider (candidate cache) and one selector per hardware name. The mutex guards
// creation only; run() never takes it.
struct DeviceState {
  std::mutex mutex;
  int device_index = 0;
  // The device's own catalogue entry, looked up once (the lookup reads the catalogue's files):
  // empty until then; device_hardware_error holds a failed lookup's status.
  std::string device_hardware;
  Status device_hardware_error = Status::ok();
  lt::Handle handle;
  // Stand-in bias/aux pointers while selecting: cuBLASLt reads only their alignment, so they
  // point 16 bytes into an allocation (aligned to exactly 16), the alignment run() requires.
  gpu::DeviceBuffer placeholder;
  std::unique_ptr<CublasLtProvider> provider;
  std::map<std::string, std::unique_ptr<Selector>> selectors;
};

Result<DeviceState*> device_state() {
  static std::mutex states_mutex;
  static std::map<int, std::unique_ptr<DeviceState>> states;
  if (gpu::device_count() == 0) return unsupported("gemm: device=gpu but no CUDA device is visible");
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return unsupported("gemm: no CUDA device is usable (cudaGetDevice failed)");
  }
  std::lock_guard<std::mutex> lock(states_mutex);
  auto& state = states[device];
  if (!state) {
    auto fresh = std::make_unique<DeviceState>();
    fresh->device_index = device;
    PARITY_ASSIGN_OR_RETURN(fresh->handle, lt::Handle::create());
    PARITY_ASSIGN_OR_RETURN(fresh->placeholder, gpu::DeviceBuffer::allocate(256));
    PARITY_ASSIGN_OR_RETURN(fresh->provider, CublasLtProvider::create());
    state = std::move(fresh);
  }
  return state.get();
}

// GemmOptions::hardware, or when empty the catalogue entry of the device this state belongs to
// (resolved on the first call, under the state's mutex like every selector_for call).
Result<std::string> hardware_name(DeviceState& state, const std::string& hardware) {
  if (!hardware.empty()) return hardware;
  if (state.device_hardware.empty() && state.device_hardware_error.is_ok()) {
    auto props = gpu::device_properties(state.device_index);
    auto spec = props.is_ok() ? hw::find_hardware_for_device(props->name) : Result<hw::HardwareSpec>(props.status());
    if (spec.is_ok()) {
      state.device_hardware = spec->name;
    } else {
      state.device_hardware_error =
          spec.status().with_context("gemm: GemmOptions::hardware is empty (the device's own model)");
    }
  }
  if (!state.device_hardware_error.is_ok()) return state.device_hardware_error;
  return state.device_hardware;
}

Result<Selector*> selector_for(DeviceState& state, const std::string& requested_hardware) {
  PARITY_ASSIGN_OR_RETURN(const std::string hardware, hardware_name(state, requested_hardware));
  auto& selector = state.selectors[hardware];
  if (!selector) {
    ModelSource source;
    source.hw = hardware;
    PARITY_ASSIGN_OR_RETURN(const LoadedModel model, load_model(source));
    selector = std::make_unique<Selector>(make_selector(model));
  }
  return selector.get();
}

struct Chosen {
  cublasLtMatmulAlgo_t algo{};
  std::int64_t workspace_bytes = 0;
  std::string how;  // "model rank 1 of 412", "cuBLASLt heuristic top-1 (...)", "forced"
  std::vector<TimedCandidate> timed;  // GemmChoice::kMeasured: the pool with its times
};


class GpuGemmRun final : public GemmRunBackend {
 public:
  GpuGemmRun(const GemmRunProblem& problem, cublasLtHandle_t handle, bool deterministic)
      : p_(problem), handle_(handle), deterministic_(deterministic) {}
  Status prepare(DeviceState& state, const GemmOptions& options, GemmChoice choice);

  std::int64_t workspace_bytes() const override { return chosen_.workspace_bytes; }
  std::string configuration() const override { return configuration_; }
  std::vector<TimedCandidate> timed_candidates() const override { return chosen_.timed; }
  Status run(const GemmArgs& args, const ExecutionContext& context) const override;

 private:
  // AlgoCheck against the real descriptor: the workspace it needs, or kUnsupported.
  Result<std::int64_t> check(const cublasLtMatmulAlgo_t& algo) const;
  Result<Chosen> heuristic_top1(const std::string& why) const;
  Result<std::vector<Chosen>> heuristic_top(int count, const std::string& why) const;
  Result<Chosen> select_with_model(DeviceState& state, const GemmOptions& options) const;
  Result<std::vector<Chosen>> model_top(DeviceState& state, const GemmOptions& options, int count) const;
  Result<Chosen> measure_fastest(DeviceState& state, const GemmOptions& options) const;
  Result<Chosen> forced(DeviceState& state, const std::string& text) const;
  Status check_alignment(const void* pointer, const char* name, int alignment_bytes) const;

  GemmRunProblem p_;
  cublasLtHandle_t handle_ = nullptr;
  // ExecutionContext::deterministic: split-K reductions that accumulate in place (atomics) are
  // refused, so repeated runs give bitwise equal results.
  bool deterministic_ = false;
  LtDescriptors lt_;
  Chosen chosen_;
  std::string configuration_;
  int alignment_bytes_ = 16;
  // Pointer attributes last written into the descriptor; run() rewrites only what changed.
  // Guarded by run_mutex_ (one Gemm run from two threads at once stays correct).
  mutable std::mutex run_mutex_;
  mutable const void* bias_set_ = nullptr;
  mutable const void* aux_set_ = nullptr;
  mutable std::int64_t aux_ld_set_ = 0;
};

Result<std::int64_t> GpuGemmRun::check(const cublasLtMatmulAlgo_t& algo) const {
  cublasLtMatmulHeuristicResult_t result{};
  const cublasStatus_t status =
      cublasLtMatmulAlgoCheck(handle_, lt_.desc, lt_.a, lt_.b, lt_.c, lt_.c, &algo, &result);
  if (status != CUBLAS_STATUS_SUCCESS) {
    return unsupported("cublasLtMatmulAlgoCheck: ", cublasLtGetStatusName(status));
  }
  if (result.workspaceSize > lt::kMaxWorkspaceBytes) {
    return unsupported("needs ", result.workspaceSize, " bytes of workspace");
  }
  if (deterministic_) {
    PARITY_ASSIGN_OR_RETURN(const lt::AlgoConfig config, lt::read_config(algo));
    if (config.split_k > 1 && config.reduction_scheme == CUBLASLT_REDUCTION_SCHEME_INPLACE) {
      return unsupported("in-place split-K reduction is not deterministic");
    }
  }
  return static_cast<std::int64_t>(result.workspaceSize);
}

Result<Chosen> GpuGemmRun::heuristic_top1(const std::string& why) const {
  PARITY_ASSIGN_OR_RETURN(std::vector<Chosen> top, heuristic_top(1, why));
  return std::move(top.front());
}

Result<std::vector<Chosen>> GpuGemmRun::heuristic_top(int count, const std::string& why) const {
  cublasLtMatmulPreference_t preference = nullptr;
  PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceCreate(&preference));
  struct Guard {
    cublasLtMatmulPreference_t p;
    ~Guard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{preference};
  const std::uint64_t workspace = lt::kMaxWorkspaceBytes;
  PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
  if (deterministic_) {
    const std::uint32_t schemes =
        CUBLASLT_REDUCTION_SCHEME_MASK & ~CUBLASLT_REDUCTION_SCHEME_INPLACE;
    PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes, sizeof(schemes)));
  }
  const auto align = static_cast<std::uint32_t>(alignment_bytes_);
  for (auto attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    PARITY_CUBLASLT_TRY(
        cublasLtMatmulPreferenceSetAttribute(preference, attr, &align, sizeof(align)));
  }
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(count));
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, lt_.desc, lt_.a, lt_.b, lt_.c, lt_.c, preference, count, results.data(), &returned);
  // A bias gradient in fp32 beside a 16-bit D is outside cuBLASLt's kernels; for the dReLU/dGELU
  // bias-gradient epilogues it answers INVALID_VALUE rather than NOT_SUPPORTED.
  const bool unsupported_bias_grad = status == CUBLAS_STATUS_INVALID_VALUE &&
                                     p_.bias_grad_length() > 0 && p_.shape.c_dtype != DType::kF32;
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || unsupported_bias_grad ||
      (status == CUBLAS_STATUS_SUCCESS && returned == 0)) {
    return unsupported("gemm: cuBLASLt offers no kernel for ", p_.shape.describe(),
                       " run_epilogue=", run_epilogue_name(p_.epilogue),
                       p_.bias_grad_length() > 0 && p_.shape.c_dtype != DType::kF32
                           ? " (an fp32 bias gradient with a 16-bit D; the weight-gradient GEMM's "
                             "kBgradB with fp32 D gives the same bias gradient)"
                           : "");
  }
  if (status != CUBLAS_STATUS_SUCCESS)
    return lt::lt_error("cublasLtMatmulAlgoGetHeuristic", status);
  std::vector<Chosen> top;
  for (int r = 0; r < returned; ++r) {
    Chosen chosen;
    chosen.algo = results[static_cast<std::size_t>(r)].algo;
    chosen.workspace_bytes = static_cast<std::int64_t>(results[static_cast<std::size_t>(r)].workspaceSize);
    chosen.how = "cuBLASLt heuristic top-" + std::to_string(r + 1) + " (" + why + ")";
    top.push_back(std::move(chosen));
  }
  return top;
}

Result<Chosen> GpuGemmRun::select_with_model(DeviceState& state, const GemmOptions& options) const {
  GemmProblem model_problem = p_.shape;
  model_problem.epilogue = model_epilogue(p_.epilogue);
  PARITY_ASSIGN_OR_RETURN(Selector * selector, selector_for(state, options.hardware));
  PARITY_ASSIGN_OR_RETURN(const std::vector<Candidate> candidates,
                          state.provider->enumerate(model_problem));
  if (candidates.empty()) return unsupported("the provider enumerates no candidate");
  PARITY_ASSIGN_OR_RETURN(const Selection selection,
                          selector->select(model_problem, candidates, 1));
  // The selector's choice first (its confidence rule may take the vendor's pick), then the model's
  // full ranking: the first that the real descriptor (with its epilogue) accepts.
  auto try_candidate = [&](const Candidate& candidate, const std::string& how) -> Result<Chosen> {
    const cublasLtMatmulAlgo_t algo = lt::algo_from_payload(candidate);
    PARITY_ASSIGN_OR_RETURN(const std::int64_t workspace, check(algo));
    // The model's time with the run epilogue's own traffic (aux, bias gradient) added.
    const double predicted_us = selector->model().predict_us(p_.shape, candidate, p_.epilogue);
    return Chosen{algo, workspace,
                  how + parity::detail::concat(", predicted ", predicted_us, " us"), {}};
  };
  const std::string count = std::to_string(candidates.size());
  auto first = try_candidate(
      selection.choice,
      std::string(selection.is_vendor_pick ? "selector: vendor top-1 within the model's band"
                                           : "selector: model rank 1") +
          " of " + count);
  if (first.is_ok()) return first;
  PARITY_ASSIGN_OR_RETURN(const auto ranked, selector->rank(model_problem, candidates));
  for (std::size_t r = 0; r < ranked.size(); ++r) {
    auto chosen = try_candidate(candidates[ranked[r].index],
                                "selector: model rank " + std::to_string(r + 1) + " of " + count +
                                    " (the first the epilogue's kernels accept)");
    if (chosen.is_ok()) return chosen;
  }
  return unsupported("no ranked candidate accepts epilogue ", run_epilogue_name(p_.epilogue));
}

Result<std::vector<Chosen>> GpuGemmRun::model_top(DeviceState& state, const GemmOptions& options,
                                                  int count) const {
  GemmProblem model_problem = p_.shape;
  model_problem.epilogue = model_epilogue(p_.epilogue);
  PARITY_ASSIGN_OR_RETURN(Selector * selector, selector_for(state, options.hardware));
  PARITY_ASSIGN_OR_RETURN(const std::vector<Candidate> candidates,
                          state.provider->enumerate(model_problem));
  PARITY_ASSIGN_OR_RETURN(const auto ranked, selector->rank(model_problem, candidates));
  std::vector<Chosen> top;
  // GemmOptions::measured_distinct_tiles: the first (best-ranked) accepted configuration of each
  // macro tile and split only.
  std::vector<std::array<int, 4>> tiles_taken;
  for (std::size_t r = 0; r < ranked.size() && static_cast<int>(top.size()) < count; ++r) {
    const Candidate& candidate = candidates[ranked[r].index];
    const std::array<int, 4> tile{candidate.tile_m, candidate.tile_n, candidate.tile_k, candidate.split_k};
    if (options.measured_distinct_tiles &&
        std::find(tiles_taken.begin(), tiles_taken.end(), tile) != tiles_taken.end()) {
      continue;
    }
    const cublasLtMatmulAlgo_t algo = lt::algo_from_payload(candidate);
    auto workspace = check(algo);
    if (!workspace.is_ok()) continue;
    tiles_taken.push_back(tile);
    const double predicted_us =
        selector->model().predict_us(p_.shape, candidates[ranked[r].index], p_.epilogue);
    top.push_back(Chosen{algo, *workspace,
                         parity::detail::concat("model rank ", r + 1, " of ", candidates.size(),
                                                " (predicted ", predicted_us, " us)"),
                         {}});
  }
  return top;
}

// GemmChoice::kMeasured: the model's and the heuristic's best candidates, timed on scratch
// operands; the fastest wins. The time spent measuring is part of the configuration text.
Result<Chosen> GpuGemmRun::measure_fastest(DeviceState& state, const GemmOptions& options) const {
  const auto began = std::chrono::steady_clock::now();
  std::vector<Chosen> pool;
  // A candidate both rankings hold is timed once; its text keeps both ranks (the oracle's text
  // then says where each source ranked the fastest kernel).
  auto add_unique = [&pool](std::vector<Chosen>& more) {
    for (auto& candidate : more) {
      const auto seen = std::find_if(pool.begin(), pool.end(), [&](const Chosen& c) {
        return std::memcmp(&c.algo, &candidate.algo, sizeof(candidate.algo)) == 0;
      });
      if (seen == pool.end()) {
        pool.push_back(std::move(candidate));
      } else {
        seen->how += " = " + candidate.how;
      }
    }
  };
  // Where cuBLASLt's heuristic offers nothing, the problem is refused as under kVendorHeuristic,
  // so a caller's fallback applies: the model's candidates there are kernels cuBLASLt itself
  // would not pick (e.g. a 256 x 1 x 65536 bf16 weight gradient with the bias gradient, whose
  // only accepted model candidate took 11.9 ms where the trainer's TF32-copy fallback takes
  // microseconds). So kMeasured is never less available, nor slower, than kVendorHeuristic.
  PARITY_CHECK_ARG(options.measured_candidates_per_source >= 1,
                   "gemm: measured_candidates_per_source=", options.measured_candidates_per_source,
                   " must be >= 1");
  PARITY_ASSIGN_OR_RETURN(
      std::vector<Chosen> heuristic,
      heuristic_top(std::min(options.measured_candidates_per_source, kMaxHeuristicCandidates),
                    "gemm_choice=measured"));
  auto model = model_top(state, options, options.measured_candidates_per_source);
  if (model.is_ok()) add_unique(*model);
  add_unique(heuristic);
  PARITY_ASSIGN_OR_RETURN(const MeasureBuffers buffers,
                          allocate_measure_buffers(p_, lt::kMaxWorkspaceBytes, options.measured_flush_l2));
  const bool sets_bias = epilogue_reads_bias(p_.epilogue) || p_.bias_grad_length() > 0;
  const bool sets_aux = epilogue_aux_kind(p_.epilogue) != AuxKind::kNone;
  if (sets_bias) PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, buffers.bias.data()));
  if (sets_aux) PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, buffers.aux.data()));
  std::size_t best = pool.size();
  double best_us = std::numeric_limits<double>::infinity();
  std::vector<TimedCandidate> timed;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    auto us = time_matmul_us(handle_, lt_.desc, lt_.a, lt_.b, lt_.c, pool[i].algo, buffers);
    if (!us.is_ok()) continue;
    auto text = lt::read_config(pool[i].algo);
    timed.push_back({(text.is_ok() ? lt::describe_config(*text) : std::string("?")) + " [" + pool[i].how + "]", *us});
    if (*us < best_us) {
      best_us = *us;
      best = i;
    }
  }
  // Back to the stand-ins: run() sets the caller's pointers (bias_set_ / aux_set_ say which).
  const void* stand_in = state.placeholder.as<std::uint8_t>() + kVectorAlignmentBytes;
  if (sets_bias) PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, stand_in));
  if (sets_aux) PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, stand_in));
  PARITY_CUDA_TRY(cudaDeviceSynchronize());
  if (best == pool.size()) return unsupported("none of the ", pool.size(), " measured candidates ran");
  const double spent_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
  Chosen chosen = pool[best];
  chosen.timed = std::move(timed);
  chosen.how = parity::detail::concat("measured: ", chosen.how, ", ", best_us, " us, fastest of ",
                                      pool.size(), "; measuring took ", spent_ms, " ms");
  return chosen;
}

Result<Chosen> GpuGemmRun::forced(DeviceState& state, const std::string& text) const {
  if (text == "heuristic") return heuristic_top1("forced");
  PARITY_ASSIGN_OR_RETURN(const Candidate features, parse_candidate(text));
  GemmProblem model_problem = p_.shape;
  model_problem.epilogue = model_epilogue(p_.epilogue);
  PARITY_ASSIGN_OR_RETURN(const Candidate candidate,
                          state.provider->candidate_from_features(model_problem, features));
  const cublasLtMatmulAlgo_t algo = lt::algo_from_payload(candidate);
  auto workspace = check(algo);
  if (!workspace.is_ok()) {
    return invalid_argument("forced_configuration: '", text, "' cannot run this problem (",
                            workspace.status().message(), ")");
  }
  return Chosen{algo, *workspace, "forced", {}};
}

Status GpuGemmRun::prepare(DeviceState& state, const GemmOptions& options, GemmChoice choice) {
  alignment_bytes_ = p_.shape.alignment_class_bytes();
  PARITY_ASSIGN_OR_RETURN(const lt::LtTypes types, run_types(p_));
  PARITY_RETURN_IF_ERROR(build_descriptors(p_, types, &lt_));
  aux_ld_set_ = p_.default_aux_ld();
  const void* stand_in = state.placeholder.as<std::uint8_t>() + kVectorAlignmentBytes;
  if (epilogue_reads_bias(p_.epilogue) || p_.bias_grad_length() > 0) {
    PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, stand_in));
    bias_set_ = stand_in;
  }
  if (epilogue_aux_kind(p_.epilogue) != AuxKind::kNone) {
    PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, stand_in));
    aux_set_ = stand_in;
  }
  std::lock_guard<std::mutex> lock(state.mutex);  // the provider and selectors are not thread-safe
  if (!options.forced_configuration.empty()) {
    PARITY_ASSIGN_OR_RETURN(chosen_, forced(state, options.forced_configuration));
  } else if (p_.shape.a_dtype == DType::kF32 && types.compute == CUBLAS_COMPUTE_32F) {
    // 16-bit inputs also compute in CUBLAS_COMPUTE_32F: only fp32 data without TF32 (the
    // SIMT kernels) is outside the model.
    PARITY_ASSIGN_OR_RETURN(chosen_, heuristic_top1("fp32 without TF32 is outside the model"));
  } else if (choice == GemmChoice::kVendorHeuristic) {
    PARITY_ASSIGN_OR_RETURN(chosen_, heuristic_top1("gemm_choice=heuristic"));
  } else if (choice == GemmChoice::kMeasured) {
    PARITY_ASSIGN_OR_RETURN(chosen_, measure_fastest(state, options));
  } else if (choice == GemmChoice::kAuto && alignment_bytes_ < 16) {
    // Rows not 16-byte aligned: no TMA kernels, where the model ranks worst (docs/gemm_run.md).
    PARITY_ASSIGN_OR_RETURN(chosen_, heuristic_top1("gemm_choice=auto: rows below 16-byte alignment"));
  } else {
    auto selected = select_with_model(state, options);
    if (selected.is_ok()) {
      chosen_ = std::move(*selected);
    } else {
      PARITY_ASSIGN_OR_RETURN(chosen_, heuristic_top1(selected.status().message()));
    }
  }
  auto config = lt::read_config(chosen_.algo);
  configuration_ =
      (config.is_ok() ? lt::describe_config(*config) : std::string("(unreadable algo)")) + " [" +
      chosen_.how + "]";
  return Status::ok();
}

Status GpuGemmRun::check_alignment(const void* pointer, const char* name,
                                   int alignment_bytes) const {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  PARITY_CHECK_ARG(address % static_cast<std::uintptr_t>(alignment_bytes) == 0, "gemm run: ", name,
                   "=", pointer, " is not aligned to the ", alignment_bytes,
                   " bytes this problem's kernel was selected for");
  return Status::ok();
}

Status GpuGemmRun::run(const GemmArgs& args, const ExecutionContext& context) const {
  PARITY_RETURN_IF_ERROR(check_alignment(args.a, "a", alignment_bytes_));
  PARITY_RETURN_IF_ERROR(check_alignment(args.b, "b", alignment_bytes_));
  PARITY_RETURN_IF_ERROR(check_alignment(args.d, "d", alignment_bytes_));
  if (epilogue_reads_bias(p_.epilogue)) {
    PARITY_RETURN_IF_ERROR(check_alignment(args.bias, "bias", kVectorAlignmentBytes));
  }
  if (p_.bias_grad_length() > 0) {
    PARITY_RETURN_IF_ERROR(check_alignment(args.bias_grad, "bias_grad", kVectorAlignmentBytes));
  }
  if (epilogue_aux_kind(p_.epilogue) != AuxKind::kNone) {
    PARITY_RETURN_IF_ERROR(check_alignment(args.aux, "aux", kVectorAlignmentBytes));
  }
  std::lock_guard<std::mutex> lock(run_mutex_);
  const void* bias = p_.bias_grad_length() > 0 ? args.bias_grad : args.bias;
  if (bias != bias_set_ && (epilogue_reads_bias(p_.epilogue) || p_.bias_grad_length() > 0)) {
    PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));
    bias_set_ = bias;
  }
  if (epilogue_aux_kind(p_.epilogue) != AuxKind::kNone) {
    if (args.aux != aux_set_) {
      PARITY_RETURN_IF_ERROR(
          set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, args.aux));
      aux_set_ = args.aux;
    }
    const std::int64_t aux_ld = effective_aux_ld(p_, args);
    if (aux_ld != aux_ld_set_) {
      PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld));
      if (p_.shape.batch > 1) {
        PARITY_RETURN_IF_ERROR(set_desc(lt_.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
                                        static_cast<std::int64_t>(aux_ld * p_.shape.n)));
      }
      aux_ld_set_ = aux_ld;
    }
  }
  PARITY_CUBLASLT_TRY(cublasLtMatmul(handle_, lt_.desc, &args.alpha, args.a, lt_.a, args.b, lt_.b,
                                     &args.beta, args.d, lt_.c, args.d, lt_.c, &chosen_.algo,
                                     args.workspace, static_cast<std::size_t>(args.workspace_bytes),
                                     static_cast<cudaStream_t>(context.stream)));
  return Status::ok();
}

Result<std::unique_ptr<GemmRunBackend>> create_gpu_gemm_run(const GemmRunProblem& problem,
                                                            const ExecutionContext& context,
                                                            const GemmOptions& options) {
  PARITY_ASSIGN_OR_RETURN(DeviceState * state, device_state());
  auto backend = std::make_unique<GpuGemmRun>(problem, state->handle.get(), context.deterministic);
  PARITY_RETURN_IF_ERROR(backend->prepare(*state, options, context.gemm_choice));
  return std::unique_ptr<GemmRunBackend>(std::move(backend));
}

}  // namespace

// Called by parity::gpu::detail::register_backends (src/backends/cuda/register_backends.cpp).
void register_cuda_gemm_run_backend() { register_gpu_gemm_run_factory(&create_gpu_gemm_run); }

}  // namespace parity::gemm::detail
