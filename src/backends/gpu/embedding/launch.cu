// TBE device layout upload and shared launch helpers.
#include <algorithm>
#include <utility>
#include <vector>

#include "backends/gpu/embedding/launch_common.cuh"

namespace parity::embedding::gpu {

Result<DeviceTbeLayout> DeviceTbeLayout::create(const TbeLayout& layout) {
  const int num_features = layout.num_features();
  const int num_tables = layout.num_tables();
  std::vector<std::int64_t> packed;
  for (int f = 0; f < num_features; ++f) packed.push_back(layout.weights_offset(layout.table_of_feature()[f]));
  for (int f = 0; f < num_features; ++f) packed.push_back(layout.row_base(layout.table_of_feature()[f]));
  for (int f = 0; f < num_features; ++f) packed.push_back(layout.feature_rows(f));
  for (int f = 0; f < num_features; ++f) packed.push_back(layout.feature_dim(f));
  for (int f = 0; f <= num_features; ++f) packed.push_back(layout.output_column_offset(f));
  for (int t = 0; t <= num_tables; ++t) packed.push_back(layout.row_base(t));
  for (int t = 0; t < num_tables; ++t) packed.push_back(layout.weights_offset(t));
  for (int t = 0; t < num_tables; ++t) packed.push_back(layout.tables()[t].dim);
  for (int f = 0; f < num_features; ++f) packed.push_back(layout.feature_row_stride(f));
  for (int t = 0; t < num_tables; ++t) packed.push_back(layout.row_stride(t));
  DeviceTbeLayout device_layout;
  PARITY_ASSIGN_OR_RETURN(device_layout.buffer_, parity::gpu::upload(packed));
  device_layout.num_features_ = num_features;
  return Result<DeviceTbeLayout>(std::move(device_layout));
}

gpu_device::LayoutView make_layout_view(const DeviceTbeLayout& device_layout, const TbeLayout& layout) {
  const int num_features = layout.num_features();
  const int num_tables = layout.num_tables();
  const auto* base = static_cast<const std::int64_t*>(device_layout.data());
  gpu_device::LayoutView view{};
  view.feature_weights_offset = base;
  view.feature_row_base = base + num_features;
  view.feature_rows = base + 2 * num_features;
  view.feature_dim = base + 3 * num_features;
  view.feature_out_col = base + 4 * num_features;
  view.table_row_base = base + 5 * num_features + 1;
  view.table_weights_offset = view.table_row_base + num_tables + 1;
  view.table_dim = view.table_weights_offset + num_tables;
  view.feature_row_stride = view.table_dim + num_tables;
  view.table_row_stride = view.feature_row_stride + num_features;
  view.num_features = num_features;
  view.num_tables = num_tables;
  return view;
}

Result<int> current_sm_count() {
  int device = 0;
  int sm_count = 0;
  PARITY_GPU_TRY(gpuGetDevice(&device));
  PARITY_GPU_TRY(gpuDeviceGetAttribute(&sm_count, gpuDevAttrMultiProcessorCount, device));
  return sm_count;
}

Status check_device_layout(const DeviceTbeLayout& device_layout, const TbeLayout& layout, const char* op) {
  PARITY_CHECK_ARG(device_layout.data() != nullptr, op, ": device layout is empty; build it with DeviceTbeLayout::create");
  PARITY_CHECK_ARG(device_layout.num_features() == layout.num_features(), op, ": device layout has ",
                   device_layout.num_features(), " features, problem has ", layout.num_features());
  return Status::ok();
}

}  // namespace parity::embedding::gpu

namespace parity::gpu_device {

// splitmix64 of (seed, element): independent of the launch shape.
__global__ void fill_uniform_kernel(void* values, int dtype_code, std::int64_t count, std::uint64_t seed,
                                    float scale) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const float v = scale * (static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f);
    if (dtype_code == 0) {
      static_cast<float*>(values)[i] = v;
    } else if (dtype_code == 1) {
      static_cast<std::uint16_t*>(values)[i] = float_to_fp16(v);
    } else {
      static_cast<std::uint16_t*>(values)[i] = float_to_bf16(v);
    }
  }
}

}  // namespace parity::gpu_device

namespace parity::embedding::gpu {

Status fill_uniform(void* values, DType dtype, std::int64_t count, std::uint64_t seed, float scale,
                    StreamHandle stream) {
  PARITY_CHECK_ARG(dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16, "fill_uniform: dtype=",
                   dtype_name(dtype), "; expected fp32, fp16 or bf16");
  if (count <= 0) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const int sm_count, current_sm_count());
  const int code = dtype == DType::kF32 ? 0 : (dtype == DType::kF16 ? 1 : 2);
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(count, 256), 32LL * sm_count);
  gpu_device::fill_uniform_kernel<<<static_cast<unsigned>(blocks), 256, 0, static_cast<gpuStream_t>(stream)>>>(
      values, code, count, seed, scale);
  PARITY_GPU_CHECK_LAUNCH(fill_uniform_kernel);
  return Status::ok();
}

}  // namespace parity::embedding::gpu
