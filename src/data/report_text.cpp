// What data generation and Criteo conversion wrote, as text (parity/data/dataset.hpp, criteo.hpp).
#include <chrono>

#include "core/text_format.hpp"
#include "parity/data/criteo.hpp"
#include "parity/data/dataset.hpp"

namespace parity::data {


std::string synthetic_report_text(const std::string& out_dir, const std::string& model_name,
                                  const DatasetSchema& schema, const SyntheticOptions& options,
                                  const SyntheticReport& report, double elapsed_seconds) {
  const auto total = static_cast<double>(options.train_samples + options.eval_samples);
  // The paths may be long: joined as strings, the numbers formatted.
  return "wrote " + out_dir + ": model " + model_name +
         format_text(", %zu tables, train %lld + eval %lld samples, %.1f MB in %.2f s (%.2f M samples/s)\n",
                     schema.tables.size(), static_cast<long long>(options.train_samples),
                     static_cast<long long>(options.eval_samples), static_cast<double>(report.bytes_written) / 1e6,
                     elapsed_seconds, total / elapsed_seconds / 1e6) +
         format_text("positive rate %.4f; planted model AUC %.4f on the %s split (target %.2f, zipf alpha %.2f, "
                     "seed %llu)\n",
                     report.positive_rate, report.planted_auc, options.eval_samples > 0 ? "eval" : "train",
                     options.planted_auc_target, options.zipf_alpha, static_cast<unsigned long long>(options.seed));
}

std::string criteo_report_text(const std::string& out_dir, const CriteoConvertReport& report,
                               double elapsed_seconds) {
  std::string text =
      "wrote " + out_dir +
      format_text(": %lld lines read, train %lld + eval %lld samples, %lld bad lines, %.1f MB in %.2f s "
                  "(%.2f M lines/s)\n",
                  static_cast<long long>(report.lines), static_cast<long long>(report.train_samples),
                  static_cast<long long>(report.eval_samples), static_cast<long long>(report.bad_lines),
                  static_cast<double>(report.bytes_written) / 1e6, elapsed_seconds,
                  static_cast<double>(report.lines) / elapsed_seconds / 1e6);
  for (const BadLine& bad : report.first_bad_lines) text += "bad line: " + bad.reason + "\n";
  return text;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<std::string> generate_synthetic_report(const DatasetSchema& schema, const std::string& model_name,
                                              const SyntheticOptions& options, const std::string& out_dir) {
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(const SyntheticReport report, generate_synthetic(schema, options, out_dir));
  return synthetic_report_text(out_dir, model_name, schema, options, report, seconds_since(start));
}

Result<std::string> convert_criteo_report(const std::string& tsv, const DatasetSchema& schema,
                                          const std::string& out_dir, const CriteoConvertOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(const CriteoConvertReport report, convert_criteo(tsv, schema, out_dir, options));
  return criteo_report_text(out_dir, report, seconds_since(start));
}

}  // namespace parity::data
