// tbe check's derived tolerances: the CPU path passes on several seeds, and the comparison can fail
// (an error just past a bound is caught).
#include <gtest/gtest.h>

#include <cmath>

#include "embedding/tbe_check_problem.hpp"
#include "parity/embedding/tbe_check.hpp"
#include "parity/embedding/tbe_cpu.hpp"

namespace parity::embedding {
namespace {

TEST(TbeCheck, CpuPathIsWithinTheDerivedBoundsOnSeveralSeeds) {
  for (std::uint64_t seed : {1u, 7u, 12345u}) {
    auto report = tbe_check_cpu(seed);
    ASSERT_TRUE(report.is_ok()) << report.status().to_string();
    ASSERT_EQ(report->rows.size(), 2u);
    EXPECT_TRUE(report->all_ok()) << "seed " << seed << "\n" << to_text(*report);
    for (const auto& row : report->rows) EXPECT_GT(row.tolerance, 0.0) << row.op;
  }
}

TEST(TbeCheck, ComparisonsCatchAnErrorPastTheBound) {
  auto c = make_tbe_check_problem(7);
  ASSERT_TRUE(c.is_ok());
  std::vector<float> out(static_cast<std::size_t>(c->problem.output_rows() * c->problem.output_cols()));
  const TbeBatchView view{c->indices.data(), c->offsets.data(), c->batch.per_sample_weights.data()};
  ASSERT_TRUE(cpu::tbe_forward(c->problem, c->weights.data(), view, out.data()).is_ok());
  auto forward = compare_tbe_forward("cpu", *c, out);
  ASSERT_TRUE(forward.ok());
  // Find a non-zero output and push it past its own bound (gamma_L sum|terms| <= (L + 1) u |sum|
  // times a modest factor for these positive-and-negative sums): 1e-3 relative is far past it.
  std::size_t i = 0;
  while (i < out.size() && out[i] == 0.0f) ++i;
  ASSERT_LT(i, out.size());
  out[i] *= 1.001f;
  EXPECT_FALSE(compare_tbe_forward("cpu", *c, out).ok());

  std::vector<float> weights(c->weights_ref.begin(), c->weights_ref.end());
  std::vector<float> state(static_cast<std::size_t>(c->problem.layout.total_rows()), 0.0f);
  ASSERT_TRUE(cpu::tbe_backward_fused(c->problem, c->optimizer, weights.data(), state.data(), nullptr, view,
                                      c->grad.data()).is_ok());
  ASSERT_TRUE(compare_tbe_update("cpu", *c, weights).ok());
  // An untouched weight one ulp off: the bound there is u |w| (< half an ulp away is impossible).
  const std::int64_t last = static_cast<std::int64_t>(weights.size()) - 1;
  weights[static_cast<std::size_t>(last)] = std::nextafter(weights[static_cast<std::size_t>(last)], 10.0f);
  weights[static_cast<std::size_t>(last)] = std::nextafter(weights[static_cast<std::size_t>(last)], 10.0f);
  EXPECT_FALSE(compare_tbe_update("cpu", *c, weights).ok());
}

}  // namespace
}  // namespace parity::embedding
