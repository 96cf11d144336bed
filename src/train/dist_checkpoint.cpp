// Per-rank checkpoints and re-sharding for the distributed trainer (see dist_checkpoint.hpp).
#include "train/dist_checkpoint.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>

namespace parity::train::detail {

namespace {

using nlohmann::json;

struct CheckpointFile {
  std::string path;
  std::vector<NamedBlob> blobs;
  json meta;
};

Result<CheckpointFile> read_file(const std::string& path) {
  CheckpointFile file;
  file.path = path;
  PARITY_ASSIGN_OR_RETURN(file.blobs, read_checkpoint_file(path));
  PARITY_ASSIGN_OR_RETURN(const NamedBlob* meta, find_blob(file.blobs, "meta"));
  try {
    file.meta = json::parse(meta->bytes.begin(), meta->bytes.end());
  } catch (const std::exception& e) {
    return invalid_argument(path, ": malformed checkpoint meta: ", e.what());
  }
  return file;
}

// Rank counts with a complete set of files in `dir` (every rank 0..n-1 present).
std::vector<int> complete_sets(const std::string& dir) {
  const std::regex pattern(R"(checkpoint\.rank(\d+)-of-(\d+)\.ckpt)");
  std::map<int, int> files_of_set;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, match, pattern)) continue;
    const int ranks = std::stoi(match[2].str());
    if (std::stoi(match[1].str()) < ranks) ++files_of_set[ranks];
  }
  std::vector<int> sets;
  for (const auto& [ranks, files] : files_of_set) {
    if (files == ranks) sets.push_back(ranks);
  }
  return sets;
}

Status copy_blob(const std::vector<NamedBlob>& blobs, const std::string& path, const std::string& name, void* data,
                 std::size_t size_bytes) {
  PARITY_ASSIGN_OR_RETURN(const NamedBlob* blob, find_blob(blobs, name));
  PARITY_CHECK_ARG(blob->bytes.size() == size_bytes, path, ": blob '", name, "' has ", blob->bytes.size(),
                   " bytes; this run needs ", size_bytes);
  if (size_bytes > 0) std::memcpy(data, blob->bytes.data(), size_bytes);
  return Status::ok();
}

std::vector<TablePiece> pieces_of_parts(const DistCheckpointParts& parts) {
  if (!parts.saved_pieces.empty()) return parts.saved_pieces;
  std::vector<TablePiece> pieces;
  const auto& tables = parts.options->train.spec.embedding.tables;
  for (std::size_t t = 0; t < parts.table_owner.size(); ++t) {
    pieces.push_back({static_cast<int>(t), parts.table_owner[t], 0, tables[t].num_rows, 0, tables[t].dim});
  }
  return pieces;
}

// The saved set's pieces: "pieces", or whole tables from a "table_owner" list.
Result<std::vector<TablePiece>> saved_pieces(const CheckpointFile& root, const model::ModelSpec& spec) {
  std::vector<TablePiece> pieces;
  try {
    if (root.meta.contains("pieces")) {
      for (const auto& entry : root.meta.at("pieces")) {
        pieces.push_back({entry.at(0).get<int>(), entry.at(1).get<int>(), entry.at(2).get<std::int64_t>(),
                          entry.at(3).get<std::int64_t>(), entry.at(4).get<int>(), entry.at(5).get<int>()});
      }
    } else {
      const auto owners = root.meta.at("table_owner").get<std::vector<int>>();
      for (std::size_t t = 0; t < owners.size() && t < spec.embedding.tables.size(); ++t) {
        pieces.push_back({static_cast<int>(t), owners[t], 0, spec.embedding.tables[t].num_rows, 0,
                          spec.embedding.tables[t].dim});
      }
    }
  } catch (const std::exception& e) {
    return invalid_argument(root.path, ": malformed checkpoint meta: ", e.what());
  }
  for (const auto& piece : pieces) {
    PARITY_CHECK_ARG(piece.table >= 0 && static_cast<std::size_t>(piece.table) < spec.embedding.tables.size(),
                     root.path, ": a piece of table ", piece.table, "; the model has ", spec.embedding.tables.size());
  }
  return pieces;
}

