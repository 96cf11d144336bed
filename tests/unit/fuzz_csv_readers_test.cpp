// Fuzz tests of the CSV readers: the GEMM shape suite and AMD Origami's rankings. Each gets
// kMutatedInputsPerReader mutants of a small valid file (near-numbers such as "64x", "1e3" and
// "64.5" in every field, dropped fields, duplicated and deleted lines, byte edits); none may throw,
// every rejection must carry a message, and whatever is accepted must keep the invariants.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "parity/gemm/calibration_file.hpp"
#include "parity/gemm/origami_agreement.hpp"
#include "unit/fuzz_support.hpp"

namespace parity {
namespace {

using testing::FuzzVerdict;
using testing::Mutator;
using testing::verdict_of;

// The first `lines` lines of a shipped file.
std::string head_of(const std::string& relative, int lines) {
  std::ifstream in(std::filesystem::path(PARITY_SOURCE_DIR) / relative);
  std::string text, line;
  for (int i = 0; i < lines && std::getline(in, line); ++i) text += line + "\n";
  return text;
}

void fuzz_csv(std::uint64_t seed, const std::string& valid,
              const std::function<FuzzVerdict(const std::string&)>& judge) {
  testing::fuzz_from_valid(
      seed, valid, [&](Mutator& mutator) { return mutator.mutate_csv(valid); }, judge);
}

TEST(FuzzReaders, ShapeSuiteCsv) {
  // The comment line, the header and ten shapes.
  fuzz_csv(0x5A4E5, head_of("bench/shapes/gemm_shapes_dev.csv", 12), [](const std::string& text) {
    return verdict_of(gemm::parse_shape_suite(text, "shapes.csv"),
                      [](const gemm::ShapeSuite& suite) -> std::string {
                        if (suite.problems.empty() || suite.names.size() != suite.problems.size()) {
                          return "an empty suite or names and problems out of step";
                        }
                        for (std::size_t i = 0; i < suite.problems.size(); ++i) {
                          if (suite.names[i].empty()) return "an empty name";
                          if (!suite.problems[i].validate().is_ok()) return "an invalid problem";
                        }
                        return "";
                      });
  });
}

TEST(FuzzReaders, OrigamiRankingsCsv) {
  // The header and two problems of ten ranked configurations each.
  fuzz_csv(
      0x0419A, head_of("data/reference/origami/gfx942_bf16.csv", 21), [](const std::string& text) {
        return verdict_of(gemm::parse_origami_rankings(text, "origami.csv"),
                          [](const std::vector<gemm::OrigamiRanking>& rankings) -> std::string {
                            if (rankings.empty()) return "no rankings";
                            for (const auto& r : rankings) {
                              if (r.top.empty() || r.top.size() != r.latency.size()) {
                                return "configurations and latencies out of step";
                              }
                              if (!r.problem.validate().is_ok()) return "an invalid problem";
                              for (std::size_t i = 0; i < r.top.size(); ++i) {
                                const auto& c = r.top[i];
                                if (!(std::isfinite(r.latency[i]) && r.latency[i] > 0) ||
                                    c.tile_m < 1 || c.tile_n < 1 || c.tile_k < 1 || c.mi_m < 1 ||
                                    c.occupancy < 1 || c.group_size < 1) {
                                  return "a configuration with a non-positive field";
                                }
                              }
                            }
                            return "";
                          });
      });
}

}  // namespace
}  // namespace parity
