// Distributed run settings from text (parity/train/dist_setup.hpp).
#include "parity/train/dist_setup.hpp"

#include "core/text_format.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/core/parse.hpp"
#include "parity/plan/plan_io.hpp"

namespace parity::train {

bool DistTrainSettings::has_host_reduction_settings() const {
  const DistTrainSettings defaults;
  return dense_reduction != defaults.dense_reduction || bucket_bytes != defaults.bucket_bytes || report_timings;
}

Result<DistTrainOptions> dist_train_options(const DistTrainSettings& settings) {
  DistTrainOptions options;
  PARITY_ASSIGN_OR_RETURN(const std::int64_t chunks,
                          parse_int64(settings.gradient_chunks, "--gradient-chunks", 0, 1 << 20));
  options.gradient_chunks = static_cast<int>(chunks);
  PARITY_ASSIGN_OR_RETURN(options.bucket_bytes, bench::parse_byte_count(settings.bucket_bytes, "--bucket-bytes"));
  PARITY_CHECK_ARG(options.bucket_bytes >= 1, "--bucket-bytes: ", options.bucket_bytes, " must be >= 1");
  if (settings.dense_reduction == "after-backward") {
    options.dense_reduction = DistTrainOptions::DenseReduction::kAfterBackward;
  } else {
    PARITY_CHECK_ARG(settings.dense_reduction == "overlapped", "--dense-reduction: '", settings.dense_reduction,
                     "' is not overlapped or after-backward");
  }
  return options;
}

Result<double> comm_timeout_ms(const DistTrainSettings& settings) {
  PARITY_ASSIGN_OR_RETURN(const double timeout_s, parse_double(settings.comm_timeout, "--comm-timeout"));
  PARITY_CHECK_ARG(timeout_s > 0, "--comm-timeout: ", timeout_s, " must be > 0 seconds");
  return timeout_s * 1000.0;
}

Status apply_plan_placement(const DistTrainSettings& settings, int num_ranks, DistTrainOptions& options) {
  if (settings.plan.empty()) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const plan::Plan plan, plan::read_plan_file(settings.plan));
  auto placement = placement_from_plan(plan, options.train.spec, num_ranks);
  if (!placement.is_ok()) return placement.status().with_context("--plan " + settings.plan);
  options.placement = *placement;
  return Status::ok();
}

Status check_device_for_backend(DeviceKind device, std::string_view backend, std::string_view flag) {
  const bool is_nccl = backend == "nccl";
  const DeviceKind wanted = is_nccl ? DeviceKind::kGpu : DeviceKind::kCpu;
  PARITY_CHECK_ARG(device == wanted, "--device: ", device_kind_name(device), " does not go with ", flag, " ", backend,
                   " (", is_nccl ? "use --device cuda" : "use --device cpu", ")");
  return Status::ok();
}

std::string mpi_train_start_text(int ranks, const DistTrainSettings& settings, const DistTrainOptions& options) {
  // Only the plan's placement (all four types) is applied: batch and precision come from the
  // settings and the spec.
  const std::string placement =
      settings.plan.empty() ? "greedy table-wise by bytes" : settings.plan + " (its table placement only)";
  const std::string chunks = options.gradient_chunks == 0 ? "one per rank" : std::to_string(options.gradient_chunks);
  return format_text("distributed: %d ranks over MPI, placement %s, gradient chunks %s\n", ranks, placement.c_str(),
                     chunks.c_str());
}

std::string gpu_train_start_text(int ranks, std::string_view communicator_name, std::string_view backend,
                                 const DistTrainSettings& settings) {
  const std::string placement =
      settings.plan.empty() ? "greedy table-wise by bytes" : settings.plan + " (its tables only)";
  return format_text("distributed: %d ranks over %s (one %s each), placement %s\n", ranks,
                     std::string(communicator_name).c_str(), backend == "nccl" ? "GPU" : "CPU process",
                     placement.c_str());
}

std::string reduction_timings_text(const DistTrainSettings& settings, const DistTrainOptions& options,
                                   const DenseReductionTimings& timings) {
  const bool is_chunked = options.gradient_chunks > 0 || options.train.determinism == Determinism::kBitwise;
  if (is_chunked) return "reduction timings: none (gradient chunks gather the dense gradient in one all_gather)\n";
  return format_text(
      "reduction timings (rank 0, %s, %d bucket(s) of <= %lld B, mean of %lld steps): dense backward "
      "%.3f ms/step, exposed communication %.3f ms/step (waits %.3f), buckets in flight %.3f ms/step, %.1f started "
      "during the backward\n",
      settings.dense_reduction.c_str(), timings.buckets, static_cast<long long>(options.bucket_bytes),
      static_cast<long long>(timings.steps), timings.backward_ms, timings.exposed_comm_ms, timings.wait_ms,
      timings.in_flight_ms, timings.started_during_backward);
}

}  // namespace parity::train
