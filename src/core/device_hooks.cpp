#include "core/device_hooks.hpp"

#include <atomic>

namespace parity::detail {
namespace {
DeviceHooks g_hooks;
std::atomic<bool> g_registered{false};
}  // namespace

void register_device_hooks(const DeviceHooks& hooks) {
  g_hooks = hooks;
  g_registered.store(true, std::memory_order_release);
}

const DeviceHooks* device_hooks() {
  return g_registered.load(std::memory_order_acquire) ? &g_hooks : nullptr;
}

Result<const DeviceHooks*> require_device_hooks(const char* what) {
  const DeviceHooks* hooks = device_hooks();
  if (hooks == nullptr) return unsupported(what, ": this build has no GPU backend (configure with the cuda preset)");
  return hooks;
}

}  // namespace parity::detail
