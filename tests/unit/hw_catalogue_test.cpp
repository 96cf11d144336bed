// The hardware catalogue: strict parsing (every rejection path with its message), the shipped
// files, lookup by name/alias, data-directory resolution and the brief's MI350X-vs-B200 figures.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "hw/hw_json.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::hw {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path shipped_hardware_dir() { return fs::path(PARITY_SOURCE_DIR) / "data" / "hardware"; }

json shipped_json(const std::string& file) {
  std::ifstream in(shipped_hardware_dir() / file);
  return json::parse(in);
}

// A fresh directory under the test temp dir, emptied first.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("parity_hw_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Parses `spec` expecting kInvalidArgument whose message contains every one of `fragments`.
void expect_rejected(const json& spec, std::initializer_list<std::string> fragments) {
  const auto result = parse_hardware_spec(spec, "test.json");
  ASSERT_FALSE(result.is_ok()) << "accepted: " << spec.dump();
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << result.status().to_string();
  const std::string& message = result.status().message();
  EXPECT_EQ(message.rfind("test.json", 0), 0u) << "message must start with the origin: " << message;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << message;
  }
}

TEST(HwCatalogueParse, GoodFileRoundTrips) {
  const json original = shipped_json("h200.json");
  const auto parsed = parse_hardware_spec(original, "h200.json");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->name, "h200");
  EXPECT_EQ(parsed->vendor, Vendor::kNvidia);
  EXPECT_EQ(parsed->hbm_capacity_gb.value, 141.0);
  EXPECT_EQ(parsed->hbm_capacity_gb.provenance.kind, ProvenanceKind::kVendorSpec);
  EXPECT_FALSE(parsed->hbm_capacity_gb.provenance.source.empty());
  EXPECT_EQ(parsed->matrix_instructions.size(), 3u);

  const json written = hardware_spec_to_json(*parsed);
  const auto reparsed = parse_hardware_spec(written, "round-trip");
  ASSERT_TRUE(reparsed.is_ok()) << reparsed.status().to_string();
  EXPECT_TRUE(*reparsed == *parsed);
  EXPECT_EQ(written, json(original)) << "to_json must reproduce the file's content";
}

TEST(HwCatalogueParse, RejectsNumberWithoutProvenance) {
  json spec = shipped_json("h200.json");
  spec["hbm_bandwidth_tbps"] = 4.8;
  expect_rejected(spec, {"key 'hbm_bandwidth_tbps'", "4.8", "has no provenance"});

  json no_block = shipped_json("h200.json");
  no_block["hbm_bandwidth_tbps"].erase("provenance");
  expect_rejected(no_block, {"key 'hbm_bandwidth_tbps'", "has no provenance"});
}

TEST(HwCatalogueParse, RejectsNonPositiveBandwidthCapacityAndCount) {
  json negative = shipped_json("h200.json");
  negative["hbm_bandwidth_tbps"]["value"] = -4.8;
  expect_rejected(negative, {"key 'hbm_bandwidth_tbps.value'", "-4.8", "must be > 0", "TB/s"});

  json zero_capacity = shipped_json("h200.json");
  zero_capacity["hbm_capacity_gb"]["value"] = 0;
  expect_rejected(zero_capacity, {"key 'hbm_capacity_gb.value'", "value 0", "must be > 0"});

  json zero_count = shipped_json("h200.json");
  zero_count["sm_count"]["value"] = 0;
  expect_rejected(zero_count, {"key 'sm_count.value'", "must be > 0"});

  json fractional_count = shipped_json("h200.json");
  fractional_count["sm_count"]["value"] = 132.5;
  expect_rejected(fractional_count, {"key 'sm_count.value'", "132.5", "whole number"});
}

TEST(HwCatalogueParse, RejectsUnknownKeysWithSuggestion) {
  json typo = shipped_json("h200.json");
  typo["hbm_bandwith_tbps"] = typo["hbm_bandwidth_tbps"];
  expect_rejected(typo, {"unknown key 'hbm_bandwith_tbps'", "did you mean 'hbm_bandwidth_tbps'"});

  json nested = shipped_json("h200.json");
  nested["tdp_watts"]["provenance"]["sorce"] = "x";
  expect_rejected(nested, {"unknown key 'tdp_watts.provenance.sorce'", "did you mean"});

  json unrelated = shipped_json("h200.json");
  unrelated["colour"] = "green";
  expect_rejected(unrelated, {"unknown key 'colour'", "known keys:", "dense_bf16_tflops"});
}

