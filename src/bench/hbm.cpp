// CPU half of the memory-bandwidth benchmark: byte-count parsing, validation, rates and JSON.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "parity/bench/hbm.hpp"
#include "bench/results_json.hpp"

namespace parity::bench {
namespace {

struct ByteUnit {
  std::string_view suffix;
  double multiplier;
};
// Binary units spelled with "i", decimal ones without: "4GiB" = 4 * 2^30, "4GB" = 4e9.
constexpr ByteUnit kByteUnits[] = {
    {"", 1.0},           {"b", 1.0},          {"k", 1e3},           {"kb", 1e3},          {"kib", 1024.0},
    {"m", 1e6},          {"mb", 1e6},         {"mib", 1048576.0},   {"g", 1e9},           {"gb", 1e9},
    {"gib", 1073741824.0}, {"t", 1e12},       {"tb", 1e12},         {"tib", 1099511627776.0},
};

}  // namespace

Result<std::int64_t> parse_byte_count(const std::string& text, const std::string& parameter) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  std::string unit(end == nullptr ? "" : end);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const ByteUnit* matched = nullptr;
  for (const auto& candidate : kByteUnits) {
    if (unit == candidate.suffix) matched = &candidate;
  }
  PARITY_CHECK_ARG(end != begin && matched != nullptr && std::isfinite(number), parameter, "='", text,
                   "' is not a byte count; expected e.g. 4294967296, 4GiB, 512MiB or 1e9");
  const double bytes = number * matched->multiplier;
  PARITY_CHECK_ARG(bytes == std::floor(bytes) && std::abs(bytes) <= 0x1p62, parameter, "='", text,
                   "' is not a whole number of bytes below 2^62");
  return static_cast<std::int64_t>(bytes);
}

Status validate_hbm_total_bytes(std::int64_t total_bytes) {
  PARITY_CHECK_ARG(total_bytes > 0, "bytes=", total_bytes,
                   " must be > 0 (bytes read + bytes written; the copy moves half of it)");
  PARITY_CHECK_ARG(total_bytes % 2 == 0, "bytes=", total_bytes,
                   " must be even (bytes read + bytes written of one copy)");
  return Status::ok();
}

Result<std::int64_t> parse_hbm_total_bytes(const std::string& command, const std::string& text) {
  PARITY_ASSIGN_OR_RETURN(const std::int64_t total_bytes, parse_byte_count(text, "--bytes"));
  const Status valid = validate_hbm_total_bytes(total_bytes);
  if (!valid.is_ok()) return valid.with_context(command + " --bytes");
  return total_bytes;
}

double bandwidth_tbps(double bytes, double ms) { return ms > 0.0 ? bytes / (ms * 1e-3) / 1e12 : 0.0; }

CopyTiming make_copy_timing(std::string method, const SampleStats& stats, std::int64_t total_bytes) {
  CopyTiming timing;
  timing.method = std::move(method);
  timing.stats = stats;
  const auto bytes = static_cast<double>(total_bytes);
  timing.median_tbps = bandwidth_tbps(bytes, stats.median_ms);
  timing.p10_ms_tbps = bandwidth_tbps(bytes, stats.p10_ms);
  timing.p90_ms_tbps = bandwidth_tbps(bytes, stats.p90_ms);
  timing.min_ms_tbps = bandwidth_tbps(bytes, stats.min_ms);
  return timing;
}

nlohmann::json hbm_measurement_json(const HbmMeasurement& measurement) {
  auto method_json = [](const CopyTiming& timing) {
    nlohmann::json row = sample_stats_json(timing.stats);
    row["method"] = timing.method;
    row["median_tbps"] = timing.median_tbps;
    row["p10_ms_tbps"] = timing.p10_ms_tbps;
    row["p90_ms_tbps"] = timing.p90_ms_tbps;
    row["min_ms_tbps"] = timing.min_ms_tbps;
    return row;
  };
  const CopyTiming& ceiling = measurement.ceiling();
  return {
      {"total_bytes", measurement.total_bytes},
      {"copy_bytes", measurement.copy_bytes},
      {"byte_model", "bytes read + bytes written = 2 x copy_bytes; TB/s = total_bytes / time / 1e12"},
      {"timing",
       {{"warmup_iterations", measurement.options.warmup_iterations},
        {"repetitions", measurement.options.repetitions},
        {"warmup_ms", measurement.options.warmup_ms},
        {"rep_ms", measurement.options.rep_ms},
        {"cache", cache_mode_name(measurement.options.cache)},
        {"flush_bytes", measurement.flush_bytes}}},
      {"check", {{"method", "bitwise compare of dst against src after one copy of each method"},
                 {"mismatched_bytes", measurement.verified_mismatched_bytes}}},
      {"methods", {method_json(measurement.kernel), method_json(measurement.runtime_copy)}},
      {"ceiling", {{"method", ceiling.method}, {"median_tbps", ceiling.median_tbps}}},
  };
}

}  // namespace parity::bench
