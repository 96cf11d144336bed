// Embedding exchange and gradient bucket checks, shared by the one-process and the MPI tests.
// Every rank builds every rank's batch from (seed, rank), so the serial result of each exchange is
// computed locally: uneven owners (some ranks own no table), batch sizes that differ per rank,
// empty bags, tables of different widths.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "dist/collective_checks.hpp"
#include "parity/comm/embedding_exchange.hpp"
#include "parity/comm/gradient_buckets.hpp"

namespace parity::comm::testing {

constexpr int kExchangeTables = 7;

inline std::vector<int> uneven_owners(int world) {
  std::vector<int> owners;
  for (int t = 0; t < kExchangeTables; ++t)
    owners.push_back((t * t + 1) % world);  // 1,2,5,10,17,26,37 mod world
  return owners;
}

inline std::int64_t rank_batch(int rank) { return 2 + (rank * 3) % 4; }

inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  return x;
}

// Rank r's batch: lengths in [0, 3] (zeros included), id = 1000*r + 100*t + running index.
inline SparseBatch make_batch(std::uint64_t seed, int rank) {
  SparseBatch batch;
  batch.num_tables = kExchangeTables;
  batch.batch_size = rank_batch(rank);
  for (int t = 0; t < kExchangeTables; ++t) {
    for (std::int64_t b = 0; b < batch.batch_size; ++b) {
      const auto length = static_cast<std::int64_t>(
          mix(seed + static_cast<std::uint64_t>(rank * 131 + t * 17 + b)) % 4);
      batch.lengths.push_back(length);
      for (std::int64_t j = 0; j < length; ++j) {
        batch.ids.push_back(1000 * rank + 100 * t + static_cast<std::int64_t>(batch.ids.size()));
      }
    }
  }
  return batch;
}

inline void check_embedding_exchange(Communicator& comm, std::uint64_t seed) {
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const int world = comm.size();
  const std::vector<int> owners = uneven_owners(world);
  std::vector<SparseBatch> batches;
  for (int r = 0; r < world; ++r) batches.push_back(make_batch(seed, r));
  auto routed = route_sparse_batch(comm, batches[static_cast<std::size_t>(comm.rank())], owners);
  PARITY_ASSERT_OK(routed.status());

  // Serial: for each owned table ascending, the ranks' samples in rank order.
  std::vector<std::int64_t> want_lengths, want_ids;
  std::vector<int> want_tables;
  for (int t = 0; t < kExchangeTables; ++t) {
    if (owners[static_cast<std::size_t>(t)] != comm.rank()) continue;
    want_tables.push_back(t);
    for (const SparseBatch& batch : batches) {
      std::int64_t id_offset = 0;
      for (int u = 0; u < t; ++u) {
        for (std::int64_t b = 0; b < batch.batch_size; ++b)
          id_offset += batch.lengths[static_cast<std::size_t>(u * batch.batch_size + b)];
      }
      for (std::int64_t b = 0; b < batch.batch_size; ++b) {
        const std::int64_t length =
            batch.lengths[static_cast<std::size_t>(t * batch.batch_size + b)];
        want_lengths.push_back(length);
        for (std::int64_t j = 0; j < length; ++j)
          want_ids.push_back(batch.ids[static_cast<std::size_t>(id_offset++)]);
      }
    }
  }
  EXPECT_EQ(routed->tables, want_tables);
  EXPECT_EQ(routed->lengths, want_lengths);
  EXPECT_EQ(routed->ids, want_ids);

  // Pooled outputs: owner o's value at (global sample g, owned column c) = 1e4*o + 100*g + c.
  PooledLayout layout{owners, {3, 1, 4, 1, 5, 2, 6}, DType::kF32};
  std::vector<std::int64_t> owned_width(static_cast<std::size_t>(world), 0);
  std::vector<std::int64_t> owned_column(kExchangeTables), local_column(kExchangeTables);
  std::int64_t total_width = 0;
  for (int t = 0; t < kExchangeTables; ++t) {
    owned_column[static_cast<std::size_t>(t)] =
        owned_width[static_cast<std::size_t>(owners[static_cast<std::size_t>(t)])];
    owned_width[static_cast<std::size_t>(owners[static_cast<std::size_t>(t)])] +=
        layout.table_dims[static_cast<std::size_t>(t)];
    local_column[static_cast<std::size_t>(t)] = total_width;
    total_width += layout.table_dims[static_cast<std::size_t>(t)];
  }
  const std::int64_t my_width = owned_width[static_cast<std::size_t>(comm.rank())];
  std::vector<float> owned(static_cast<std::size_t>(routed->global_batch_size * my_width));
  for (std::int64_t g = 0; g < routed->global_batch_size; ++g) {
    for (std::int64_t c = 0; c < my_width; ++c) {
      owned[static_cast<std::size_t>(g * my_width + c)] =
          static_cast<float>(10000 * comm.rank() + 100 * g + c);
    }
  }
  const std::int64_t my_batch = rank_batch(comm.rank());
  std::int64_t my_offset = 0;
  for (int r = 0; r < comm.rank(); ++r) my_offset += rank_batch(r);
  std::vector<float> local(static_cast<std::size_t>(my_batch * total_width), -1.0f);
  PARITY_ASSERT_OK(return_pooled_outputs(comm, *routed, layout, owned.data(), local.data()));
  std::vector<float> want_local(local.size());
  for (std::int64_t b = 0; b < my_batch; ++b) {
    for (int t = 0; t < kExchangeTables; ++t) {
      for (std::int64_t j = 0; j < layout.table_dims[static_cast<std::size_t>(t)]; ++j) {
        want_local[static_cast<std::size_t>(b * total_width +
                                            local_column[static_cast<std::size_t>(t)] + j)] =
            static_cast<float>(10000 * owners[static_cast<std::size_t>(t)] + 100 * (my_offset + b) +
                               owned_column[static_cast<std::size_t>(t)] + j);
      }
    }
  }
  EXPECT_EQ(local, want_local);

  // Gradients back: the transpose brings every value home, so sending `local` returns `owned`.
  std::vector<float> owned_back(owned.size(), -1.0f);
  PARITY_ASSERT_OK(send_pooled_gradients(comm, *routed, layout, local.data(), owned_back.data()));
  EXPECT_EQ(owned_back, owned);
}

