// The committed TBE held-out test sets (bench/tbe/test_set_N, drawn by scripts/tbe_test_set.py):
// every layout file reads as a bench spec whose batch is the manifest's --batch, and no
// configuration shares its table count, batch and set of dims with a named configuration or with
// a configuration of any other set (each set was drawn excluding the earlier ones; a set that
// repeated one would score a case that was looked at).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "parity/bench/tbe_bench.hpp"

namespace parity::bench {
namespace {

using Shape = std::tuple<std::size_t, std::int64_t, std::set<int>>;

std::set<int> dims_of(const TbeBenchSpec& spec) {
  std::set<int> dims;
  for (const auto& table : spec.tables) dims.insert(table.dim);
  return dims;
}

std::string flag_value(const nlohmann::json& flags, const std::string& name) {
  for (std::size_t i = 0; i + 1 < flags.size(); ++i) {
    if (flags[i] == name) return flags[i + 1].get<std::string>();
  }
  return "";
}

TEST(TbeTestSets, LayoutsReadAndNoSetRepeatsANamedOrEarlierConfiguration) {
  // Named configurations: (tables, batch) always; dims too unless the seed draws them (C5).
  std::map<std::pair<std::size_t, std::int64_t>, std::pair<std::string, std::set<int>>> named;
  std::set<std::pair<std::size_t, std::int64_t>> named_any_dims;
  for (const auto& name : tbe_bench_config_names()) {
    const auto a = tbe_bench_spec(name, TbeBenchOverrides{}, 1);
    const auto b = tbe_bench_spec(name, TbeBenchOverrides{}, 2);
    ASSERT_TRUE(a.is_ok() && b.is_ok()) << name;
    const std::pair<std::size_t, std::int64_t> key{a->tables.size(), a->batch};
    if (dims_of(*a) != dims_of(*b)) named_any_dims.insert(key);
    named.emplace(key, std::pair{name, dims_of(*a)});
  }
  const std::filesystem::path root = std::filesystem::path(PARITY_SOURCE_DIR) / "bench" / "tbe";
  std::map<Shape, std::string> seen;
  int sets = 0;
  for (int n = 1; std::filesystem::exists(root / ("test_set_" + std::to_string(n))); ++n, ++sets) {
    const auto dir = root / ("test_set_" + std::to_string(n));
    std::ifstream in(dir / "manifest.json");
    ASSERT_TRUE(in.good()) << dir;
    std::stringstream text;
    text << in.rdbuf();
    const auto manifest = nlohmann::json::parse(text.str());
    ASSERT_FALSE(manifest["configurations"].empty()) << dir;
    for (const auto& c : manifest["configurations"]) {
      const std::string name = c["name"].get<std::string>();
      const auto spec = read_tbe_layout_file((dir / c["layout"].get<std::string>()).string());
      ASSERT_TRUE(spec.is_ok()) << name << ": " << spec.status().to_string();
      EXPECT_EQ(flag_value(c["flags"], "--batch"), std::to_string(spec->batch)) << name;
      const Shape shape{spec->tables.size(), spec->batch, dims_of(*spec)};
      const auto [at, inserted] = seen.emplace(shape, name);
      EXPECT_TRUE(inserted) << name << " shares tables, batch and dims with " << at->second;
      const auto named_at = named.find({spec->tables.size(), spec->batch});
      if (named_at != named.end()) {
        EXPECT_TRUE(named_any_dims.count(named_at->first) == 0 && named_at->second.second != dims_of(*spec))
            << name << " shares tables, batch and dims with " << named_at->second.first;
      }
    }
  }
  EXPECT_GE(sets, 14);
}

}  // namespace
}  // namespace parity::bench
