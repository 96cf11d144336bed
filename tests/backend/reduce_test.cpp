// The portable block reduction against its fp64 CPU reference on the GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "reference/reduce.hpp"

namespace parity {
namespace {

TEST(GpuReduce, MatchesFp64ReferenceOnOddSizes) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(11);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  for (std::int64_t count : {0LL, 1LL, 31LL, 33LL, 255LL, 257LL, 100003LL, 5000011LL}) {
    std::vector<float> values(static_cast<std::size_t>(count));
    for (auto& v : values) v = static_cast<float>(rng.normal());
    auto device = gpu::upload(values);
    ASSERT_TRUE(device.is_ok()) << device.status().to_string();
    auto got = gpu::reduce_sum(*device, count);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    const double want = ref::sum(values);
    double abs_sum = 0.0;
    for (float v : values) abs_sum += std::abs(static_cast<double>(v));
    // Inputs are exact in fp64 and both sides accumulate in fp64: the only difference is the
    // order of additions, bounded by n * u_fp64 * sum|x| (Higham, recursive summation).
    const double tolerance = static_cast<double>(count) * std::ldexp(1.0, -53) * abs_sum + 1e-300;
    EXPECT_NEAR(*got, want, tolerance) << "count=" << count;
  }
}

TEST(GpuReduce, RejectsCountBeyondBuffer) {
  PARITY_REQUIRE_GPU();
  auto device = gpu::DeviceBuffer::allocate(16);
  ASSERT_TRUE(device.is_ok());
  auto got = gpu::reduce_sum(*device, 5);
  ASSERT_FALSE(got.is_ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("count=5"), std::string::npos);
}

}  // namespace
}  // namespace parity