// Copies the overlap of a saved piece's buffer (`blob`: [saved rows][width], `width` columns
// starting at `saved_col`) into a local piece's buffer ([rows][local width]).
struct BufferRegion {
  const TablePiece* piece;
  int width;  // elements per row: the piece's columns, or 1 (row-wise Adagrad state)
};
void copy_overlap(const unsigned char* from, BufferRegion saved, unsigned char* to, BufferRegion local,
                  std::size_t element_bytes) {
  const std::int64_t row_begin = std::max(saved.piece->row_begin, local.piece->row_begin);
  const std::int64_t row_end = std::min(saved.piece->row_end, local.piece->row_end);
  const bool by_column = saved.width == saved.piece->cols() && local.width == local.piece->cols();
  const int col_begin = by_column ? std::max(saved.piece->col_begin, local.piece->col_begin) : 0;
  const int col_end = by_column ? std::min(saved.piece->col_end, local.piece->col_end) : local.width;
  const int saved_col = by_column ? col_begin - saved.piece->col_begin : 0;
  const int local_col = by_column ? col_begin - local.piece->col_begin : 0;
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    std::memcpy(to + static_cast<std::size_t>((r - local.piece->row_begin) * local.width + local_col) * element_bytes,
                from + static_cast<std::size_t>((r - saved.piece->row_begin) * saved.width + saved_col) * element_bytes,
                static_cast<std::size_t>(col_end - col_begin) * element_bytes);
  }
}

bool overlaps(const TablePiece& a, const TablePiece& b) {
  return a.table == b.table && a.row_begin < b.row_end && b.row_begin < a.row_end && a.col_begin < b.col_end &&
         b.col_begin < a.col_end;
}

// Fills every piece of `shard` from the saved pieces overlapping it, reading the saved ranks'
// files of set `chosen` into `files` as needed (each must be at `step`).
Status restore_pieces(const DistCheckpointParts& parts, EmbeddingShard& shard, const std::vector<TablePiece>& saved,
                      int chosen, std::int64_t step, std::map<int, CheckpointFile>& files) {
  const auto& options = parts.options->train;
  const auto& spec = options.spec;
  const std::size_t weight_bytes = dtype_size_bytes(spec.embedding.weight_dtype);
  for (std::size_t local = 0; local < shard.pieces().size(); ++local) {
    const TablePiece& mine = shard.pieces()[local];
    const EmbeddingShard::PieceBuffers buffers = shard.buffers(static_cast<int>(local));
    std::int64_t covered = 0;
    for (const TablePiece& piece : saved) {
      if (!overlaps(piece, mine)) continue;
      PARITY_CHECK_ARG(piece.rank >= 0 && piece.rank < chosen, "checkpoint: table ", piece.table, " on rank ",
                       piece.rank, " of ", chosen);
      if (files.find(piece.rank) == files.end()) {
        PARITY_ASSIGN_OR_RETURN(CheckpointFile file, read_file(dist_checkpoint_path(options.out_dir, piece.rank, chosen)));
        const std::int64_t file_step = file.meta.value("step", std::int64_t{-1});
        PARITY_CHECK_ARG(file_step == step, file.path, ": is at step ", file_step, " but rank 0's file at step ", step,
                         " (an interrupted save: the set of ", chosen, " files is inconsistent)");
        files.emplace(piece.rank, std::move(file));
      }
      const CheckpointFile& file = files.at(piece.rank);
      const std::string prefix = piece_blob_prefix(piece, spec);
      const auto copy = [&](const char* kind, unsigned char* to, int width, std::size_t element) -> Status {
        const std::string name = prefix + kind;
        PARITY_ASSIGN_OR_RETURN(const NamedBlob* blob, find_blob(file.blobs, name));
        const auto bytes = static_cast<std::size_t>(piece.rows() * (width == 1 ? 1 : piece.cols())) * element;
        PARITY_CHECK_ARG(blob->bytes.size() == bytes, file.path, ": blob '", name, "' has ", blob->bytes.size(),
                         " bytes; its piece needs ", bytes);
        copy_overlap(blob->bytes.data(), {&piece, width == 1 ? 1 : piece.cols()}, to, {&mine, width}, element);
        return Status::ok();
      };
      PARITY_RETURN_IF_ERROR(copy("weights", buffers.weights, mine.cols(), weight_bytes));
      for (const auto& [kind, state] : {std::pair{"state1", buffers.state1}, std::pair{"state2", buffers.state2}}) {
        if (state != nullptr) {
          PARITY_RETURN_IF_ERROR(copy(kind, reinterpret_cast<unsigned char*>(state), buffers.state_width, sizeof(float)));
        }
      }
      covered += (std::min(piece.row_end, mine.row_end) - std::max(piece.row_begin, mine.row_begin)) *
                 (std::min(piece.col_end, mine.col_end) - std::max(piece.col_begin, mine.col_begin));
    }
    PARITY_CHECK_ARG(covered == mine.rows() * mine.cols(), "checkpoint: the saved pieces of table ", mine.table,
                     " cover ", covered, " of the ", mine.rows() * mine.cols(), " elements this rank needs");
  }
  return Status::ok();
}

