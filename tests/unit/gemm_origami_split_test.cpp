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

TEST(GemmOrigamiSplit, LayoutComesFromTheFileName) {
  EXPECT_EQ(origami_file_layout("data/reference/origami/gfx942_bf16.csv"), GemmLayout::kTN);
  EXPECT_EQ(origami_file_layout("gfx950_bf16_NN.csv"), GemmLayout::kNN);
  EXPECT_EQ(origami_file_layout("gfx950_bf16_NT.csv"), GemmLayout::kNT);
  EXPECT_EQ(origami_file_layout("gfx942_f16_TT.csv"), GemmLayout::kTT);
  EXPECT_EQ(origami_file_layout("x/gfx942_bf16_TN.csv"), GemmLayout::kTN);
  // Not a layout suffix: lower case, another length, no underscore.
  EXPECT_EQ(origami_file_layout("gfx942_bf16_nn.csv"), GemmLayout::kTN);
  EXPECT_EQ(origami_file_layout("gfx942_bf16_NNN.csv"), GemmLayout::kTN);
  EXPECT_EQ(origami_file_layout("NN.csv"), GemmLayout::kTN);
}

// The second reference set (Origami's NN-layout baselines of a later revision, the held-out set
// of docs/gemm_model.md): the same 200 problems in the same order as the TN files, every problem
// tagged NN, so the seeded split applies to it unchanged.
TEST(GemmOrigamiSplit, NnFilesListTheSameProblemsWithTheirLayout) {
  for (const std::string arch : {"gfx942", "gfx950"}) {
    const auto tn = shipped(arch);
    const auto path = std::filesystem::path(PARITY_SOURCE_DIR) / "data/reference/origami" /
                      (arch + "_bf16_NN.csv");
    const auto nn = read_origami_rankings(path);
    ASSERT_TRUE(nn.is_ok()) << nn.status().message();
    ASSERT_EQ(nn->size(), tn.size()) << arch;
    for (std::size_t i = 0; i < nn->size(); ++i) {
      EXPECT_EQ((*nn)[i].problem_text, tn[i].problem_text) << arch;
      EXPECT_EQ((*nn)[i].problem.layout, GemmLayout::kNN) << arch;
      EXPECT_EQ(tn[i].problem.layout, GemmLayout::kTN) << arch;
      EXPECT_EQ((*nn)[i].top.size(), 10u) << arch << " " << (*nn)[i].problem_text;
    }
  }
}

}  // namespace
}  // namespace parity::gemm