// Buckets: tensors of uneven sizes, 64-byte buckets (fp32: 16 elements), one tensor larger than a
// bucket; the bucketed all-reduce equals one all-reduce per tensor (exact integer sums).
inline void check_gradient_buckets(Communicator& comm) {
  const std::vector<std::int64_t> sizes = {5, 7, 0, 40, 3, 16, 1};
  auto buckets = GradientBuckets::create(sizes, DType::kF32, 64);
  PARITY_ASSERT_OK(buckets.status());
  // 5+7+0 = 12 | 40 alone | 3 | 16 | 1 -> buckets {0,1,2}, {3}, {4}, {5}, {6}: 3+16 > 16 splits.
  ASSERT_EQ(buckets->num_buckets(), 5);
  EXPECT_EQ(buckets->end_tensor(0), 3);
  EXPECT_EQ(buckets->bucket_elements(1), 40);
  std::vector<std::vector<float>> grads;
  std::vector<void*> pointers;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    grads.emplace_back(static_cast<std::size_t>(sizes[i]));
    for (std::int64_t j = 0; j < sizes[i]; ++j) {
      grads[i][static_cast<std::size_t>(j)] =
          static_cast<float>(input_value(comm.rank(), j + 10 * static_cast<std::int64_t>(i)));
    }
  }
  for (auto& g : grads) pointers.push_back(g.data());
  const std::vector<std::vector<float>> inputs = grads;
  const auto expect_reduced = [&](const char* how) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (std::int64_t j = 0; j < sizes[i]; ++j) {
        EXPECT_EQ(grads[i][static_cast<std::size_t>(j)],
                  static_cast<float>(reduce_serial(DType::kF32, ReduceOp::kSum, comm.size(),
                                                   j + 10 * static_cast<std::int64_t>(i))))
            << how << ": tensor " << i << " element " << j;
      }
    }
  };
  PARITY_ASSERT_OK(buckets->reduce_all(comm, pointers, ReduceOp::kSum));
  expect_reduced("reduce_all");
  // Every bucket in flight at once (started last first), finished in order.
  grads = inputs;
  for (int bucket = buckets->num_buckets(); bucket-- > 0;)
    PARITY_ASSERT_OK(buckets->start_bucket(comm, bucket, pointers, ReduceOp::kSum));
  PARITY_ASSERT_OK(comm.progress());
  EXPECT_NE(buckets->start_bucket(comm, 2, pointers, ReduceOp::kSum).message().find(
                "bucket: 2 is already in flight"),
            std::string::npos);
  for (int bucket = 0; bucket < buckets->num_buckets(); ++bucket)
    PARITY_ASSERT_OK(buckets->finish_bucket(comm, bucket, pointers));
  expect_reduced("started together");
  EXPECT_NE(buckets->finish_bucket(comm, 0, pointers).message().find("bucket: 0 is not in flight"),
            std::string::npos);
  EXPECT_NE(buckets->reduce_bucket(comm, 5, pointers, ReduceOp::kSum)
                .message()
                .find("bucket: 5 is out of range"),
            std::string::npos);
}

}  // namespace parity::comm::testing
