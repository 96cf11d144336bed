// The one-rank communicator: each collective moves this rank's own data (memmove, since the
// in-place layouts alias), reductions over one rank are the identity, barrier does nothing.
#include <cstring>

#include "parity/comm/communicator.hpp"

namespace parity::comm {
namespace {

class LocalCommunicator final : public Communicator {
 public:
  explicit LocalCommunicator(CommOptions options) : Communicator(std::move(options)) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string_view backend_name() const override { return "local"; }
  DeviceKind buffer_device() const override { return DeviceKind::kCpu; }

 protected:
  Status execute(const CollectiveProblem& problem, const void* send, void* recv,
                 void* /*stream*/) override {
    const std::size_t element_bytes = dtype_size_bytes(problem.dtype);
    switch (problem.collective) {
      case Collective::kAllReduce:
      case Collective::kReduceScatter:
      case Collective::kAllGather:
      case Collective::kAllToAll:
        move(recv, send, static_cast<std::size_t>(problem.count) * element_bytes);
        return Status::ok();
      case Collective::kAllToAllv: {
        const AllToAllvLayout& layout = *problem.layout;
        move(static_cast<char*>(recv) +
                 layout.recv_displs[0] * static_cast<std::int64_t>(element_bytes),
             static_cast<const char*>(send) +
                 layout.send_displs[0] * static_cast<std::int64_t>(element_bytes),
             static_cast<std::size_t>(layout.send_counts[0]) * element_bytes);
        return Status::ok();
      }
      case Collective::kBroadcast:
      case Collective::kBarrier:
        return Status::ok();
    }
    return internal_error("local communicator: unknown collective");
  }

 private:
  static void move(void* to, const void* from, std::size_t bytes) {
    if (bytes > 0 && to != from) std::memmove(to, from, bytes);
  }
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator(CommOptions options) {
  return std::make_unique<LocalCommunicator>(std::move(options));
}

}  // namespace parity::comm
