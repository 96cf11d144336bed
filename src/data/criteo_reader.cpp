// Criteo TSV: a streaming BatchReader (parses as it reads, on the prefetch thread) and the
// converter into the binary layout. Both skip bad lines up to max_bad_lines and report them.
#include <algorithm>
#include <limits>
#include <mutex>

#include "binary_format.hpp"
#include "parity/data/criteo.hpp"
#include "prefetching_reader.hpp"
#include "text_lines.hpp"

namespace parity::data {
namespace {

const std::string kOverlongReason =
    "line is longer than " + std::to_string(kCriteoMaxLineBytes) + " bytes";

// Reads the next good line into row `row` of the arrays; false at the end of the file.
Result<bool> next_good_line(TextLineSource& source, const CriteoLineParser& parser,
                            BadLineTracker& bad_lines, std::mutex* bad_lines_mutex, float* label,
                            float* dense, std::int64_t* ids, std::int64_t ids_stride) {
  for (;;) {
    std::string_view line;
    bool is_overlong = false;
    PARITY_ASSIGN_OR_RETURN(const bool has_line, source.next(&line, &is_overlong));
    if (!has_line) return false;
    CriteoLineParser::Error error;
    if (!is_overlong && parser.parse(line, label, dense, ids, ids_stride, &error)) return true;
    const std::string reason = is_overlong ? kOverlongReason : CriteoLineParser::describe(error);
    std::unique_lock<std::mutex> lock;
    if (bad_lines_mutex != nullptr) lock = std::unique_lock<std::mutex>(*bad_lines_mutex);
    PARITY_RETURN_IF_ERROR(bad_lines.add(source.path(), source.line_number(), reason));
  }
}

class CriteoTsvReader final : public PrefetchingReader {
 public:
  CriteoTsvReader(const ReaderOptions& options, DatasetSchema schema, CriteoLineParser parser,
                  std::unique_ptr<TextLineSource> source, std::string path)
      : PrefetchingReader(options),
        schema_(std::move(schema)),
        parser_(std::move(parser)),
        source_(std::move(source)),
        path_(std::move(path)),
        bad_lines_(options.max_bad_lines) {
    start();
  }
  ~CriteoTsvReader() override { stop(); }

  std::int64_t num_samples() const override { return -1; }
  const DatasetSchema& schema() const override { return schema_; }
  std::int64_t bad_line_count() const override {
    std::lock_guard<std::mutex> lock(bad_lines_mutex_);
    return bad_lines_.count();
  }
  std::vector<BadLine> first_bad_lines() const override {
    std::lock_guard<std::mutex> lock(bad_lines_mutex_);
    return bad_lines_.first_lines();
  }

 protected:
  Result<bool> produce(Batch* batch) override;
  Status restart_at(std::int64_t position) override;

 private:
  DatasetSchema schema_;
  CriteoLineParser parser_;
  std::unique_ptr<TextLineSource> source_;
  std::string path_;
  mutable std::mutex bad_lines_mutex_;
  BadLineTracker bad_lines_;
};

Result<bool> CriteoTsvReader::produce(Batch* batch) {
  const std::int64_t capacity = options().batch_size;
  batch->dense.resize(static_cast<std::size_t>(capacity * kCriteoDenseColumns));
  batch->labels.resize(static_cast<std::size_t>(capacity));
  batch->indices.resize(static_cast<std::size_t>(capacity * kCriteoCategoricalColumns));
  std::int64_t rows = 0;
  while (rows < capacity) {
    PARITY_ASSIGN_OR_RETURN(
        const bool has_row,
        next_good_line(*source_, parser_, bad_lines_, &bad_lines_mutex_, &batch->labels[rows],
                       &batch->dense[rows * kCriteoDenseColumns], &batch->indices[rows], capacity));
    if (!has_row) break;
    ++rows;
  }
  if (rows == 0 || (options().drop_last && rows < capacity)) return false;
  if (rows <
      capacity) {  // a short last batch: pack table t's ids from stride capacity to stride rows
    for (std::int64_t t = 1; t < kCriteoCategoricalColumns; ++t) {
      std::copy_n(batch->indices.begin() + t * capacity, rows, batch->indices.begin() + t * rows);
    }
    batch->dense.resize(static_cast<std::size_t>(rows * kCriteoDenseColumns));
    batch->labels.resize(static_cast<std::size_t>(rows));
    batch->indices.resize(static_cast<std::size_t>(rows * kCriteoCategoricalColumns));
  }
  batch->batch_size = rows;
  batch->offsets.resize(static_cast<std::size_t>(rows * kCriteoCategoricalColumns + 1));
  for (std::size_t i = 0; i < batch->offsets.size(); ++i)
    batch->offsets[i] = static_cast<std::int64_t>(i);
  return true;
}

Status CriteoTsvReader::restart_at(std::int64_t position) {
  PARITY_ASSIGN_OR_RETURN(source_, TextLineSource::open(path_));
  {
    std::lock_guard<std::mutex> lock(bad_lines_mutex_);
    bad_lines_ = BadLineTracker(options().max_bad_lines);
  }
  float label = 0;
  float dense[kCriteoDenseColumns];
  std::int64_t ids[kCriteoCategoricalColumns];
  for (std::int64_t skipped = 0; skipped < position; ++skipped) {
    PARITY_ASSIGN_OR_RETURN(
        const bool has_row,
        next_good_line(*source_, parser_, bad_lines_, &bad_lines_mutex_, &label, dense, ids, 1));
    PARITY_CHECK_ARG(has_row, "seek_samples: position ", position, " is past the end of ", path_,
                     " (", skipped, " samples)");
  }
  return Status::ok();
}

// Parses one file into one split, chunk by chunk.
Status convert_file(const std::string& tsv, const CriteoLineParser& parser, SplitWriter& writer,
                    std::int64_t max_bad_lines, std::int64_t* samples,
                    CriteoConvertReport* report) {
  constexpr std::int64_t kChunkSamples = 65536;
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<TextLineSource> source, TextLineSource::open(tsv));
  BadLineTracker bad_lines(max_bad_lines);
  std::vector<float> labels(kChunkSamples), dense(kChunkSamples * kCriteoDenseColumns);
  std::vector<std::uint8_t> label_bytes(kChunkSamples);
  std::vector<std::int64_t> ids(kChunkSamples * kCriteoCategoricalColumns);
  std::vector<const std::int64_t*> id_pointers(kCriteoCategoricalColumns);
  for (int t = 0; t < kCriteoCategoricalColumns; ++t)
    id_pointers[t] = ids.data() + t * kChunkSamples;
  bool is_done = false;
  while (!is_done) {
    std::int64_t rows = 0;
    while (rows < kChunkSamples) {
      PARITY_ASSIGN_OR_RETURN(
          const bool has_row,
          next_good_line(*source, parser, bad_lines, nullptr, &labels[rows],
                         &dense[rows * kCriteoDenseColumns], &ids[rows], kChunkSamples));
      if (!has_row) {
        is_done = true;
        break;
      }
      ++rows;
    }
    for (std::int64_t i = 0; i < rows; ++i) {
      label_bytes[i] = labels[i] != 0.0f ? 1 : 0;
      report->positives += label_bytes[i];
    }
    PARITY_RETURN_IF_ERROR(
        writer.write(*samples, rows, dense.data(), label_bytes.data(), id_pointers));
    *samples += rows;
  }
  report->lines += source->line_number();
  report->bad_lines += bad_lines.count();
  for (const BadLine& bad : bad_lines.first_lines()) {
    if (report->first_bad_lines.size() < BadLineTracker::kKeptLines)
      report->first_bad_lines.push_back(bad);
  }
  return Status::ok();
}

}  // namespace

