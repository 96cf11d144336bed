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
  bench::TimingSettings timing;
};

Status bench_interaction(const BenchInteractionArgs& args) {
  bench::InteractionBenchRequest request = args.request;
  auto dtype = parse_dtype(args.dtype);
  if (!dtype.is_ok())
    return invalid_argument("bench interaction: --dtype: ", dtype.status().message());
  request.dtype = *dtype;
  PARITY_ASSIGN_OR_RETURN(request.timing, bench::timing_options_from_settings("bench interaction", args.timing));
  PARITY_RETURN_IF_ERROR(bench::validate_interaction_bench_request(request));
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench interaction"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(const std::string report, bench::run_interaction_bench(request, bench::gpu_bench_device()));
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
  cmd->add_option("--batch", r.batch, "Samples B");
  cmd->add_option("--embeddings", r.num_embeddings,
                  "Pooled embeddings F per sample (V = F + 1 vectors)");
  cmd->add_option("--dim", r.dim, "Vector dim D");
  cmd->add_option("--dtype", args->dtype, "Activations: bf16 or fp32 (the TF32 trainer's)");
  cmd->add_option("--stride", r.output_stride,
                  "Output row stride: -1 = width padded to 8 (the trainer's), 0 = packed");
  cmd->add_option("--check-samples", r.checked_samples,
                  "Samples checked against fp64 before timing");
  add_timing_flags(cmd, args->timing, TimingFlags::kAll);
  add_seed_option(cmd, r.seed, "Seed of the inputs");
  cmd->add_option("--out", r.out, "Write the results JSON here");
  cmd->callback([args, &outcome] { outcome.status = bench_interaction(*args); });
}

}  // namespace parity::cli