TEST(HwCatalogueParse, RejectsBadProvenance) {
  json kind = shipped_json("h200.json");
  kind["dense_fp8_tflops"]["provenance"]["kind"] = "vendor";
  expect_rejected(kind,
                  {"key 'dense_fp8_tflops.provenance.kind'", "unknown provenance kind 'vendor'",
                   "vendor_spec, measured_third_party, measured_here, derived"});

  json date = shipped_json("h200.json");
  date["dense_fp8_tflops"]["provenance"]["date"] = "2024";
  expect_rejected(date, {"key 'dense_fp8_tflops.provenance.date'", "'2024'", "YYYY-MM"});

  json month = shipped_json("h200.json");
  month["dense_fp8_tflops"]["provenance"]["date"] = "2024-13";
  expect_rejected(month, {"'2024-13'", "YYYY-MM"});

  json empty_source = shipped_json("h200.json");
  empty_source["dense_fp8_tflops"]["provenance"]["source"] = "";
  expect_rejected(empty_source, {"key 'dense_fp8_tflops.provenance.source'", "non-empty"});

  json no_kind = shipped_json("h200.json");
  no_kind["dense_fp8_tflops"]["provenance"].erase("kind");
  expect_rejected(no_kind, {"missing required key 'dense_fp8_tflops.provenance.kind'"});
}

TEST(HwCatalogueParse, RejectsMissingFieldsAndWrongTypes) {
  json missing = shipped_json("h200.json");
  missing.erase("tdp_watts");
  expect_rejected(missing, {"missing required key 'tdp_watts'"});

  json missing_name = shipped_json("h200.json");
  missing_name.erase("display_name");
  expect_rejected(missing_name, {"missing required key 'display_name'"});

  json string_value = shipped_json("h200.json");
  string_value["tdp_watts"]["value"] = "700";
  expect_rejected(string_value, {"key 'tdp_watts.value'", "expected a number", "string \"700\""});

  json number_name = shipped_json("h200.json");
  number_name["architecture"] = 42;
  expect_rejected(number_name, {"key 'architecture'", "expected a string", "number 42"});

  json array_quantity = shipped_json("h200.json");
  array_quantity["l2_cache_mib"] = json::array({50});
  expect_rejected(array_quantity, {"key 'l2_cache_mib'", "expected {\"value\"", "array [50]"});

  expect_rejected(json::array(), {"expected a JSON object", "array"});
}

TEST(HwCatalogueParse, RejectsBadEnumsNamesAndSchema) {
  json vendor = shipped_json("h200.json");
  vendor["vendor"] = "intel";
  expect_rejected(vendor, {"key 'vendor'", "unknown vendor 'intel'", "nvidia or amd"});

  json topology = shipped_json("h200.json");
  topology["scale_up_topology"] = "ring";
  expect_rejected(topology, {"key 'scale_up_topology'", "'ring'", "switched or full_mesh"});

  json name = shipped_json("h200.json");
  name["name"] = "H200";
  expect_rejected(name, {"key 'name'", "'H200'", "lower case"});

  json alias = shipped_json("h200.json");
  alias["aliases"] = json::array({"ok_name", 3});
  expect_rejected(alias, {"key 'aliases[1]'", "expected a string"});

  json schema = shipped_json("h200.json");
  schema["schema_version"] = 2;
  expect_rejected(schema, {"key 'schema_version'", "value 2", "expected 1"});
}

TEST(HwCatalogueParse, RejectsBadMatrixInstructions) {
  json empty = shipped_json("h200.json");
  empty["matrix_instructions"] = json::array();
  expect_rejected(empty, {"key 'matrix_instructions'", "non-empty array"});

  json no_provenance = shipped_json("h200.json");
  no_provenance["matrix_instructions"][1].erase("provenance");
  expect_rejected(no_provenance, {"key 'matrix_instructions[1]'", "has no provenance"});

  json dtype = shipped_json("h200.json");
  dtype["matrix_instructions"][0]["dtype"] = "int4";
  expect_rejected(dtype, {"key 'matrix_instructions[0].dtype'", "'int4'"});

  json extent = shipped_json("h200.json");
  extent["matrix_instructions"][0]["k"] = 0;
  expect_rejected(extent, {"key 'matrix_instructions[0].k'", "must be >= 1"});
}