std::vector<TableBlob> dense_blobs(const DistCheckpointParts& parts) {
  if (parts.dense == nullptr) return parts.dense_blobs;
  DenseReplica& dense = *parts.dense;
  const auto bytes = [](const std::vector<float>& v) { return v.size() * sizeof(float); };
  return {{"dense.weights", dense.parameters().data(), bytes(dense.parameters())},
          {"dense.state1", dense.state1().data(), bytes(dense.state1())},
          {"dense.state2", dense.state2().data(), bytes(dense.state2())}};
}

}  // namespace

Status save_dist_checkpoint(const DistCheckpointParts& parts, const comm::Communicator& comm,
                            const TrainState& state) {
  const TrainOptions& options = parts.options->train;
  json meta = checkpoint_meta(state, options);
  meta["num_ranks"] = comm.size();
  meta["rank"] = comm.rank();
  json pieces = json::array();
  for (const auto& piece : pieces_of_parts(parts)) {
    pieces.push_back({piece.table, piece.rank, piece.row_begin, piece.row_end, piece.col_begin, piece.col_end});
  }
  meta["pieces"] = pieces;
  meta["gradient_chunks"] = parts.gradient_chunks;
  const std::string meta_text = meta.dump();
  std::vector<BlobView> blobs;
  blobs.push_back({"meta", meta_text.data(), meta_text.size()});
  blobs.push_back({"history.step_losses", state.step_losses.data(), state.step_losses.size() * sizeof(double)});
  std::vector<TableBlob> blob_pieces = parts.shard->table_blobs();
  if (comm.rank() == 0) {
    if (parts.replicas != nullptr) {
      for (const auto& piece : parts.replicas->table_blobs()) blob_pieces.push_back(piece);
    }
    for (const auto& piece : dense_blobs(parts)) blob_pieces.push_back(piece);
  }
  for (const auto& piece : blob_pieces) blobs.push_back({piece.name, piece.data, piece.size_bytes});
  return write_checkpoint_file(dist_checkpoint_path(options.out_dir, comm.rank(), comm.size()), blobs,
                               options.checkpoint_write);
}

Result<bool> load_dist_checkpoint(const DistCheckpointParts& parts, const comm::Communicator& comm,
                                  TrainState* state) {
  const TrainOptions& options = parts.options->train;
  // The set with the latest step; this rank count wins a tie.
  int chosen = 0;
  std::int64_t chosen_step = -1;
  std::map<int, CheckpointFile> root_files;
  for (const int ranks : complete_sets(options.out_dir)) {
    PARITY_ASSIGN_OR_RETURN(CheckpointFile root, read_file(dist_checkpoint_path(options.out_dir, 0, ranks)));
    const std::int64_t step = root.meta.value("step", std::int64_t{-1});
    if (step > chosen_step || (step == chosen_step && ranks == comm.size())) {
      chosen = ranks;
      chosen_step = step;
    }
    root_files.emplace(ranks, std::move(root));
  }
  if (chosen == 0) return false;
  const CheckpointFile& root = root_files.at(chosen);
  PARITY_RETURN_IF_ERROR(restore_checkpoint_meta(root.meta, root.path, options, state));
  PARITY_RETURN_IF_ERROR(restore_step_losses(root.blobs, root.path, state));
  for (const auto& piece : dense_blobs(parts)) {
    PARITY_RETURN_IF_ERROR(copy_blob(root.blobs, root.path, piece.name, piece.data, piece.size_bytes));
  }
  PARITY_ASSIGN_OR_RETURN(const std::vector<TablePiece> saved, saved_pieces(root, options.spec));
  std::map<int, CheckpointFile> files;
  files.emplace(0, root);
  PARITY_RETURN_IF_ERROR(restore_pieces(parts, *parts.shard, saved, chosen, state->step, files));
  if (parts.replicas != nullptr) {
    PARITY_RETURN_IF_ERROR(restore_pieces(parts, *parts.replicas, saved, chosen, state->step, files));
  }
  return true;
}

}  // namespace parity::train::detail
