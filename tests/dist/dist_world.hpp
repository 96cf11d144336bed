// The world communicator of the MPI test executable (created in dist_main.cpp) and the fixture
// every distributed test uses: at the end of each test all ranks exchange whether they failed, so
// rank 0 (the only one printing gtest output) fails the test too when another rank did.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "parity/comm/communicator.hpp"

namespace parity::comm::testing {

Communicator& world();

// A fresh directory every rank knows (rank 0 creates it under the temp directory from `prefix`
// and broadcasts the name): concurrent or earlier runs never share a test's files.
inline std::string shared_temp_dir(const std::string& prefix) {
  std::array<char, 256> name{};
  if (world().rank() == 0) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (mkdtemp(pattern.data()) != nullptr) std::strncpy(name.data(), pattern.c_str(), name.size() - 1);
  }
  const Status status = world().broadcast(name.data(), static_cast<std::int64_t>(name.size() / 4), DType::kI32, 0);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return name.data();
}

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
