// Collective checks shared by the one-process tests (local backend) and the MPI tests (R ranks):
// every rank builds every rank's input from (rank, index), so the serial result is computed
// locally and compared bit for bit. Inputs are small integers (|x| <= 5): every sum over <= 32
// ranks is exact in every dtype (bf16 holds integers up to 256 exactly), so a sum must match
// exactly; avg is the fp32 (fp64 for fp64, truncating for ints) quotient of that exact sum, the
// documented semantics, rounded once to the dtype.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "parity/comm/communicator.hpp"

// Asserts a Status is ok and prints it otherwise.
#define PARITY_ASSERT_OK(expr)                                                       \
  do {                                                                               \
    const ::parity::Status parity_assert_status_ = (expr);                           \
    ASSERT_TRUE(parity_assert_status_.is_ok()) << parity_assert_status_.to_string(); \
  } while (0)

namespace parity::comm::testing {

inline double input_value(int rank, std::int64_t index) {
  return static_cast<double>((rank * 7 + index * 3) % 11) - 5.0;
}

// Stores `values` (exactly representable in dtype, or rounded once) as dtype elements.
inline std::vector<unsigned char> encode(DType dtype, const std::vector<double>& values) {
  std::vector<unsigned char> bytes(values.size() * dtype_size_bytes(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    unsigned char* out = bytes.data() + i * dtype_size_bytes(dtype);
    const double v = values[i];
    switch (dtype) {
      case DType::kF32: {
        const float f = static_cast<float>(v);
        std::memcpy(out, &f, 4);
        break;
      }
      case DType::kF64:
        std::memcpy(out, &v, 8);
        break;
      case DType::kI32: {
        const auto x = static_cast<std::int32_t>(v);
        std::memcpy(out, &x, 4);
        break;
      }
      case DType::kI64: {
        const auto x = static_cast<std::int64_t>(v);
        std::memcpy(out, &x, 8);
        break;
      }
      case DType::kBF16: {
        const auto b = float_to_bf16_bits(static_cast<float>(v));
        std::memcpy(out, &b, 2);
        break;
      }
      case DType::kF16: {
        const auto b = float_to_fp16_bits(static_cast<float>(v));
        std::memcpy(out, &b, 2);
        break;
      }
      default:
        break;
    }
  }
  return bytes;
}

inline std::vector<double> rank_input(int rank, std::int64_t count) {
  std::vector<double> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    values[static_cast<std::size_t>(i)] = input_value(rank, i);
  return values;
}

// The documented reduction semantics on exact integer inputs: the exact sum (or max), avg divided
// in the accumulation type (fp32 for fp32/bf16/fp16, fp64, truncation for ints).
inline double reduce_serial(DType dtype, ReduceOp op, int world, std::int64_t index) {
  double acc = input_value(0, index);
  for (int r = 1; r < world; ++r) {
    acc = op == ReduceOp::kMax ? std::max(acc, input_value(r, index)) : acc + input_value(r, index);
  }
  if (op != ReduceOp::kAvg) return acc;
  if (dtype == DType::kF64) return acc / world;
  if (dtype == DType::kI32 || dtype == DType::kI64) return std::trunc(acc / world);
  return static_cast<double>(static_cast<float>(acc) / static_cast<float>(world));
}

inline std::string describe(DType dtype, std::int64_t count, const char* mode) {
  return std::string(dtype_name(dtype)) + " count=" + std::to_string(count) + " " + mode;
}

enum class Placement { kOutOfPlace, kInPlace };

inline void check_all_reduce(Communicator& comm, DType dtype, ReduceOp op, std::int64_t count,
                             Placement placement) {
  SCOPED_TRACE(
      describe(dtype, count, placement == Placement::kInPlace ? "in-place" : "out-of-place") +
      " op=" + std::string(reduce_op_name(op)));
  auto send = encode(dtype, rank_input(comm.rank(), count));
  std::vector<unsigned char> recv(send.size(), 0xAB);
  void* out = placement == Placement::kInPlace ? send.data() : recv.data();
  PARITY_ASSERT_OK(comm.all_reduce(send.data(), out, count, dtype, op));
  std::vector<double> expected(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    expected[static_cast<std::size_t>(i)] = reduce_serial(dtype, op, comm.size(), i);
  const auto want = encode(dtype, expected);
  if (!want.empty()) {  // memcmp(null, ..., 0) is UB
    EXPECT_EQ(0, std::memcmp(want.data(), out, want.size()));
  }
}

inline void check_reduce_scatter(Communicator& comm, DType dtype, ReduceOp op,
                                 std::int64_t recv_count, Placement placement) {
  SCOPED_TRACE(
      describe(dtype, recv_count, placement == Placement::kInPlace ? "in-place" : "out-of-place"));
  const int world = comm.size();
  auto send = encode(dtype, rank_input(comm.rank(), recv_count * world));
  std::vector<unsigned char> recv(static_cast<std::size_t>(recv_count) * dtype_size_bytes(dtype),
                                  0xAB);
  void* out = placement == Placement::kInPlace
                  ? send.data() +
                        static_cast<std::size_t>(recv_count * comm.rank()) * dtype_size_bytes(dtype)
                  : recv.data();
  PARITY_ASSERT_OK(comm.reduce_scatter(send.data(), out, recv_count, dtype, op));
  std::vector<double> expected(static_cast<std::size_t>(recv_count));
  for (std::int64_t i = 0; i < recv_count; ++i) {
    expected[static_cast<std::size_t>(i)] =
        reduce_serial(dtype, op, world, comm.rank() * recv_count + i);
  }
  const auto want = encode(dtype, expected);
  if (!want.empty()) {  // memcmp(null, ..., 0) is UB
    EXPECT_EQ(0, std::memcmp(want.data(), out, want.size()));
  }
}

inline void check_all_gather(Communicator& comm, DType dtype, std::int64_t send_count,
                             Placement placement) {
  SCOPED_TRACE(
      describe(dtype, send_count, placement == Placement::kInPlace ? "in-place" : "out-of-place"));
  const int world = comm.size();
  const std::size_t element_bytes = dtype_size_bytes(dtype);
  std::vector<double> expected;
  for (int r = 0; r < world; ++r) {
    for (std::int64_t i = 0; i < send_count; ++i) expected.push_back(input_value(r, i));
  }
  auto own = encode(dtype, rank_input(comm.rank(), send_count));
  std::vector<unsigned char> recv(expected.size() * element_bytes, 0xAB);
  const void* send = own.data();
  if (placement == Placement::kInPlace) {
    unsigned char* slot =
        recv.data() + static_cast<std::size_t>(send_count * comm.rank()) * element_bytes;
    if (!own.empty()) std::memcpy(slot, own.data(), own.size());
    send = slot;
  }
  PARITY_ASSERT_OK(comm.all_gather(send, recv.data(), send_count, dtype));
  EXPECT_EQ(encode(dtype, expected), recv);
}

// Block j of rank r's input goes to rank j: element i of that block is input_value(r, j*count + i).
inline void check_all_to_all(Communicator& comm, DType dtype, std::int64_t count_per_peer) {
  SCOPED_TRACE(describe(dtype, count_per_peer, "all_to_all"));
  const int world = comm.size();
  auto send = encode(dtype, rank_input(comm.rank(), count_per_peer * world));
  std::vector<unsigned char> recv(send.size(), 0xAB);
  PARITY_ASSERT_OK(comm.all_to_all(send.data(), recv.data(), count_per_peer, dtype));
  std::vector<double> expected;
  for (int r = 0; r < world; ++r) {
    for (std::int64_t i = 0; i < count_per_peer; ++i)
      expected.push_back(input_value(r, comm.rank() * count_per_peer + i));
  }
  EXPECT_EQ(encode(dtype, expected), recv);
}

// Uneven splits: rank r sends (r + 2*j) % 5 elements to rank j (some zero), packed in reverse peer
// order with a gap of 1 element between blocks; receive blocks are packed in peer order after a
// 3-element offset. Both sides compute every count from the same formula.
inline std::int64_t uneven_count(int from, int to) { return (from + 2 * to) % 5; }

inline void check_all_to_allv(Communicator& comm, DType dtype) {
  SCOPED_TRACE(describe(dtype, -1, "all_to_allv"));
  const int world = comm.size();
  const int me = comm.rank();
  AllToAllvLayout layout;
  layout.send_counts.assign(static_cast<std::size_t>(world), 0);
  layout.send_displs.assign(static_cast<std::size_t>(world), 0);
  std::int64_t offset = 0;
  for (int j = world - 1; j >= 0; --j) {
    layout.send_counts[static_cast<std::size_t>(j)] = uneven_count(me, j);
    layout.send_displs[static_cast<std::size_t>(j)] = offset;
    offset += uneven_count(me, j) + 1;
  }
  layout.send_capacity = offset;
  offset = 3;
  for (int r = 0; r < world; ++r) {
    layout.recv_counts.push_back(uneven_count(r, me));
    layout.recv_displs.push_back(offset);
    offset += uneven_count(r, me);
  }
  layout.recv_capacity = offset;
  auto send = encode(dtype, rank_input(me, layout.send_capacity));
  std::vector<double> expected(static_cast<std::size_t>(layout.recv_capacity),
                               9.0);  // untouched filler
  for (int r = 0; r < world; ++r) {
    // rank r's block for me starts at its send_displs[me], computed from the same packing
    std::int64_t their_offset = 0;
    for (int j = world - 1; j > me; --j) their_offset += uneven_count(r, j) + 1;
    for (std::int64_t i = 0; i < uneven_count(r, me); ++i) {
      expected[static_cast<std::size_t>(layout.recv_displs[static_cast<std::size_t>(r)] + i)] =
          input_value(r, their_offset + i);
    }
  }
  auto recv = encode(dtype, std::vector<double>(expected.size(), 9.0));
  PARITY_ASSERT_OK(comm.all_to_allv(send.data(), recv.data(), layout, dtype));
  EXPECT_EQ(encode(dtype, expected), recv);
}

inline void check_broadcast(Communicator& comm, DType dtype, std::int64_t count, int root) {
  SCOPED_TRACE(describe(dtype, count, "broadcast") + " root=" + std::to_string(root));
  auto buffer = encode(dtype, rank_input(comm.rank(), count));
  PARITY_ASSERT_OK(comm.broadcast(buffer.data(), count, dtype, root));
  EXPECT_EQ(encode(dtype, rank_input(root, count)), buffer);
}

inline constexpr DType kCollectiveDtypes[] = {DType::kF32, DType::kF64, DType::kBF16,
                                              DType::kF16, DType::kI32, DType::kI64};
// Zero, one, odd and larger-than-one-page counts.
inline constexpr std::int64_t kOddCounts[] = {0, 1, 7, 1001};

// Every collective, dtype, count and placement against the serial computation.
inline void check_every_collective(Communicator& comm) {
  for (DType dtype : kCollectiveDtypes) {
    for (std::int64_t count : kOddCounts) {
      for (Placement placement : {Placement::kOutOfPlace, Placement::kInPlace}) {
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
          check_all_reduce(comm, dtype, op, count, placement);
          check_reduce_scatter(comm, dtype, op, count, placement);
        }
        check_all_gather(comm, dtype, count, placement);
      }
      check_all_to_all(comm, dtype, count);
      check_broadcast(comm, dtype, count, comm.size() - 1);
    }
    check_all_to_allv(comm, dtype);
  }
}

// Deterministic mode: random fp32 values whose sum rounds, folded left to right over ranks in fp32
// (acc = x0; acc += x1; ...) must equal the communicator's result bit for bit, on every rank;
// bf16 folds the widened values the same way and rounds once. Needs reduction_order kRankOrder.
inline float random_value(std::uint64_t seed, int rank, std::int64_t index) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(rank) * 0x9E3779B97F4A7C15ull) ^
                    (static_cast<std::uint64_t>(index) * 0xBF58476D1CE4E5B9ull);
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<float>(static_cast<double>(x >> 11) * 0x1.0p-53 * 2.0 - 1.0) * 1000.0f;
}

inline void check_rank_order_all_reduce(Communicator& comm, DType dtype, std::int64_t count,
                                        std::uint64_t seed) {
  SCOPED_TRACE(describe(dtype, count, "rank-order all_reduce") + " seed=" + std::to_string(seed));
  ASSERT_TRUE(dtype == DType::kF32 || dtype == DType::kBF16);
  std::vector<double> mine(static_cast<std::size_t>(count));
  std::vector<double> expected(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    float acc = 0.0f;
    for (int r = 0; r < comm.size(); ++r) {
      float v = random_value(seed, r, i);
      if (dtype == DType::kBF16) v = bf16_bits_to_float(float_to_bf16_bits(v));
      acc = r == 0 ? v : acc + v;
      if (r == comm.rank()) mine[static_cast<std::size_t>(i)] = v;
    }
    expected[static_cast<std::size_t>(i)] = acc;
  }
  auto send = encode(dtype, mine);
  std::vector<unsigned char> recv(send.size());
  PARITY_ASSERT_OK(comm.all_reduce(send.data(), recv.data(), count, dtype, ReduceOp::kSum));
  EXPECT_EQ(encode(dtype, expected), recv);
}

}  // namespace parity::comm::testing
