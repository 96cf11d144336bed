// main() of the MPI test executable: starts MPI through parity_mpi, runs the gtest suite on every
// rank (only rank 0 prints the gtest report; other ranks print only their failures, prefixed
// "[rank N]"), and every rank exits non-zero when any rank failed.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "dist/dist_world.hpp"
#include "parity/comm/mpi.hpp"

namespace parity::comm::testing {
namespace {

Communicator* g_world = nullptr;

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace

Communicator& world() { return *g_world; }

}  // namespace parity::comm::testing

int main(int argc, char** argv) {
  using namespace parity::comm;
  ::testing::InitGoogleTest(&argc, argv);
  MpiSession session;
  if (!session.status().is_ok()) {
    std::fprintf(stderr, "parity_dist_tests: %s\n", session.status().to_string().c_str());
    return 1;
  }
  std::int64_t any_failed = 1;
  {
    CommOptions options;
    options.timeout_ms = 60000.0;  // a hang fails the run well inside CTest's limit
    auto world = make_mpi_communicator(options);
    if (!world.is_ok()) {
      std::fprintf(stderr, "parity_dist_tests: %s\n", world.status().to_string().c_str());
      return 1;
    }
    parity::comm::testing::g_world = world->get();
    if (session.world_rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new parity::comm::testing::RankFailurePrinter(session.world_rank()));
    }
    const std::int64_t failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    const parity::Status status =
        (*world)->all_reduce(&failed, &any_failed, 1, parity::DType::kI64, ReduceOp::kMax);
    if (!status.is_ok())
      std::fprintf(stderr, "parity_dist_tests: %s\n", status.to_string().c_str());
  }
  return any_failed != 0 ? 1 : 0;
}
