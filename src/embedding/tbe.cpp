// TBE layout, validation, names, report text and byte models (CPU only).
#include "parity/embedding/tbe.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace parity::embedding {
namespace {

constexpr std::int64_t kPaddedTableAlignElements = 32;
constexpr int kDramFetchBytes = 64;      // the granularity a row's lookup pulls from HBM
constexpr int kStrideStepBytes = 16;     // padded strides keep 16-byte rows
constexpr double kMinFetchSaving = 0.05;  // pad only for at least 5% fewer fetches

// Mean 64-byte fetches a row of row_bytes touches when rows start stride_bytes apart from a
// 64-byte aligned table start (the starts cycle through multiples of gcd(stride, 64)).
double mean_fetches_per_row(int row_bytes, int stride_bytes) {
  const int step = std::gcd(stride_bytes, kDramFetchBytes);
  double fetches = 0;
  for (int start = 0; start < kDramFetchBytes; start += step) fetches += (start + row_bytes + kDramFetchBytes - 1) / kDramFetchBytes;
  return fetches * step / kDramFetchBytes;
}

}  // namespace

int aligned_row_stride(int dim, DType weight_dtype) {
  const int element_bytes = static_cast<int>(dtype_size_bytes(weight_dtype));
  const int row_bytes = dim * element_bytes;
  const double packed_fetches = mean_fetches_per_row(row_bytes, row_bytes);
  int best_bytes = row_bytes;
  double best_fetches = packed_fetches;
  // Strides up to a third above the row: 56 -> 64 bytes (1.75 fetches -> 1), 120 -> 128; a 40-byte
  // row would need 64 (60% more memory) and stays packed.
  const int first = (row_bytes + kStrideStepBytes - 1) / kStrideStepBytes * kStrideStepBytes;
  for (int stride = first; 3 * (stride - row_bytes) <= row_bytes; stride += kStrideStepBytes) {
    const double fetches = mean_fetches_per_row(row_bytes, stride);
    if (fetches < best_fetches) best_bytes = stride, best_fetches = fetches;
  }
  if (best_fetches > (1.0 - kMinFetchSaving) * packed_fetches) return dim;
  const int stride = best_bytes / element_bytes;
  return stride <= kMaxEmbeddingDim ? stride : dim;
}

std::vector<TableSpec> with_aligned_row_strides(std::vector<TableSpec> tables, DType weight_dtype) {
  for (TableSpec& table : tables) table.row_stride = aligned_row_stride(table.dim, weight_dtype);
  return tables;
}

const char* pooling_mode_name(PoolingMode mode) {
  switch (mode) {
    case PoolingMode::kSum: return "sum";
    case PoolingMode::kMean: return "mean";
    case PoolingMode::kNone: return "none";
  }
  return "?";
}

const char* optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kRowwiseAdagrad: return "rowwise_adagrad";
    case OptimizerKind::kAdagrad: return "adagrad";
    case OptimizerKind::kAdam: return "adam";
  }
  return "?";
}

const char* bounds_check_mode_name(BoundsCheckMode mode) {
  switch (mode) {
    case BoundsCheckMode::kError: return "error";
    case BoundsCheckMode::kFix: return "fix";
    case BoundsCheckMode::kOff: return "off";
  }
  return "?";
}

Result<PoolingMode> parse_pooling_mode(const std::string& text) {
  for (auto mode : {PoolingMode::kSum, PoolingMode::kMean, PoolingMode::kNone}) {
    if (text == pooling_mode_name(mode)) return mode;
  }
  return invalid_argument("pooling='", text, "' is not one of sum, mean, none");
}

Result<OptimizerKind> parse_optimizer_kind(const std::string& text) {
  for (auto kind : {OptimizerKind::kSgd, OptimizerKind::kRowwiseAdagrad, OptimizerKind::kAdagrad,
                    OptimizerKind::kAdam}) {
    if (text == optimizer_kind_name(kind)) return kind;
  }
  return invalid_argument("optimizer='", text, "' is not one of sgd, rowwise_adagrad, adagrad, adam");
}

Result<BoundsCheckMode> parse_bounds_check_mode(const std::string& text) {
  for (auto mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix, BoundsCheckMode::kOff}) {
    if (text == bounds_check_mode_name(mode)) return mode;
  }
  return invalid_argument("bounds_check='", text, "' is not one of error, fix, off");
}

