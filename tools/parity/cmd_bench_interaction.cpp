// `parity bench interaction`: the dot interaction alone on the GPU, every GPU variant of the
// forward and backward checked against fp64, then timed (parity/bench/interaction_bench.hpp does
// the work). Arguments are validated first (exit 2), then the device is required (exit 3).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "flags.hpp"
#include "parity/bench/interaction_bench.hpp"

namespace parity::cli {
namespace {

struct BenchInteractionArgs {
  bench::InteractionBenchRequest request;
  std::string dtype = "bf16";
  int warmup = 10;
  int reps = 50;
  std::string cache = "flush";
  double warmup_ms = 0.0;
  double rep_ms = 0.0;
  std::string flush_bytes = "0";
};

Status bench_interaction(const BenchInteractionArgs& args) {
  bench::InteractionBenchRequest request = args.request;
  auto dtype = parse_dtype(args.dtype);
  if (!dtype.is_ok())
    return invalid_argument("bench interaction: --dtype: ", dtype.status().message());
  request.dtype = *dtype;
  PARITY_ASSIGN_OR_RETURN(
      request.timing,
      timing_options_from_flags("bench interaction", args.warmup, args.reps, args.cache,
                                args.warmup_ms, args.rep_ms, args.flush_bytes));
  PARITY_RETURN_IF_ERROR(bench::validate_interaction_bench_request(request));
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench interaction"));
#ifdef PARITY_HAS_CUDA
  bench::InteractionBenchDevice device;
  device.time = [](const std::function<Status(gpu::StreamHandle)>& work,
                   const bench::TimingOptions& options, gpu::StreamHandle stream) {
    return bench::time_on_device(work, options, stream);
  };
  device.properties = [](int index) { return gpu::device_properties(index); };
  device.clocks = [](int index) { return bench::read_device_clocks(index); };
  PARITY_ASSIGN_OR_RETURN(const std::string report, bench::run_interaction_bench(request, device));
  std::fputs(report.c_str(), stdout);
#endif
  return Status::ok();
}

}  // namespace

void add_bench_interaction_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchInteractionArgs>();
  auto& r = args->request;
  auto* cmd = bench.add_subcommand("interaction",
                                   "Dot interaction forward and backward, every GPU variant (GPU)");
  cmd->add_option("--batch", r.batch, "Samples B")->capture_default_str();
  cmd->add_option("--embeddings", r.num_embeddings,
                  "Pooled embeddings F per sample (V = F + 1 vectors)")
      ->capture_default_str();
  cmd->add_option("--dim", r.dim, "Vector dim D")->capture_default_str();
  cmd->add_option("--dtype", args->dtype, "Activations: bf16 or fp32 (the TF32 trainer's)")
      ->capture_default_str();
  cmd->add_option("--stride", r.output_stride,
                  "Output row stride: -1 = width padded to 8 (the trainer's), 0 = packed")
      ->capture_default_str();
  cmd->add_option("--check-samples", r.checked_samples,
                  "Samples checked against fp64 before timing")
      ->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "Untimed repetitions")->capture_default_str();
  cmd->add_option("--reps", args->reps, "Timed repetitions")->capture_default_str();
  cmd->add_option("--cache", args->cache,
                  "flush (2 x L2 memset between repetitions), flush-clean or warm");
  add_time_based_flags(cmd, args->warmup_ms, args->rep_ms, args->flush_bytes);
  add_seed_option(cmd, r.seed, "Seed of the inputs");
  cmd->add_option("--out", r.out, "Write the results JSON here");
  cmd->callback([args, &outcome] { outcome.status = bench_interaction(*args); });
}

}  // namespace parity::cli
