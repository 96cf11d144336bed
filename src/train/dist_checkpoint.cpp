// Per-rank checkpoints and re-sharding for the distributed trainer (see dist_checkpoint.hpp).
#include "train/dist_checkpoint.hpp"

#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

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

std::vector<TableBlob> dense_blobs(DenseReplica& dense) {
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
  meta["table_owner"] = parts.table_owner;
  meta["gradient_chunks"] = parts.gradient_chunks;
  const std::string meta_text = meta.dump();
  std::vector<BlobView> blobs;
  blobs.push_back({"meta", meta_text.data(), meta_text.size()});
  blobs.push_back({"history.step_losses", state.step_losses.data(), state.step_losses.size() * sizeof(double)});
  std::vector<TableBlob> pieces = parts.shard->table_blobs();
  if (comm.rank() == 0) {
    for (const auto& piece : dense_blobs(*parts.dense)) pieces.push_back(piece);
  }
  for (const auto& piece : pieces) blobs.push_back({piece.name, piece.data, piece.size_bytes});
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
  for (const auto& piece : dense_blobs(*parts.dense)) {
    PARITY_RETURN_IF_ERROR(copy_blob(root.blobs, root.path, piece.name, piece.data, piece.size_bytes));
  }
  std::vector<int> saved_owner;
  try {
    saved_owner = root.meta.at("table_owner").get<std::vector<int>>();
  } catch (const std::exception& e) {
    return invalid_argument(root.path, ": malformed checkpoint meta: ", e.what());
  }
  PARITY_CHECK_ARG(saved_owner.size() == parts.table_owner.size(), root.path, ": places ", saved_owner.size(),
                   " tables; the model has ", parts.table_owner.size());
  // Each owned table from the file of the rank that held it; every file must be of the same step.
  std::map<int, CheckpointFile> files;
  for (const auto& piece : parts.shard->table_blobs()) {
    const int table = std::stoi(piece.name.substr(std::strlen("embedding.table")));
    const int saved_rank = saved_owner[static_cast<std::size_t>(table)];
    PARITY_CHECK_ARG(saved_rank >= 0 && saved_rank < chosen, root.path, ": table ", table, " on rank ", saved_rank,
                     " of ", chosen);
    if (files.find(saved_rank) == files.end()) {
      PARITY_ASSIGN_OR_RETURN(CheckpointFile file,
                              read_file(dist_checkpoint_path(options.out_dir, saved_rank, chosen)));
      const std::int64_t step = file.meta.value("step", std::int64_t{-1});
      PARITY_CHECK_ARG(step == state->step, file.path, ": is at step ", step, " but ", root.path, " at step ",
                       state->step, " (an interrupted save: the set of ", chosen, " files is inconsistent)");
      files.emplace(saved_rank, std::move(file));
    }
    const CheckpointFile& file = files.at(saved_rank);
    PARITY_RETURN_IF_ERROR(copy_blob(file.blobs, file.path, piece.name, piece.data, piece.size_bytes));
  }
  return true;
}

}  // namespace parity::train::detail
