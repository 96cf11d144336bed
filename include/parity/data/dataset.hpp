// Training data for the recommendation models: a schema (dense features, categorical tables with
// a fixed multi-hot size), batches in the TBE layout, and readers that stream a split of a dataset
// directory (binary layout, docs/data.md) through a bounded prefetch queue filled by a background
// thread. Also the synthetic generator with a planted logistic signal.
//
// Legend: B batch size, F = T tables (feature f reads table f), L_t ids per sample of table t,
// N samples in a split. Bag (f, b) = indices[offsets[f*B + b] : offsets[f*B + b + 1]], so table
// f's ids of the batch are the contiguous block indices[offsets[f*B] : offsets[(f+1)*B]].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "parity/core/status.hpp"

namespace parity::data {

inline constexpr int kMaxDenseFeatures = 4096;
inline constexpr int kMaxIdsPerSample = 65536;

struct TableSchema {
  std::int64_t num_rows = 0;
  int ids_per_sample = 1;  ///< multi-hot size L_t, fixed per table
};

struct DatasetSchema {
  int num_dense = 13;
  std::vector<TableSchema> tables;
  /// num_dense in [0, 4096], at least one table, num_rows >= 1, ids_per_sample in [1, 65536].
  Status validate() const;
  /// Sum over tables of ids_per_sample: the indices of one sample.
  std::int64_t ids_per_sample_total() const;
};

/// One batch on the host in the TBE layout (include/parity/embedding/tbe.hpp): feature-major CSR.
struct Batch {
  std::int64_t batch_size = 0;
  std::vector<float> dense;           ///< B x num_dense, row-major (already log(x+1)-transformed)
  std::vector<std::int64_t> indices;  ///< per table ids in [0, num_rows)
  std::vector<std::int64_t> offsets;  ///< F*B + 1
  std::vector<float> labels;          ///< B, 0 or 1
};

/// Checks a batch against a schema: sizes, offsets (fixed multi-hot) and ids in range; labels 0/1.
Status validate_batch(const DatasetSchema& schema, const Batch& batch);

struct ReaderOptions {
  std::int64_t batch_size = 0;
  bool drop_last = true;     ///< a final partial batch is dropped (false: returned short)
  int prefetch_batches = 2;  ///< bounded queue depth; 0 reads synchronously in next()
  std::int64_t max_bad_lines =
      0;  ///< TSV only: bad lines skipped before failing (0: fail on the first)
};

/// A line of a text input that was rejected (1-based line number).
struct BadLine {
  std::int64_t line_number = 0;
  std::string reason;
};

/// Streams one split in order; a background thread prefetches into a bounded queue.
class BatchReader {
 public:
  virtual ~BatchReader() = default;
  /// Fills `batch` with the next batch; false at the end of the split (batch untouched).
  virtual Result<bool> next(Batch* batch) = 0;
  /// Samples handed out by next() so far (not those merely prefetched): the checkpoint position.
  virtual std::int64_t position_samples() const = 0;
  /// Resume exactly at `position` (0 restarts the split: a new epoch).
  virtual Status seek_samples(std::int64_t position) = 0;
  /// Samples in this split; -1 if unknown (streaming TSV).
  virtual std::int64_t num_samples() const = 0;
  virtual const DatasetSchema& schema() const = 0;
  /// Text inputs: lines rejected so far and the first few of them (binary inputs: none).
  virtual std::int64_t bad_line_count() const { return 0; }
  virtual std::vector<BadLine> first_bad_lines() const { return {}; }
};

/// What a dataset directory's manifest.json says (docs/data.md).
struct DatasetInfo {
  DatasetSchema schema;
  std::int64_t train_samples = 0;
  std::int64_t eval_samples = 0;
  std::string source;      ///< "synthetic" or "criteo"
  std::uint64_t seed = 0;  ///< synthetic only
  double planted_auc = 0;  ///< synthetic only: the planted model's AUC on the eval split
  double positive_rate = 0;
  /// Further provenance written to the manifest's "details" object (zipf_alpha, planted_scale,
  /// criteo bad_lines, ...).
  std::vector<std::pair<std::string, double>> details;
};

/// Reads and checks `dir`/manifest.json (not the data files).
Result<DatasetInfo> read_dataset_info(const std::string& dir);

/// `dir` holds a dataset written by generate_synthetic or convert_criteo; split "train" or "eval".
/// The data files are memory-mapped and their sizes checked against the manifest.
Result<std::unique_ptr<BatchReader>> open_dataset(const std::string& dir, const std::string& split,
                                                  const ReaderOptions& options);

struct SyntheticOptions {
  std::int64_t train_samples = 0;
  std::int64_t eval_samples = 0;
  std::uint64_t seed = 1;
  double zipf_alpha = 1.05;            ///< >= 0; 0 is uniform; row 0 is the most frequent
  double planted_auc_target = 0.78;    ///< in (0.5, 0.80]
  double positive_rate_target = 0.25;  ///< in (0, 1); Criteo's click rate is about 0.25
  int num_threads = 0;                 ///< 0: all cores; the output does not depend on it
};

/// SyntheticOptions as text (a command line, a config file): parsed strictly, errors naming the
/// setting as its flag ("--samples: ..."). An empty eval_samples is train_samples / 10 (at least 1).
struct SyntheticSettings {
  std::string samples;
  std::string eval_samples;
  std::string seed = "1";
  std::string zipf = "1.05";
  std::string planted_auc = "0.78";
  std::string threads = "0";
};
Result<SyntheticOptions> synthetic_options_from_settings(const SyntheticSettings& settings);

struct SyntheticReport {
  double planted_auc = 0;  ///< the planted model's own exact AUC on the eval split (train if none)
  double positive_rate = 0;  ///< over both splits
  std::int64_t bytes_written = 0;
  double planted_scale = 0;  ///< calibrated: logit = planted_bias + planted_scale * raw score
  double planted_bias = 0;
};

/// Writes train and eval splits to `out_dir` (created if missing) in the binary layout: Zipf ids,
/// log(1+x) of log-normal counts as dense features, labels drawn from a fixed logistic model whose
/// scale is calibrated so its own AUC is about planted_auc_target. Deterministic for a seed.
Result<SyntheticReport> generate_synthetic(const DatasetSchema& schema,
                                           const SyntheticOptions& options,
                                           const std::string& out_dir);

/// What a generation wrote, two lines: "wrote DIR: model M, T tables, train A + eval B samples,
/// X MB in S s (R M samples/s)" and the positive rate with the planted model's AUC.
std::string synthetic_report_text(const std::string& out_dir, const std::string& model_name,
                                  const DatasetSchema& schema, const SyntheticOptions& options,
                                  const SyntheticReport& report, double elapsed_seconds);
/// `parity data generate` as one call: generate_synthetic, timed, then synthetic_report_text.
Result<std::string> generate_synthetic_report(const DatasetSchema& schema, const std::string& model_name,
                                              const SyntheticOptions& options, const std::string& out_dir);

}  // namespace parity::data
