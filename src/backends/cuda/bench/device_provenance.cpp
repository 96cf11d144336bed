// Device half of the provenance: properties from the CUDA runtime, clocks from NVML.
// NVML is loaded at run time from the driver's libnvidia-ml.so.1 (it ships with every driver;
// the toolkit's link stub and header are not installed everywhere we build), through the few
// stable entry points below. Without NVML the maximum clocks come from the runtime and the
// current ones are reported as unknown, with the reason in "source".
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <array>
#include <string>

#include "parity/bench/device_timing.hpp"
#include "bench/results_json.hpp"
#include "parity/core/gpu.hpp"

namespace parity::bench {
namespace {

// The NVML C ABI subset used here (nvml.h, stable since NVML 2.285).
using NvmlReturn = int;  // nvmlReturn_t; 0 = NVML_SUCCESS
using NvmlDevice = void*;
constexpr int kNvmlClockSm = 1;   // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock_info)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*max_clock_info)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;
};

template <typename Fn>
bool load_symbol(void* library, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(library, name));
  return *out != nullptr;
}

// Loaded once and kept for the life of the process (dlclose would only save a few pages).
Result<NvmlApi> nvml_api() {
  static std::string load_error;
  static void* library = [] {
    void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();  // copied: the next dl* call overwrites it
      load_error = error != nullptr ? error : "unknown error";
    }
    return handle;
  }();
  if (library == nullptr) return unsupported("libnvidia-ml.so.1 not loadable: ", load_error);
  NvmlApi api;
  const bool complete = load_symbol(library, "nvmlInit_v2", &api.init) &&
                        load_symbol(library, "nvmlShutdown", &api.shutdown) &&
                        load_symbol(library, "nvmlDeviceGetHandleByPciBusId_v2", &api.handle_by_pci_bus_id) &&
                        load_symbol(library, "nvmlDeviceGetClockInfo", &api.clock_info) &&
                        load_symbol(library, "nvmlDeviceGetMaxClockInfo", &api.max_clock_info);
  if (!complete) return unsupported("libnvidia-ml.so.1 lacks an expected entry point");
  load_symbol(library, "nvmlDeviceGetTemperature", &api.temperature);  // optional
  load_symbol(library, "nvmlDeviceGetPowerUsage", &api.power_usage);   // optional
  return api;
}

// Calls the query first, then reads its output: passing `value` beside the call as an argument
// would read it before the call (argument evaluation order is unspecified).
template <typename Query>
int mhz_or_unknown(Query&& query) {
  unsigned int value = 0;
  const NvmlReturn rc = query(&value);
  return rc == 0 ? static_cast<int>(value) : -1;
}

}  // namespace

Result<DeviceClocks> read_device_clocks(int device_index) {
  PARITY_ASSIGN_OR_RETURN(const gpu::DeviceProperties props, gpu::device_properties(device_index));
  DeviceClocks clocks;
  auto api = nvml_api();
  std::array<char, 64> pci_bus_id{};
  NvmlDevice handle = nullptr;
  std::string why_not;
  if (!api.is_ok()) {
    why_not = api.status().message();
  } else if (cudaDeviceGetPCIBusId(pci_bus_id.data(), static_cast<int>(pci_bus_id.size()), device_index) !=
             cudaSuccess) {
    cudaGetLastError();
    why_not = "cudaDeviceGetPCIBusId failed";
  } else if (api->init() != 0) {
    why_not = "nvmlInit_v2 failed";
  } else if (api->handle_by_pci_bus_id(pci_bus_id.data(), &handle) != 0) {
    api->shutdown();
    why_not = std::string("no NVML device for PCI bus id ") + pci_bus_id.data();
  }
  if (!why_not.empty()) {
    clocks.max_sm_clock_mhz = props.max_sm_clock_mhz > 0 ? props.max_sm_clock_mhz : -1;
    clocks.max_memory_clock_mhz = props.max_memory_clock_mhz > 0 ? props.max_memory_clock_mhz : -1;
    clocks.source = "cuda-runtime (max only; NVML unavailable: " + why_not + ")";
    return clocks;
  }
  unsigned int value = 0;
  clocks.sm_clock_mhz = mhz_or_unknown([&](unsigned int* out) { return api->clock_info(handle, kNvmlClockSm, out); });
  clocks.memory_clock_mhz = mhz_or_unknown([&](unsigned int* out) { return api->clock_info(handle, kNvmlClockMem, out); });
  clocks.max_sm_clock_mhz = mhz_or_unknown([&](unsigned int* out) { return api->max_clock_info(handle, kNvmlClockSm, out); });
  clocks.max_memory_clock_mhz = mhz_or_unknown([&](unsigned int* out) { return api->max_clock_info(handle, kNvmlClockMem, out); });
  if (api->temperature != nullptr && api->temperature(handle, kNvmlTemperatureGpu, &value) == 0) {
    clocks.temperature_c = static_cast<int>(value);
  }
  if (api->power_usage != nullptr && api->power_usage(handle, &value) == 0) {
    clocks.power_w = static_cast<double>(value) / 1000.0;  // NVML reports milliwatts
  }
  clocks.source = "nvml";
  api->shutdown();
  return clocks;
}

nlohmann::json clocks_json(const DeviceClocks& clocks) {
  auto or_null = [](double v) -> nlohmann::json { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {
      {"sm_clock_mhz", or_null(clocks.sm_clock_mhz)},
      {"memory_clock_mhz", or_null(clocks.memory_clock_mhz)},
      {"max_sm_clock_mhz", or_null(clocks.max_sm_clock_mhz)},
      {"max_memory_clock_mhz", or_null(clocks.max_memory_clock_mhz)},
      {"temperature_c", or_null(clocks.temperature_c)},
      {"power_w", or_null(clocks.power_w)},
      {"source", clocks.source},
  };
}

namespace detail {

nlohmann::json device_provenance_json() {
  if (gpu::device_count() == 0) return nullptr;
  int device_index = 0;
  if (cudaGetDevice(&device_index) != cudaSuccess) {
    cudaGetLastError();
    device_index = 0;
  }
  auto props = gpu::device_properties(device_index);
  if (!props.is_ok()) return {{"error", props.status().to_string()}};
  nlohmann::json device = {
      {"index", props->device_index},
      {"name", props->name},
      {"compute_capability", std::to_string(props->compute_capability_major) + "." +
                                 std::to_string(props->compute_capability_minor)},
      {"sm_count", props->sm_count},
      {"l2_bytes", props->l2_bytes},
      {"total_memory_bytes", props->total_memory_bytes},
      {"memory_bus_width_bits", props->memory_bus_width_bits},
      {"driver_version", props->driver_version},
      {"runtime_version", props->runtime_version},
  };
  auto clocks = read_device_clocks(device_index);
  device["clocks"] = clocks.is_ok() ? clocks_json(*clocks) : nlohmann::json{{"error", clocks.status().to_string()}};
  return device;
}

}  // namespace detail
}  // namespace parity::bench
