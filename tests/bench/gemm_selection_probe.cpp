// GEMM selection probe, for changes that must keep every selection while making it cheaper.
//  - `dump`: every selection (h200, mi300x, mi350x; both top-k lists; top 1/5/10/16) on the suite
//    shapes (x 3 dtypes), seeded random shapes (aligned and misaligned, batches, layouts), deep-K
//    narrow ones and the latency report's draws, as indices and hex-float predictions: two builds
//    select identically when their dumps are byte-identical.
//  - `count HW LIST CLASS`: the latency report's draws (`gemm select --latency`, 1,000 samples)
//    of one class (misaligned: the first 300 of the first set; aligned: the second set), top-5,
//    steady state; under `valgrind --tool=callgrind --collect-atstart=no` each selection is
//    collected alone and dumped, so its instructions are one dump's total
//    (scripts/gemm_selection_instructions.sh); `count ... profile` dumps once, all selections
//    together, for callgrind_annotate.
#include <valgrind/callgrind.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "parity/gemm/calibration.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/gemm/workflow.hpp"

namespace {

using parity::DType;
using namespace parity::gemm;

constexpr std::uint64_t kLatencySeed = 20261129;  // measure_selection_latency's
constexpr int kLatencySamples = 1000;
constexpr int kMisalignedCounted = 300;

// One selector per problem class, as the latency report builds it.
class Selectors {
 public:
  Selectors(const LoadedModel& model, TopKList list) : model_(model), list_(list) {}
  Selector& of(const GemmProblem& problem) {
    const std::uint64_t key = problem_class_hash(problem_class(problem));
    auto it = by_class_.find(key);
    if (it == by_class_.end()) {
      Selector selector = make_selector(model_, SelectorOptions{.top_k_list = list_});
      selector.set_candidates(modelled_space(problem_class(problem), model_.device));
      it = by_class_.emplace(key, std::move(selector)).first;
    }
    return it->second;
  }

 private:
  const LoadedModel& model_;
  TopKList list_;
  std::map<std::uint64_t, Selector> by_class_;
};

// The latency report's draws: `samples` shapes, then as many with M and K rounded up to 16-byte
// rows (bf16 TN, packed).
std::vector<GemmProblem> latency_draws(bool aligned_set) {
  std::mt19937_64 rng(kLatencySeed);
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  std::vector<GemmProblem> out;
  for (int set = 0; set < 2; ++set) {
    for (int i = 0; i < kLatencySamples; ++i) {
      GemmProblem p;
      p.m = static_cast<std::int64_t>(std::exp(log_size(rng)));
      p.n = static_cast<std::int64_t>(std::exp(log_size(rng)));
      p.k = static_cast<std::int64_t>(std::exp(log_size(rng)));
      if (set == 1) {
        p.m = (p.m + 7) / 8 * 8;
        p.k = (p.k + 7) / 8 * 8;
      }
      if ((set == 1) == aligned_set) out.push_back(p);
    }
  }
  return out;
}

std::vector<GemmProblem> dump_shapes() {
  std::vector<GemmProblem> out = latency_draws(false);
  for (const GemmProblem& p : latency_draws(true)) out.push_back(p);
  for (const char* suite : {"gemm_shapes_dev", "gemm_shapes_test", "gemm_shapes_test2",
                            "gemm_shapes_test3", "gemm_shapes_test4",
                            "gemm_shapes_calibration_extra", "gemm_shapes_calibration_extra2"}) {
    const auto shapes =
        read_shape_suite(std::string(PARITY_SOURCE_DIR) + "/bench/shapes/" + suite + ".csv");
    if (!shapes) continue;
    for (GemmProblem p : shapes->problems) {
      for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
        p.a_dtype = p.b_dtype = p.c_dtype = dtype;
        out.push_back(p);
      }
    }
  }
  std::mt19937_64 rng(20261204);
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  std::uniform_int_distribution<int> small(0, 3);
  for (int i = 0; i < 3000; ++i) {
    GemmProblem p;
    p.m = static_cast<std::int64_t>(std::exp(log_size(rng)));
    p.n = static_cast<std::int64_t>(std::exp(log_size(rng)));
    p.k = static_cast<std::int64_t>(std::exp(log_size(rng)));
    p.batch = std::int64_t{1} << small(rng);
    p.layout = static_cast<GemmLayout>(small(rng));
    if (i % 3 == 0) {  // deep-K, narrow output
      p.k = 5000 + p.k % 27768;
      (i % 2 == 0 ? p.m : p.n) = 1 + p.m % 160;
    }
    if (i % 2 == 0) {  // 16-byte rows for every layout
      p.m = (p.m + 7) / 8 * 8;
      p.n = (p.n + 7) / 8 * 8;
      p.k = (p.k + 7) / 8 * 8;
    }
    out.push_back(p);
  }
  return out;
}

int dump() {
  const auto shapes = dump_shapes();
  for (const char* hw : {"h200", "mi300x", "mi350x"}) {
    const auto model = load_model(ModelSource{.hw = hw, .data_dir = std::nullopt, .calibration_file = ""});
    if (!model) return 1;
    for (TopKList list : {TopKList::kDistinctTiles, TopKList::kConfigs}) {
      Selectors selectors(*model, list);
      for (const GemmProblem& p : shapes) {
        for (std::size_t top : {1, 5, 10, 16}) {
          const auto s = selectors.of(p).select(p, top);
          std::printf("%s %s %zu %s:", hw, std::string(top_k_list_name(list)).c_str(), top,
                      p.describe().c_str());
          if (!s) {
            std::printf(" error\n");
            continue;
          }
          for (const RankedCandidate& r : s->top) std::printf(" %zu=%a", r.index, r.predicted_us);
          std::printf("%s\n", s->is_vendor_pick ? " vendor" : "");
        }
      }
    }
  }
  return 0;
}

int count(const std::string& hw, const std::string& list_name, const std::string& shape_class,
          bool dump_each) {
  const auto model = load_model(ModelSource{.hw = hw, .data_dir = std::nullopt, .calibration_file = ""});
  const auto list = parse_top_k_list(list_name);
  if (!model || !list) return 1;
  const bool aligned = shape_class == "aligned";
  std::vector<GemmProblem> shapes = latency_draws(aligned);
  if (!aligned) {
    std::erase_if(shapes, [](const GemmProblem& p) { return p.alignment_class_bytes() >= 16; });
    shapes.resize(std::min<std::size_t>(shapes.size(), kMisalignedCounted));
  }
  Selectors selectors(*model, *list);
  double checksum = 0.0;
  // Steady state: the class's constants are prepared (and the scratch grown) before counting.
  for (const GemmProblem& p : shapes) checksum += selectors.of(p).select(p, 5)->predicted_us;
  for (const GemmProblem& p : shapes) {
    Selector& selector = selectors.of(p);
    CALLGRIND_TOGGLE_COLLECT;
    const auto s = selector.select(p, 5);
    CALLGRIND_TOGGLE_COLLECT;
    if (dump_each) CALLGRIND_DUMP_STATS;
    checksum += s->predicted_us;
  }
  std::printf("%zu selections, checksum %a\n", shapes.size(), checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "dump") return dump();
  if (args.size() >= 4 && args[0] == "count") {
    return count(args[1], args[2], args[3], args.size() == 4 || args[4] != "profile");
  }
  std::fprintf(stderr, "usage: %s dump | count HW tiles|configs misaligned|aligned [profile]\n",
               argv[0]);
  return 2;
}
