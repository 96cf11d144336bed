// Criteo click logs (Kaggle / Terabyte TSV): one sample per line, 40 tab-separated columns:
// label (0 or 1), 13 integer counts (may be empty or negative), 26 categorical values of 1 to 8
// hex digits (may be empty). Dense values become log(1 + max(0, x)) (empty -> 0); a categorical
// value v becomes id 1 + v mod (num_rows - 1) of its table, an empty one the reserved id 0.
// Strict: a line with too few or too many columns, a label other than 0/1, a non-numeric or
// out-of-range integer, a non-hex or overlong categorical is a bad line, counted and reported with
// its 1-based number; more than max_bad_lines of them is an error naming the first one. CRLF line
// ends are accepted; gzip input is read through zlib (plain files too).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parity/data/dataset.hpp"

namespace parity::data {

inline constexpr int kCriteoDenseColumns = 13;
inline constexpr int kCriteoCategoricalColumns = 26;
inline constexpr int kCriteoColumns = 1 + kCriteoDenseColumns + kCriteoCategoricalColumns;
inline constexpr int kCriteoMaxHexDigits = 8;
inline constexpr int kCriteoMaxIntegerDigits = 18;  // |x| < 10^18 fits int64 with room
inline constexpr std::int64_t kCriteoMaxLineBytes = 1 << 16;

/// Parses lines into a batch's arrays. The schema must be Criteo's: 13 dense, 26 one-hot tables
/// of at least 2 rows.
class CriteoLineParser {
 public:
  static Result<CriteoLineParser> create(const DatasetSchema& schema);

  /// Why a line was rejected: column (0-based) and a static description.
  struct Error {
    int column = -1;  ///< 0-based; -1 for the line as a whole
    const char* what = nullptr;
    int found_columns = 0;  ///< for column-count errors
  };
  /// Parses `line` (without '\n'; one final '\r' is dropped). On success writes *label,
  /// dense[0..13) and ids[t * ids_stride] for t in [0, 26), returning true; on failure fills
  /// *error.
  bool parse(std::string_view line, float* label, float* dense, std::int64_t* ids,
             std::int64_t ids_stride, Error* error) const;
  /// "column 15 (C1): non-hex character" etc.
  static std::string describe(const Error& error);

 private:
  std::vector<std::uint64_t> hashed_rows_;  // num_rows - 1 per table
  std::vector<float> log1p_table_;          // log(1 + x) for small counts, the common case
};

struct CriteoConvertOptions {
  std::string eval_tsv;            ///< optional second file converted into the eval split
  std::int64_t max_bad_lines = 0;  ///< per file; bad lines skipped before failing
};

struct CriteoConvertReport {
  std::int64_t lines = 0;  ///< lines read (both files)
  std::int64_t train_samples = 0;
  std::int64_t eval_samples = 0;
  std::int64_t positives = 0;  ///< samples labelled 1 (both splits)
  std::int64_t bad_lines = 0;
  std::vector<BadLine> first_bad_lines;  ///< up to 20, "file:line" in the reason
  std::int64_t bytes_written = 0;
};

/// Converts `tsv` (and options.eval_tsv) into the binary layout in `out_dir`.
Result<CriteoConvertReport> convert_criteo(const std::string& tsv, const DatasetSchema& schema,
                                           const std::string& out_dir,
                                           const CriteoConvertOptions& options = {});

/// What a conversion wrote: lines, samples, bad lines, MB and rate, then each reported bad line.
std::string criteo_report_text(const std::string& out_dir, const CriteoConvertReport& report,
                               double elapsed_seconds);
/// `parity data convert-criteo` as one call: convert_criteo, timed, then criteo_report_text.
Result<std::string> convert_criteo_report(const std::string& tsv, const DatasetSchema& schema,
                                          const std::string& out_dir, const CriteoConvertOptions& options);

/// A BatchReader parsing `tsv` as it streams (num_samples() is -1; seek re-reads from the start).
Result<std::unique_ptr<BatchReader>> open_criteo_tsv(const std::string& tsv,
                                                     const DatasetSchema& schema,
                                                     const ReaderOptions& options);

}  // namespace parity::data