TEST(HwCatalogueParse, RejectsInconsistentValues) {
  json warp = shipped_json("h200.json");
  warp["warp_size"]["value"] = 48;
  expect_rejected(warp, {"key 'warp_size.value'", "48", "32 or 64"});

  json llc = shipped_json("mi300x.json");
  llc["last_level_cache_mib"]["value"] = 16;
  expect_rejected(llc, {"key 'last_level_cache_mib.value'", "below l2_cache_mib"});

  // 18 links x 25 GB/s = 450; 460 is beyond the 1% rounding slack.
  json links = shipped_json("h200.json");
  links["scale_up_per_gpu_gbps"]["value"] = 460;
  expect_rejected(links, {"key 'scale_up_per_gpu_gbps.value'", "460", "exceeds", "450"});

  json clock = shipped_json("h200.json");
  clock["peak_rate_clock_mhz"]["value"] = 2000;
  expect_rejected(clock, {"key 'peak_rate_clock_mhz.value'", "exceeds boost_clock_mhz"});
}

TEST(HwCatalogueFile, MalformedJsonNamesFileLineAndColumn) {
  const fs::path dir = fresh_dir("malformed");
  const fs::path file = dir / "broken.json";
  write_text(file, "{\n  \"name\": \"x\",\n  \"vendor\": ,\n}\n");
  const auto result = load_hardware_spec_file(file);
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = result.status().message();
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("malformed JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  EXPECT_NE(message.find("column"), std::string::npos) << message;
}

TEST(HwCatalogueFile, MissingFileIsNotFound) {
  const auto result = load_hardware_spec_file(fresh_dir("missing") / "nope.json");
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find("nope.json"), std::string::npos);
}

TEST(HwCatalogueFile, ErrorsFromFilesNameTheFile) {
  const fs::path dir = fresh_dir("named");
  json spec = shipped_json("h200.json");
  spec["hbm_bandwidth_tbps"]["value"] = -1;
  write_text(dir / "h200.json", spec.dump());
  const auto result = load_catalogue(dir);
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find((dir / "h200.json").string() +
                                           ": key 'hbm_bandwidth_tbps.value'"),
            std::string::npos)
      << result.status().message();
}

TEST(HwCatalogueShipped, EveryFileLoads) {
  std::set<std::string> names;
  int file_count = 0;
  for (const auto& entry : fs::directory_iterator(shipped_hardware_dir())) {
    if (entry.path().extension() != ".json") continue;
    ++file_count;
    const auto spec = load_hardware_spec_file(entry.path());
    ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
    names.insert(spec->name);
  }
  EXPECT_EQ(file_count, 8);
  const std::set<std::string> expected{"h100",   "h200",   "b200",   "gb200",
                                       "mi300x", "mi325x", "mi350x", "mi355x"};
  EXPECT_EQ(names, expected);

  const auto catalogue = load_catalogue(shipped_hardware_dir());
  ASSERT_TRUE(catalogue.is_ok()) << catalogue.status().to_string();
  ASSERT_EQ(catalogue->size(), 8u);
  EXPECT_EQ(catalogue->front().name, "b200");  // sorted by vendor (NVIDIA first), then name
  EXPECT_EQ(catalogue->back().name, "mi355x");
}

