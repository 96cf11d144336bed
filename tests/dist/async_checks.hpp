// Checks of the asynchronous all_reduce (start_all_reduce / test / progress / wait), shared by the
// one-process tests (local backend) and the MPI tests (R ranks). Inputs are the exact small
// integers of collective_checks.hpp, so results are compared bit for bit with the serial result;
// random fp32 values (seeded, printed) compare the started all_reduce with the blocking one.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dist/collective_checks.hpp"

namespace parity::comm::testing {

// Every dtype × op × odd count started at once (in place and out of place alternating), a
// blocking all_gather and progress/test between them, then waited for in reverse order.
inline void check_async_all_reduce(Communicator& comm) {
  struct Case {
    DType dtype;
    ReduceOp op;
    std::int64_t count;
    bool is_in_place;
    std::vector<unsigned char> send, recv;
    CollectiveHandle handle;
  };
  std::vector<std::unique_ptr<Case>> cases;
  for (DType dtype : kCollectiveDtypes) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
      for (std::int64_t count : kOddCounts) {
        auto c = std::make_unique<Case>();
        c->dtype = dtype;
        c->op = op;
        c->count = count;
        c->is_in_place = cases.size() % 2 == 1;
        c->send = encode(dtype, rank_input(comm.rank(), count));
        c->recv.assign(c->send.size(), 0xAB);
        void* out = c->is_in_place ? c->send.data() : c->recv.data();
        auto handle = comm.start_all_reduce(c->send.data(), out, count, dtype, op);
        ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();
        c->handle = *handle;
        cases.push_back(std::move(c));
      }
    }
    PARITY_ASSERT_OK(comm.progress());
  }
  EXPECT_EQ(comm.pending_collectives(), static_cast<int>(cases.size()));
  std::int64_t mine = comm.rank(), all[64] = {};  // a blocking call among the pending ones
  ASSERT_LE(comm.size(), 64);
  PARITY_ASSERT_OK(comm.all_gather(&mine, all, 1, DType::kI64));
  for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(all[r], r);
  auto is_done = comm.test(cases.front()->handle);
  ASSERT_TRUE(is_done.is_ok()) << is_done.status().to_string();
  for (auto it = cases.rbegin(); it != cases.rend(); ++it) {
    Case& c = **it;
    SCOPED_TRACE(describe(c.dtype, c.count, c.is_in_place ? "started, in place" : "started") +
                 " op=" + std::string(reduce_op_name(c.op)));
    PARITY_ASSERT_OK(comm.wait(c.handle));
    std::vector<double> expected(static_cast<std::size_t>(c.count));
    for (std::int64_t i = 0; i < c.count; ++i)
      expected[static_cast<std::size_t>(i)] = reduce_serial(c.dtype, c.op, comm.size(), i);
    EXPECT_EQ(encode(c.dtype, expected), c.is_in_place ? c.send : c.recv);
  }
  EXPECT_EQ(comm.pending_collectives(), 0);
}

// Random fp32 values whose sums round: the started all_reduce gives the blocking one's bits.
inline void check_async_equals_blocking(Communicator& comm, std::uint64_t seed) {
  SCOPED_TRACE("seed=" + std::to_string(seed));
  for (std::int64_t count : {1, 1001, 300000}) {
    std::vector<float> send(static_cast<std::size_t>(count)), blocking(send.size()),
        started(send.size());
    for (std::int64_t i = 0; i < count; ++i)
      send[static_cast<std::size_t>(i)] = random_value(seed, comm.rank(), i);
    PARITY_ASSERT_OK(
        comm.all_reduce(send.data(), blocking.data(), count, DType::kF32, ReduceOp::kSum));
    auto handle =
        comm.start_all_reduce(send.data(), started.data(), count, DType::kF32, ReduceOp::kSum);
    ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();
    PARITY_ASSERT_OK(comm.wait(*handle));
    EXPECT_EQ(blocking, started) << "count=" << count;
  }
}

// The errors: a message naming the parameter and the value, and the communicator still usable.
inline void check_async_errors(Communicator& comm, Communicator& other) {
  std::vector<float> a(8, 1.0f), b(8);
  auto handle = comm.start_all_reduce(a.data(), b.data(), 8, DType::kF32, ReduceOp::kSum);
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();
  const std::int64_t call = handle->call;
  const auto expect_message = [](const Status& status, const std::string& text) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
    EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
  };
  // Buffers of a pending collective: recv written, send read until it completes.
  std::vector<float> c(8, 1.0f);
  expect_message(
      comm.start_all_reduce(c.data(), b.data() + 4, 4, DType::kF32, ReduceOp::kSum).status(),
      "send/recv: overlap the buffers of all_reduce call #" + std::to_string(call) +
          ", still pending");
  expect_message(comm.start_all_reduce(c.data(), a.data(), 8, DType::kF32, ReduceOp::kSum).status(),
                 "still pending");
  expect_message(comm.start_all_reduce(c.data(), c.data(), -1, DType::kF32, ReduceOp::kSum).status(),
                 "count: -1");
  expect_message(comm.start_all_reduce(nullptr, c.data(), 8, DType::kF32, ReduceOp::kSum).status(),
                 "send: null");
  expect_message(comm.wait(CollectiveHandle{}), "handle: empty");
  auto foreign = other.start_all_reduce(c.data(), c.data(), 8, DType::kF32, ReduceOp::kSum);
  ASSERT_TRUE(foreign.is_ok()) << foreign.status().to_string();
  expect_message(comm.wait(*foreign), "handle: started by communicator #");
  PARITY_ASSERT_OK(other.wait(*foreign));
  PARITY_ASSERT_OK(comm.wait(*handle));
  expect_message(comm.wait(*handle),
                 "handle: call #" + std::to_string(call) + " is not pending (already waited for");
  expect_message(comm.test(*handle).status(), "is not pending");
  expect_message(comm.wait(CollectiveHandle{handle->communicator_id, call + 1000}),
                 "was never made");
  EXPECT_EQ(b, std::vector<float>(8, static_cast<float>(comm.size())));
  EXPECT_EQ(comm.pending_collectives(), 0);
  PARITY_ASSERT_OK(comm.barrier());  // errors are argument errors: the communicator still works
}

}  // namespace parity::comm::testing