Result<TbeLayout> TbeLayout::create(std::vector<TableSpec> tables, std::vector<int> table_of_feature) {
  PARITY_CHECK_ARG(!tables.empty(), "tbe_layout: tables is empty; expected at least one table");
  const int num_tables = static_cast<int>(tables.size());
  if (table_of_feature.empty()) {
    for (int t = 0; t < num_tables; ++t) table_of_feature.push_back(t);
  }
  TbeLayout layout;
  layout.weights_offsets_.assign(1, 0);
  layout.row_bases_.assign(1, 0);
  for (int t = 0; t < num_tables; ++t) {
    const TableSpec& spec = tables[t];
    PARITY_CHECK_ARG(spec.num_rows >= 1, "tbe_layout: tables[", t, "].num_rows=", spec.num_rows,
                     "; expected >= 1");
    PARITY_CHECK_ARG(spec.dim >= kEmbeddingDimMultiple && spec.dim <= kMaxEmbeddingDim &&
                         spec.dim % kEmbeddingDimMultiple == 0,
                     "tbe_layout: tables[", t, "].dim=", spec.dim, "; expected a multiple of ",
                     kEmbeddingDimMultiple, " in [", kEmbeddingDimMultiple, ", ", kMaxEmbeddingDim, "]");
    // Guard the int64 element count: rows * dim must not overflow (2^62 is far beyond any device).
    PARITY_CHECK_ARG(spec.num_rows <= (std::int64_t{1} << 50), "tbe_layout: tables[", t,
                     "].num_rows=", spec.num_rows, "; expected <= 2^50");
    const int stride = spec.row_stride == 0 ? spec.dim : spec.row_stride;
    PARITY_CHECK_ARG(stride >= spec.dim && stride <= kMaxEmbeddingDim && stride % kEmbeddingDimMultiple == 0,
                     "tbe_layout: tables[", t, "].row_stride=", spec.row_stride, "; expected 0 (packed) or a multiple of ",
                     kEmbeddingDimMultiple, " in [dim=", spec.dim, ", ", kMaxEmbeddingDim, "]");
    std::int64_t offset = layout.weights_offsets_.back();
    if (stride != spec.dim) {
      // Padded rows start on 64-byte boundaries in every dtype (32 elements of 2 or 4 bytes).
      offset = (offset + kPaddedTableAlignElements - 1) / kPaddedTableAlignElements * kPaddedTableAlignElements;
      layout.is_packed_ = false;
      layout.weights_offsets_.back() = offset;
    }
    layout.weights_offsets_.push_back(offset + spec.num_rows * stride);
    layout.row_strides_.push_back(stride);
    layout.row_bases_.push_back(layout.row_bases_.back() + spec.num_rows);
    layout.max_dim_ = std::max(layout.max_dim_, spec.dim);
  }
  layout.output_column_offsets_.assign(1, 0);
  for (std::size_t f = 0; f < table_of_feature.size(); ++f) {
    const int t = table_of_feature[f];
    PARITY_CHECK_ARG(t >= 0 && t < num_tables, "tbe_layout: table_of_feature[", f, "]=", t,
                     "; expected a table in [0, ", num_tables, ")");
    layout.output_column_offsets_.push_back(layout.output_column_offsets_.back() + tables[t].dim);
  }
  int bits = 1;
  while (bits < 62 && (std::int64_t{1} << bits) < layout.row_bases_.back()) ++bits;
  layout.row_bits_ = bits;
  layout.tables_ = std::move(tables);
  layout.table_of_feature_ = std::move(table_of_feature);
  return layout;
}

double TbeLayout::padding_fraction() const {
  std::int64_t packed_elements = 0;
  for (const TableSpec& table : tables_) packed_elements += table.num_rows * table.dim;
  return static_cast<double>(total_weight_elements()) / static_cast<double>(packed_elements) - 1.0;
}

