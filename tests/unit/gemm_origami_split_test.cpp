// The seeded port / held-out split of Origami's 200 ranked problems: the code's split is the one
// committed in data/reference/origami/split.csv, exactly half on each side, the same problems on
// both arches, and independent of the order the problems are listed in.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "parity/gemm/origami_agreement.hpp"

namespace parity::gemm {
namespace {

std::vector<OrigamiRanking> shipped(const std::string& arch) {
  const auto path =
      std::filesystem::path(PARITY_SOURCE_DIR) / "data/reference/origami" / (arch + "_bf16.csv");
  auto rankings = read_origami_rankings(path);
  EXPECT_TRUE(rankings.is_ok()) << rankings.status().message();
  return rankings.is_ok() ? *rankings : std::vector<OrigamiRanking>{};
}

std::map<std::string, std::string> committed_split() {
  std::ifstream in(std::filesystem::path(PARITY_SOURCE_DIR) / "data/reference/origami/split.csv");
  std::map<std::string, std::string> half_of;
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "problem,half");
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    if (comma == std::string::npos) continue;
    half_of[line.substr(0, comma)] = line.substr(comma + 1);
  }
  return half_of;
}

TEST(GemmOrigamiSplit, CodeMatchesTheCommittedFileOnBothArches) {
  const auto half_of = committed_split();
  ASSERT_EQ(half_of.size(), 200u);
  for (const std::string arch : {"gfx942", "gfx950"}) {
    const auto all = shipped(arch);
    ASSERT_EQ(all.size(), 200u);
    const auto port = select_half(all, RankingHalf::kPort);
    const auto held_out = select_half(all, RankingHalf::kHeldOut);
    EXPECT_EQ(port.size(), 100u);
    EXPECT_EQ(held_out.size(), 100u);
    for (const auto& r : port) EXPECT_EQ(half_of.at(r.problem_text), "port") << arch << " " << r.problem_text;
    for (const auto& r : held_out) {
      EXPECT_EQ(half_of.at(r.problem_text), "held-out") << arch << " " << r.problem_text;
    }
    EXPECT_EQ(select_half(all, RankingHalf::kAll).size(), 200u);
  }
}

TEST(GemmOrigamiSplit, DoesNotDependOnFileOrder) {
  auto all = shipped("gfx942");
  ASSERT_FALSE(all.empty());
  const auto port = select_half(all, RankingHalf::kPort);
  std::reverse(all.begin(), all.end());
  const auto port_reversed = select_half(all, RankingHalf::kPort);
  ASSERT_EQ(port.size(), port_reversed.size());
  for (std::size_t i = 0; i < port.size(); ++i) {
    EXPECT_EQ(port[i].problem_text, port_reversed[port.size() - 1 - i].problem_text);
  }
}

}  // namespace
}  // namespace parity::gemm