// The peak rate must equal units x FLOP/clk/unit x clock with FLOP/clk/unit a power of two
// (2048 CDNA3, 4096 Hopper/CDNA4, 8192 Blackwell). Vendors round published peaks (MI350X: 2300
// for 2307, 0.3%), so 1% slack; a typo in sm_count, clock or rate breaks this by far more.
TEST(HwCatalogueShipped, PeakRatesMatchUnitsTimesClock) {
  const auto catalogue = load_catalogue(shipped_hardware_dir());
  ASSERT_TRUE(catalogue.is_ok()) << catalogue.status().to_string();
  for (const HardwareSpec& spec : *catalogue) {
    SCOPED_TRACE(spec.name);
    const double per_clock = dense_bf16_flops_per_clock_per_sm(spec);
    const double nearest_power_of_two = std::exp2(std::round(std::log2(per_clock)));
    EXPECT_NEAR(per_clock / nearest_power_of_two, 1.0, 0.01) << per_clock;
    EXPECT_GE(nearest_power_of_two, 2048.0);
    // FP8 doubles the BF16 rate on every catalogue GPU (same 1% rounding slack).
    EXPECT_NEAR(spec.dense_fp8_tflops.value / spec.dense_bf16_tflops.value, 2.0, 0.02);
    EXPECT_EQ(spec.warp_size.value, spec.vendor == Vendor::kNvidia ? 32.0 : 64.0);
    EXPECT_EQ(spec.scale_up_topology, spec.vendor == Vendor::kNvidia ? ScaleUpTopology::kSwitched
                                                                     : ScaleUpTopology::kFullMesh);
  }
}

TEST(HwCatalogueLookup, NamesAreCaseInsensitiveAndAliasesWork) {
  const auto catalogue = load_catalogue(shipped_hardware_dir());
  ASSERT_TRUE(catalogue.is_ok()) << catalogue.status().to_string();
  for (const char* name :
       {"h100", "H100", "h100_sxm", "H100-SXM", "h100 sxm5", "NVIDIA H100 80GB HBM3"}) {
    const auto spec = find_hardware(name, *catalogue);
    ASSERT_TRUE(spec.is_ok()) << name << ": " << spec.status().to_string();
    EXPECT_EQ(spec->name, "h100") << name;
  }
  const auto mi = find_hardware("MI350X", *catalogue);
  ASSERT_TRUE(mi.is_ok());
  EXPECT_EQ(mi->name, "mi350x");
}

TEST(HwCatalogueLookup, UnknownNameListsKnownOnes) {
  const auto result =
      find_hardware("h300", std::optional<fs::path>(fs::path(PARITY_SOURCE_DIR) / "data"));
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  const std::string& message = result.status().message();
  EXPECT_NE(message.find("unknown GPU 'h300'"), std::string::npos) << message;
  for (const char* name :
       {"h100", "h200", "b200", "gb200", "mi300x", "mi325x", "mi350x", "mi355x", "h100_sxm"}) {
    EXPECT_NE(message.find(name), std::string::npos) << name << " missing from: " << message;
  }
}

TEST(HwCatalogueLookup, RuntimeDeviceNamesFindTheirEntry) {
  const std::optional<fs::path> data(fs::path(PARITY_SOURCE_DIR) / "data");
  const std::pair<const char*, const char*> cases[] = {{"NVIDIA H100 80GB HBM3", "h100"},
                                                       {"NVIDIA H200", "h200"},
                                                       {"AMD Instinct MI300X", "mi300x"},
                                                       {"h100_80gb_hbm3", "h100"}};
  for (const auto& [runtime_name, entry] : cases) {
    const auto spec = find_hardware_for_device(runtime_name, data);
    ASSERT_TRUE(spec.is_ok()) << runtime_name << ": " << spec.status().to_string();
    EXPECT_EQ(spec->name, entry) << runtime_name;
  }
  const auto unknown = find_hardware_for_device("NVIDIA GeForce RTX 4090", data);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("device 'NVIDIA GeForce RTX 4090'"), std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("nvidia_geforce_rtx_4090"), std::string::npos)
      << unknown.status().message();
  const auto empty = find_hardware_for_device("", data);
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

TEST(HwCatalogueLookup, DuplicateNamesAcrossFilesAreRejected) {
  const fs::path dir = fresh_dir("duplicate");
  json first = shipped_json("h200.json");
  json second = shipped_json("h100_sxm.json");
  second["aliases"] = json::array({"h200_sxm"});  // claimed by h200.json too
  write_text(dir / "a.json", first.dump());
  write_text(dir / "b.json", second.dump());
  const auto result = load_catalogue(dir);
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("'h200_sxm' is already used by"), std::string::npos)
      << result.status().message();
}

