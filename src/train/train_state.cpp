// Checkpoint save/load of the trainer's state (see train_state.hpp).
#include "train/train_state.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

namespace parity::train::detail {

using nlohmann::json;

json checkpoint_meta(const TrainState& state, const TrainOptions& options) {
  json evaluations = json::array();
  for (const auto& e : state.evaluations) {
    evaluations.push_back({{"step", e.step}, {"samples", e.samples}, {"ne", e.ne}, {"auc", e.auc},
                           {"logloss", e.logloss}, {"train_loss", e.train_loss}});
  }
  return {{"format", kCheckpointFormat},
          {"spec", model::spec_to_json(options.spec)},
          {"batch_size", options.batch_size},
          {"seed", options.seed},
          {"step", state.step},
          {"epoch", state.epoch},
          {"reader_position", state.reader_position},
          {"samples", state.samples},
          {"evaluations", evaluations}};
}

Status restore_checkpoint_meta(const json& meta, const std::string& path, const TrainOptions& options,
                               TrainState* state) {
  try {
    if (meta.at("format").get<int>() != kCheckpointFormat) {
      return invalid_argument(path, ": checkpoint format ", meta.at("format").get<int>(),
                              " is not supported (expected ", kCheckpointFormat, ")");
    }
    if (meta.at("spec").get<std::string>() != model::spec_to_json(options.spec)) {
      return invalid_argument(path, ": the checkpoint was written for a different model spec than '",
                              options.spec.name, "' (start a fresh run or use another --out)");
    }
    if (meta.at("batch_size").get<std::int64_t>() != options.batch_size) {
      return invalid_argument(path, ": the checkpoint was written with batch ",
                              meta.at("batch_size").get<std::int64_t>(), ", this run has batch ",
                              options.batch_size);
    }
    state->step = meta.at("step").get<std::int64_t>();
    state->epoch = meta.at("epoch").get<std::int64_t>();
    state->reader_position = meta.at("reader_position").get<std::int64_t>();
    state->samples = meta.at("samples").get<std::int64_t>();
    state->evaluations.clear();
    for (const auto& e : meta.at("evaluations")) {
      state->evaluations.push_back({e.at("step").get<std::int64_t>(), e.at("samples").get<std::int64_t>(),
                                    e.at("ne").get<double>(), e.at("auc").get<double>(),
                                    e.at("logloss").get<double>(), e.at("train_loss").get<double>()});
    }
  } catch (const std::exception& e) {
    return invalid_argument(path, ": malformed checkpoint meta: ", e.what());
  }
  return Status::ok();
}

Status restore_step_losses(const std::vector<NamedBlob>& blobs, const std::string& path, TrainState* state) {
  PARITY_ASSIGN_OR_RETURN(const NamedBlob* losses, find_blob(blobs, "history.step_losses"));
  PARITY_CHECK_ARG(losses->bytes.size() == static_cast<std::size_t>(state->step) * sizeof(double), path,
                   ": blob 'history.step_losses' has ", losses->bytes.size(), " bytes; expected ",
                   state->step * 8, " for ", state->step, " steps");
  state->step_losses.resize(static_cast<std::size_t>(state->step));
  if (!losses->bytes.empty()) std::memcpy(state->step_losses.data(), losses->bytes.data(), losses->bytes.size());
  return Status::ok();
}

Status save_checkpoint(const std::string& path, DlrmModel& model, const TrainState& state,
                       const TrainOptions& options) {
  const std::string meta = checkpoint_meta(state, options).dump();
  std::vector<BlobView> blobs;
  blobs.push_back({"meta", meta.data(), meta.size()});
  blobs.push_back({"history.step_losses", state.step_losses.data(), state.step_losses.size() * sizeof(double)});
  // CPU buffers are written from their memory; device buffers are staged through host copies.
  std::vector<std::vector<unsigned char>> staged;
  const auto pieces = model.state_buffers();
  staged.reserve(pieces.size());
  for (const auto& piece : pieces) {
    const auto size = static_cast<std::size_t>(piece.buffer->size_bytes());
    if (piece.buffer->device() == DeviceKind::kCpu) {
      blobs.push_back({piece.name, piece.buffer->data(), size});
      continue;
    }
    staged.emplace_back(size);
    PARITY_RETURN_IF_ERROR(piece.buffer->copy_to_host(staged.back().data(), piece.buffer->size_bytes()));
    blobs.push_back({piece.name, staged.back().data(), size});
  }
  return write_checkpoint_file(path, blobs, options.checkpoint_write);
}

Status load_checkpoint(const std::string& path, DlrmModel& model, TrainState* state,
                       const TrainOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<NamedBlob> blobs, read_checkpoint_file(path));
  PARITY_ASSIGN_OR_RETURN(const NamedBlob* meta_blob, find_blob(blobs, "meta"));
  json meta;
  try {
    meta = json::parse(meta_blob->bytes.begin(), meta_blob->bytes.end());
  } catch (const std::exception& e) {
    return invalid_argument(path, ": malformed checkpoint meta: ", e.what());
  }
  PARITY_RETURN_IF_ERROR(restore_checkpoint_meta(meta, path, options, state));
  PARITY_RETURN_IF_ERROR(restore_step_losses(blobs, path, state));
  for (const auto& piece : model.state_buffers()) {
    PARITY_ASSIGN_OR_RETURN(const NamedBlob* blob, find_blob(blobs, piece.name));
    PARITY_CHECK_ARG(static_cast<std::int64_t>(blob->bytes.size()) == piece.buffer->size_bytes(), path,
                     ": blob '", piece.name, "' has ", blob->bytes.size(), " bytes; the model needs ",
                     piece.buffer->size_bytes());
    PARITY_RETURN_IF_ERROR(piece.buffer->copy_from_host(blob->bytes.data(), piece.buffer->size_bytes()));
  }
  return model.refresh_shadow();  // bf16 runs: the GEMMs' copy of the restored weights
}

}  // namespace parity::train::detail