Status TbeProblem::validate() const {
  PARITY_CHECK_ARG(layout.num_tables() >= 1, "tbe: layout has no tables; build it with TbeLayout::create");
  PARITY_CHECK_ARG(batch_size >= 0, "tbe: batch_size=", batch_size, "; expected >= 0");
  PARITY_CHECK_ARG(num_indices >= 0, "tbe: num_indices=", num_indices, "; expected >= 0");
  PARITY_CHECK_ARG(max_bag_length_hint >= 0, "tbe: max_bag_length_hint=", max_bag_length_hint,
                   "; expected >= 0 (0 = unknown)");
  PARITY_CHECK_ARG(index_dtype == DType::kI32 || index_dtype == DType::kI64, "tbe: index_dtype=",
                   dtype_name(index_dtype), "; expected int32 or int64");
  PARITY_CHECK_ARG(index_dtype == DType::kI64 || num_indices <= 2147483647LL, "tbe: num_indices=",
                   num_indices, " does not fit int32 offsets; expected index_dtype=int64");
  for (auto [name, t] : {std::pair{"weight_dtype", weight_dtype}, std::pair{"output_dtype", output_dtype}}) {
    PARITY_CHECK_ARG(t == DType::kF32 || t == DType::kF16 || t == DType::kBF16, "tbe: ", name, "=",
                     dtype_name(t), "; expected fp32, fp16 or bf16");
  }
  if (pooling == PoolingMode::kNone) {
    for (int t = 0; t < layout.num_tables(); ++t) {
      PARITY_CHECK_ARG(layout.tables()[t].dim == layout.max_dim(), "tbe: pooling=none needs one dim for "
                       "all tables; tables[", t, "].dim=", layout.tables()[t].dim, ", expected ",
                       layout.max_dim());
    }
  }
  PARITY_CHECK_ARG(batch_size == 0 || layout.num_features() <= (std::int64_t{1} << 40) / batch_size,
                   "tbe: num_features*batch_size=", layout.num_features(), "*", batch_size,
                   "; expected <= 2^40 bags");
  return Status::ok();
}

Status OptimizerParams::validate() const {
  PARITY_CHECK_ARG(learning_rate >= 0.0f, "tbe optimizer: learning_rate=", learning_rate, "; expected >= 0");
  PARITY_CHECK_ARG(eps > 0.0f, "tbe optimizer: eps=", eps, "; expected > 0");
  PARITY_CHECK_ARG(weight_decay >= 0.0f, "tbe optimizer: weight_decay=", weight_decay, "; expected >= 0");
  PARITY_CHECK_ARG(max_norm >= 0.0f, "tbe optimizer: max_norm=", max_norm, "; expected >= 0 (0 = off)");
  PARITY_CHECK_ARG(weight_decay_mode == WeightDecayMode::kNone || kind == OptimizerKind::kRowwiseAdagrad,
                   "tbe optimizer: weight_decay_mode is only defined for rowwise_adagrad, got optimizer=",
                   optimizer_kind_name(kind));
  if (kind == OptimizerKind::kAdam) {
    PARITY_CHECK_ARG(beta1 >= 0.0f && beta1 < 1.0f, "tbe optimizer: beta1=", beta1, "; expected [0, 1)");
    PARITY_CHECK_ARG(beta2 >= 0.0f && beta2 < 1.0f, "tbe optimizer: beta2=", beta2, "; expected [0, 1)");
    PARITY_CHECK_ARG(step >= 1, "tbe optimizer: step=", step, "; expected >= 1 (Adam bias correction)");
  }
  return Status::ok();
}

std::int64_t optimizer_state1_elements(const TbeLayout& layout, OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return 0;
    case OptimizerKind::kRowwiseAdagrad: return layout.total_rows();
    case OptimizerKind::kAdagrad:
    case OptimizerKind::kAdam: return layout.total_weight_elements();
  }
  return 0;
}

std::int64_t optimizer_state2_elements(const TbeLayout& layout, OptimizerKind kind) {
  return kind == OptimizerKind::kAdam ? layout.total_weight_elements() : 0;
}

std::string BoundsCheckReport::describe() const {
  std::ostringstream out;
  out << bad_indices << " bad indices, " << bad_offsets << " bad offsets";
  if (last_offset_fixed) out << " (last offset repaired)";
  if (has_bad_offset) {
    out << "; first bad offset: offsets[" << first_bad_offset_position << "]=" << first_bad_offset_value;
  }
  if (has_bad_index) {
    out << "; first bad index: table " << first_bad_table << " (feature " << first_bad_feature << "), bag "
        << first_bad_bag << ", position " << first_bad_position << ", value " << first_bad_value
        << ", expected [0, " << first_bad_table_rows << ")";
  }
  return out.str();
}

Status bounds_check_status(const BoundsCheckReport& report, BoundsCheckMode mode) {
  if (mode != BoundsCheckMode::kError || report.is_clean()) return Status::ok();
  return invalid_argument("tbe bounds check: ", report.describe());
}