TEST(HwCatalogueLookup, EmptyOrMissingDirectoryIsNotFound) {
  const auto empty = load_catalogue(fresh_dir("empty"));
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_NE(empty.status().message().find("no *.json"), std::string::npos);

  const auto missing = load_catalogue(fresh_dir("gone") / "hardware");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
}

// Sets or clears PARITY_DATA_DIR for one scope and restores the previous value.
class ScopedDataDirEnv {
 public:
  explicit ScopedDataDirEnv(const char* value) {
    if (const char* old = std::getenv("PARITY_DATA_DIR")) previous_ = old;
    if (value == nullptr) {
      unsetenv("PARITY_DATA_DIR");
    } else {
      setenv("PARITY_DATA_DIR", value, 1);
    }
  }
  ~ScopedDataDirEnv() {
    if (previous_.has_value()) {
      setenv("PARITY_DATA_DIR", previous_->c_str(), 1);
    } else {
      unsetenv("PARITY_DATA_DIR");
    }
  }
  ScopedDataDirEnv(const ScopedDataDirEnv&) = delete;
  ScopedDataDirEnv& operator=(const ScopedDataDirEnv&) = delete;

 private:
  std::optional<std::string> previous_;
};

TEST(HwCatalogueDataDir, ExplicitThenEnvironmentThenSourceTree) {
  const fs::path source_data = fs::path(PARITY_SOURCE_DIR) / "data";
  {
    ScopedDataDirEnv env(nullptr);
    EXPECT_EQ(resolve_data_dir(std::nullopt), source_data);
    EXPECT_EQ(catalogue_dir(std::nullopt), source_data / "hardware");
  }
  {
    ScopedDataDirEnv env("");  // empty counts as unset
    EXPECT_EQ(resolve_data_dir(std::nullopt), source_data);
  }
  {
    ScopedDataDirEnv env("/tmp/from_env");
    EXPECT_EQ(resolve_data_dir(std::nullopt), fs::path("/tmp/from_env"));
    EXPECT_EQ(resolve_data_dir(fs::path("/explicit")), fs::path("/explicit"));
    // The environment really is used for lookups: an empty catalogue there fails to load.
    const auto result = find_hardware("h200");
    ASSERT_FALSE(result.is_ok());
    EXPECT_NE(result.status().message().find("/tmp/from_env/hardware"), std::string::npos)
        << result.status().message();
  }
}

// The brief's table: MI350X vs B200 dense BF16 2300 vs 2250, HBM 288 vs 180 GB (1.6x), scale-up
// 538 vs 900 GB/s per GPU. Ratios of exactly stored decimals agree to a few ulp.
TEST(HwCatalogueCompare, Mi350xVersusB200MatchesTheBrief) {
  const auto mi350x = find_hardware("mi350x");
  const auto b200 = find_hardware("b200");
  ASSERT_TRUE(mi350x.is_ok()) << mi350x.status().to_string();
  ASSERT_TRUE(b200.is_ok()) << b200.status().to_string();
  EXPECT_EQ(mi350x->dense_bf16_tflops.value, 2300.0);
  EXPECT_EQ(b200->dense_bf16_tflops.value, 2250.0);
  EXPECT_EQ(mi350x->hbm_capacity_gb.value, 288.0);
  EXPECT_EQ(b200->hbm_capacity_gb.value, 180.0);
  EXPECT_EQ(mi350x->scale_up_per_gpu_gbps.value, 538.0);
  EXPECT_EQ(b200->scale_up_per_gpu_gbps.value, 900.0);
  const double ulp_slack = 4 * std::numeric_limits<double>::epsilon();
  EXPECT_NEAR(mi350x->hbm_capacity_gb.value / b200->hbm_capacity_gb.value, 1.6, 1.6 * ulp_slack);
  EXPECT_NEAR(mi350x->dense_bf16_tflops.value / b200->dense_bf16_tflops.value, 2300.0 / 2250.0,
              ulp_slack);
  EXPECT_NEAR(mi350x->scale_up_per_gpu_gbps.value / b200->scale_up_per_gpu_gbps.value, 0.5978,
              1e-4);
}

}  // namespace
}  // namespace parity::hw
