// Provenance fields of results files in a CPU build ("device": null) and the JSON writer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "bench/results_json.hpp"

namespace parity::bench {
namespace {

TEST(BenchProvenance, CpuBuildHasHostAndBuildFieldsAndNullDevice) {
  std::string arg0 = "parity";
  std::string arg1 = "--reps=3";
  const nlohmann::json doc = provenance_json({arg0, arg1}, 1234);
  for (const char* key : {"commit", "version", "build_type", "cuda_enabled", "compiled_archs", "hostname",
                          "timestamp_utc", "argv", "seed", "device"}) {
    EXPECT_TRUE(doc.contains(key)) << "missing " << key << " in " << doc.dump();
  }
  EXPECT_TRUE(doc["device"].is_null()) << doc.dump();  // this test binary never links parity_gpu
  EXPECT_EQ(doc["seed"].get<std::uint64_t>(), 1234u);
  EXPECT_EQ(doc["argv"], nlohmann::json({"parity", "--reps=3"}));
  EXPECT_FALSE(doc["commit"].get<std::string>().empty());
  const std::string timestamp = doc["timestamp_utc"].get<std::string>();
  EXPECT_TRUE(std::regex_match(timestamp, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << timestamp;
}

TEST(BenchProvenance, WritesJsonCreatingDirectories) {
  const auto root = std::filesystem::temp_directory_path() / ("parity_prov_" + std::to_string(::getpid()));
  const auto file = root / "a" / "b" / "out.json";
  const nlohmann::json doc = {{"median_ms", 1.5}, {"device", nullptr}};
  const Status status = write_json_file(file.string(), doc);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  std::ifstream in(file);
  EXPECT_EQ(nlohmann::json::parse(in), doc);
  std::filesystem::remove_all(root);
}

TEST(BenchProvenance, WriteFailuresNameThePath) {
  const Status empty = write_json_file("", nlohmann::json::object());
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.message().find("path is empty"), std::string::npos) << empty.message();

  // A regular file where a directory is needed: the directory cannot be created.
  const auto blocker = std::filesystem::temp_directory_path() / ("parity_blocker_" + std::to_string(::getpid()));
  { std::ofstream(blocker) << "x"; }
  const std::string path = (blocker / "out.json").string();
  const Status blocked = write_json_file(path, nlohmann::json::object());
  EXPECT_EQ(blocked.code(), StatusCode::kIoError) << blocked.to_string();
  EXPECT_NE(blocked.message().find(blocker.string()), std::string::npos) << blocked.message();
  std::filesystem::remove(blocker);
}

}  // namespace
}  // namespace parity::bench