TbeByteModel tbe_byte_model(const TbeProblem& problem, OptimizerKind optimizer,
                            const std::vector<std::int64_t>& indices_per_feature,
                            const std::vector<std::int64_t>& unique_rows_per_feature) {
  const TbeLayout& layout = problem.layout;
  const double s_w = static_cast<double>(dtype_size_bytes(problem.weight_dtype));
  const double s_o = static_cast<double>(dtype_size_bytes(problem.output_dtype));
  const double s_i = static_cast<double>(dtype_size_bytes(problem.index_dtype));
  const double s_g = 4.0;
  const double n = static_cast<double>(problem.num_indices);
  const double psw = problem.has_per_sample_weights ? 4.0 * n : 0.0;
  double rows = 0, unique_rows = 0, grad_rows = 0, row_updates = 0;
  for (int f = 0; f < layout.num_features(); ++f) {
    const double d = layout.feature_dim(f);
    const double n_f = static_cast<double>(indices_per_feature.at(f));
    const double u_f = static_cast<double>(unique_rows_per_feature.at(f));
    rows += n_f * d * s_w;
    unique_rows += u_f * d * s_w;
    grad_rows += n_f * d * s_g;
    double state_bytes = 0;
    switch (optimizer) {
      case OptimizerKind::kSgd: break;
      case OptimizerKind::kRowwiseAdagrad: state_bytes = 4; break;
      case OptimizerKind::kAdagrad: state_bytes = 4 * d; break;
      case OptimizerKind::kAdam: state_bytes = 8 * d; break;
    }
    row_updates += 2 * u_f * (d * s_w + state_bytes);
  }
  const double output = static_cast<double>(problem.output_rows()) *
                        static_cast<double>(problem.output_cols()) * s_o;
  const double index_bytes = n * s_i + static_cast<double>(problem.num_offsets()) * s_i;
  TbeByteModel model;
  model.forward_bytes = rows + output + index_bytes + psw;
  model.forward_unique_rows_bytes = unique_rows + output + index_bytes + psw;
  model.backward_bytes = n * s_i + grad_rows + row_updates + psw;
  model.bounds_check_bytes = index_bytes;
  return model;
}

// Long chunks: C >= max_dim keeps the partials <= 8 B per index; warps take chunks in order, so a
// shorter chunk keeps fewer tables' grad_output rows live at once and more of them in L2 (on C2,
// C = 128 read ~12% fewer DRAM bytes than 256 and was the fastest; docs/embedding.md). Short
// chunks: at least ~8192 chunks (about 2.5x the warps an H200 holds at once in the chunk kernel:
// 132 SMs x 6 blocks x 4 warps), never below 32 positions, nor below the length that keeps the
// partials (8 max_dim bytes per chunk) within 32 B per index — or, by default, within 32 MiB when
// that is more: a small batch of wide rows (test set 4's 09, 196k one-hot indices, D <= 512) was
// otherwise cut into C = 128-position chunks, 1536 warps walking 128 positions each.
std::int64_t tbe_backward_chunk_positions(std::int64_t num_indices, int max_dim, BackwardChunkLength length) {
  constexpr std::int64_t kLongChunkMinPositions = 128;
  constexpr std::int64_t kShortChunkTarget = 8192;
  constexpr std::int64_t kShortChunkMinPositions = 32;
  constexpr std::int64_t kPartialBytesPerIndex = 32;
  constexpr std::int64_t kSmallBatchPartialBytes = std::int64_t{32} << 20;
  const std::int64_t long_chunk = std::max<std::int64_t>(kLongChunkMinPositions, max_dim);
  if (length == BackwardChunkLength::kLong) return long_chunk;
  std::int64_t partial_floor = (max_dim + 3) / 4;  // 8 max_dim / C <= kPartialBytesPerIndex
  if (length == BackwardChunkLength::kShort && kPartialBytesPerIndex * num_indices < kSmallBatchPartialBytes) {
    // Fewest positions per chunk with (num_indices / C) x 8 max_dim <= kSmallBatchPartialBytes.
    const std::int64_t partial_bytes_per_chunk = 8 * static_cast<std::int64_t>(max_dim);
    partial_floor = (num_indices * partial_bytes_per_chunk + kSmallBatchPartialBytes - 1) / kSmallBatchPartialBytes;
  }
  const std::int64_t floor = std::max(kShortChunkMinPositions, partial_floor);
  return std::max(floor, std::min(long_chunk, (num_indices + kShortChunkTarget - 1) / kShortChunkTarget));
}

}  // namespace parity::embedding
