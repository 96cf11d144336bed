// Helpers for the data tests: a per-test temporary directory and small schemas.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "parity/data/dataset.hpp"

namespace parity::data::testing {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("parity_data_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

// Three tables: one-hot small, multi-hot, and one whose ids need int64 in the files.
inline DatasetSchema small_schema() {
  DatasetSchema schema;
  schema.num_dense = 13;
  schema.tables = {{100, 1}, {1000, 3}, {std::int64_t{3} << 31, 2}};
  return schema;
}

}  // namespace parity::data::testing
