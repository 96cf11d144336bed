// The world communicator of the MPI test executable (created in dist_main.cpp) and the fixture
// every distributed test uses: at the end of each test all ranks exchange whether they failed, so
// rank 0 (the only one printing gtest output) fails the test too when another rank did.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "parity/comm/communicator.hpp"

namespace parity::comm::testing {

Communicator& world();

class DistTest : public ::testing::Test {
 protected:
  void TearDown() override {
    const std::int64_t mine = HasFailure() ? 1 : 0;
    std::vector<std::int64_t> all(static_cast<std::size_t>(world().size()));
    const Status status = world().all_gather(&mine, all.data(), 1, DType::kI64);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    std::string failed;
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r] != 0 && static_cast<int>(r) != world().rank())
        failed.append(" ").append(std::to_string(r));
    }
    EXPECT_TRUE(failed.empty()) << "rank(s)" << failed
                                << " failed this test (their failures are printed as [rank N])";
  }
};

}  // namespace parity::comm::testing
