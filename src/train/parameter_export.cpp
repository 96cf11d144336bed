// DlrmModel::write_parameter_file: the model's parameters as named fp32 tensors, so that another
// implementation (scripts/compare/torch_same_learning.py) starts from exactly these weights.
// Tensors: bottom.<l>.weight [out, in], bottom.<l>.bias [out], cross.<l>.{v [R, W], u [W, R],
// bias [W]}, top.<l>.weight/bias, embedding.<t>.weight [rows, dim]; linear weights row-major
// [out, in] as torch.nn.Linear stores them, with the GPU's zero padding columns removed.
#include <cstring>
#include <nlohmann/json.hpp>

#include "parity/core/dtype.hpp"
#include "parity/train/checkpoint_file.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train::detail {
namespace {

struct TensorOut {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

// Rows [0, out) of a [out, stride] block at `offset`, keeping the first `cols` columns.
TensorOut matrix(std::string name, const std::vector<float>& params, std::int64_t offset,
                 std::int64_t rows, std::int64_t stride, std::int64_t cols) {
  TensorOut t{std::move(name), {rows, cols}, {}};
  t.values.reserve(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto begin = params.begin() + offset + r * stride;
    t.values.insert(t.values.end(), begin, begin + cols);
  }
  return t;
}

void add_linear(const std::string& prefix, const std::vector<LinearSlot>& slots,
                const std::vector<float>& params, std::vector<TensorOut>* out) {
  for (std::size_t l = 0; l < slots.size(); ++l) {
    const LinearSlot& s = slots[l];
    const std::string name = prefix + "." + std::to_string(l);
    // fan_in is the model's width; `in` adds the GPU's zero columns (first layer only).
    out->push_back(matrix(name + ".weight", params, s.weight_offset, s.out, s.in, s.fan_in));
    out->push_back(matrix(name + ".bias", params, s.bias_offset, 1, s.out, s.out));
    out->back().shape = {s.out};
  }
}

}  // namespace

Status DlrmModel::write_parameter_file(const std::string& path) const {
  std::vector<float> params(static_cast<std::size_t>(dense_parameters_));
  PARITY_RETURN_IF_ERROR(dense_weights_.copy_to_host(params.data(), dense_parameters_ * 4));
  std::vector<TensorOut> tensors;
  add_linear("bottom", bottom_, params, &tensors);
  const std::int64_t width = spec_.interaction_output_dim();
  for (std::size_t l = 0; l < cross_.size(); ++l) {
    const std::string name = "cross." + std::to_string(l);
    tensors.push_back(matrix(name + ".v", params, cross_[l].v_offset, spec_.cross_rank, width, width));
    tensors.push_back(matrix(name + ".u", params, cross_[l].u_offset, width, spec_.cross_rank,
                             spec_.cross_rank));
    tensors.push_back(matrix(name + ".bias", params, cross_[l].c_offset, 1, width, width));
    tensors.back().shape = {width};
  }
  add_linear("top", top_, params, &tensors);

  const DType dtype = spec_.embedding.weight_dtype;
  const std::int64_t element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  for (int t = 0; t < layout_.num_tables(); ++t) {
    const auto& table = layout_.tables()[static_cast<std::size_t>(t)];
    const std::int64_t count = table.num_rows * table.dim;
    std::vector<std::uint8_t> raw(static_cast<std::size_t>(count * element_bytes));
    PARITY_RETURN_IF_ERROR(embedding_weights_.copy_to_host(
        raw.data(), count * element_bytes, layout_.weights_offset(t) * element_bytes));
    TensorOut out{"embedding." + std::to_string(t) + ".weight", {table.num_rows, table.dim}, {}};
    out.values.resize(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      const auto index = static_cast<std::size_t>(i);
      if (dtype == DType::kF32) {
        std::memcpy(&out.values[index], raw.data() + i * 4, 4);
      } else {
        std::uint16_t bits = 0;
        std::memcpy(&bits, raw.data() + i * 2, 2);
        out.values[index] = dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
      }
    }
    tensors.push_back(std::move(out));
  }

  nlohmann::json index = nlohmann::json::object();
  std::vector<BlobView> blobs;
  for (const TensorOut& t : tensors) {
    index[t.name] = {{"shape", t.shape}, {"dtype", "fp32"}};
    blobs.push_back({t.name, t.values.data(), t.values.size() * sizeof(float)});
  }
  const std::string index_text =
      nlohmann::json{{"format", "parity.parameters/1"}, {"spec", nlohmann::json::parse(model::spec_to_json(spec_))},
                     {"tensors", index}}
          .dump();
  blobs.push_back({"index", index_text.data(), index_text.size()});
  return write_checkpoint_file(path, blobs);
}

}  // namespace parity::train::detail
