// Embedding exchanges and gradient buckets on one rank (the local communicator), plus their
// argument errors.
#include <gtest/gtest.h>

#include "dist/exchange_checks.hpp"

namespace parity::comm {
namespace {

TEST(EmbeddingExchangeLocal, MatchesTheSerialComputation) {
  auto comm = make_local_communicator();
  for (std::uint64_t seed : {1u, 2u, 3u}) testing::check_embedding_exchange(*comm, seed);
}

TEST(EmbeddingExchangeLocal, BadInputIsNamed) {
  auto comm = make_local_communicator();
  SparseBatch batch{2, 2, {1, 0, 2}, {5, 6, 7}};
  auto routed = route_sparse_batch(*comm, batch, {0, 0});
  EXPECT_NE(
      routed.status().message().find("lengths: 3 entries, expected num_tables * batch_size = 4"),
      std::string::npos)
      << routed.status().to_string();
  batch = {2, 2, {1, 0, 2, 0}, {5, 6}};
  EXPECT_NE(route_sparse_batch(*comm, batch, {0, 0})
                .status()
                .message()
                .find("ids: 2 entries, but the lengths sum to 3"),
            std::string::npos);
  batch = {2, 2, {1, 0, 2, 0}, {5, 6, 7}};
  EXPECT_NE(route_sparse_batch(*comm, batch, {0, 1})
                .status()
                .message()
                .find("table_owner[1]=1 is out of range [0, 1)"),
            std::string::npos);
  routed = route_sparse_batch(*comm, batch, {0, 0});
  ASSERT_TRUE(routed.is_ok());
  std::vector<float> owned(12), local(12);
  const Status status = return_pooled_outputs(*comm, *routed, {{0, 0}, {3, 0}, DType::kF32},
                                              owned.data(), local.data());
  EXPECT_NE(status.message().find("table_dims[1]=0 must be >= 1"), std::string::npos)
      << status.to_string();
}

TEST(GradientBucketsLocal, BucketsAndReduce) {
  auto comm = make_local_communicator();
  testing::check_gradient_buckets(*comm);
  EXPECT_FALSE(GradientBuckets::create({4}, DType::kF32, 0).is_ok());
  EXPECT_NE(GradientBuckets::create({4, -1}, DType::kF32, 8)
                .status()
                .message()
                .find("tensor_elements[1]=-1"),
            std::string::npos);
  auto empty = GradientBuckets::create({}, DType::kF32, 8);
  ASSERT_TRUE(empty.is_ok());
  EXPECT_EQ(empty->num_buckets(), 0);
}

}  // namespace
}  // namespace parity::comm
