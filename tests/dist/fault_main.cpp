// Killed-rank scenario for tests/dist/killed_rank_test.sh: every rank loops over all_reduces of 1M
// floats; on rank 2 (or the last rank if fewer) a thread raises SIGKILL 300 ms in, i.e. while
// collectives are in flight. The job must end promptly with a non-zero exit and a message naming
// rank 2: Open MPI's mpirun reports the dead process and terminates the survivors (no ULFM); if a
// survivor is still running when its collective times out (10 s), it reports the silent rank
// itself.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
#include <vector>

#include "parity/comm/mpi.hpp"

int main() {
  using namespace parity::comm;
  MpiSession session;
  if (!session.status().is_ok()) {
    std::fprintf(stderr, "parity_dist_fault: %s\n", session.status().to_string().c_str());
    return 1;
  }
  const int victim = session.world_size() > 2 ? 2 : session.world_size() - 1;
  CommOptions options;
  options.timeout_ms = 10000.0;
  parity::Status status;
  {
    auto comm = make_mpi_communicator(options);
    if (!comm.is_ok()) {
      std::fprintf(stderr, "parity_dist_fault: %s\n", comm.status().to_string().c_str());
      return 1;
    }
    if (session.world_rank() == victim) {
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        std::raise(SIGKILL);
      }).detach();
    }
    std::vector<float> data(1 << 20, 1.0f);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (status.is_ok() && std::chrono::steady_clock::now() < end) {
      status = (*comm)->all_reduce(data.data(), data.data(), static_cast<std::int64_t>(data.size()),
                                   parity::DType::kF32, ReduceOp::kMax);
    }
  }
  if (status.is_ok()) {
    std::fprintf(stderr, "parity_dist_fault: rank %d: the job outlived its killed rank %d\n",
                 session.world_rank(), victim);
    return 2;
  }
  std::fprintf(stderr, "parity_dist_fault: %s\n", status.to_string().c_str());
  return 1;
}