Result<CriteoConvertReport> convert_criteo(const std::string& tsv, const DatasetSchema& schema,
                                           const std::string& out_dir,
                                           const CriteoConvertOptions& options) {
  PARITY_ASSIGN_OR_RETURN(CriteoLineParser parser, CriteoLineParser::create(schema));
  PARITY_CHECK_ARG(options.max_bad_lines >= 0, "max_bad_lines: ", options.max_bad_lines,
                   " is negative");
  CriteoConvertReport report;
  PARITY_ASSIGN_OR_RETURN(SplitWriter train_writer, SplitWriter::create(out_dir, "train", schema));
  PARITY_RETURN_IF_ERROR(convert_file(tsv, parser, train_writer, options.max_bad_lines,
                                      &report.train_samples, &report));
  PARITY_CHECK_ARG(report.train_samples > 0, "input file ", tsv, ": no samples (", report.lines,
                   " lines, ", report.bad_lines, " bad)");
  PARITY_RETURN_IF_ERROR(train_writer.finish(report.train_samples));
  PARITY_ASSIGN_OR_RETURN(SplitWriter eval_writer, SplitWriter::create(out_dir, "eval", schema));
  if (!options.eval_tsv.empty()) {
    PARITY_RETURN_IF_ERROR(convert_file(options.eval_tsv, parser, eval_writer,
                                        options.max_bad_lines, &report.eval_samples, &report));
  }
  PARITY_RETURN_IF_ERROR(eval_writer.finish(report.eval_samples));
  report.bytes_written = bytes_per_sample(schema) * (report.train_samples + report.eval_samples);

  DatasetInfo info;
  info.schema = schema;
  info.train_samples = report.train_samples;
  info.eval_samples = report.eval_samples;
  info.source = "criteo";
  info.planted_auc = std::numeric_limits<double>::quiet_NaN();  // no planted model in real data
  info.positive_rate = static_cast<double>(report.positives) /
                       static_cast<double>(report.train_samples + report.eval_samples);
  info.details = {{"lines", static_cast<double>(report.lines)},
                  {"bad_lines", static_cast<double>(report.bad_lines)}};
  PARITY_RETURN_IF_ERROR(write_manifest(out_dir, info));
  return report;
}

Result<std::unique_ptr<BatchReader>> open_criteo_tsv(const std::string& tsv,
                                                     const DatasetSchema& schema,
                                                     const ReaderOptions& options) {
  PARITY_CHECK_ARG(options.batch_size >= 1, "batch_size: ", options.batch_size,
                   " is out of range [1, ...]");
  PARITY_CHECK_ARG(options.prefetch_batches >= 0, "prefetch_batches: ", options.prefetch_batches,
                   " is negative");
  PARITY_CHECK_ARG(options.max_bad_lines >= 0, "max_bad_lines: ", options.max_bad_lines,
                   " is negative");
  PARITY_ASSIGN_OR_RETURN(CriteoLineParser parser, CriteoLineParser::create(schema));
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<TextLineSource> source, TextLineSource::open(tsv));
  return std::unique_ptr<BatchReader>(std::make_unique<CriteoTsvReader>(
      options, schema, std::move(parser), std::move(source), tsv));
}

}  // namespace parity::data
