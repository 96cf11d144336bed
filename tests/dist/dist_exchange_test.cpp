// Embedding exchanges and bucketed gradient all-reduce on R MPI ranks against the serial result:
// uneven table owners (with 4 ranks, ranks 0 and 3 own no table), per-rank batch
// sizes, empty bags; and the bucketed all-reduce in rank-order mode.
#include <gtest/gtest.h>

#include "dist/dist_world.hpp"
#include "dist/exchange_checks.hpp"
#include "parity/comm/mpi.hpp"

namespace parity::comm::testing {
namespace {

class DistExchange : public DistTest {};

TEST_F(DistExchange, EmbeddingAllToAllsMatchTheSerialComputation) {
  for (std::uint64_t seed : {11u, 12u, 13u}) check_embedding_exchange(world(), seed);
}

TEST_F(DistExchange, BucketedGradientAllReduce) {
  check_gradient_buckets(world());
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto comm = make_mpi_communicator(options);
  PARITY_ASSERT_OK(comm.status());
  check_gradient_buckets(**comm);
}

}  // namespace
}  // namespace parity::comm::testing
