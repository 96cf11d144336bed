// Names, parsing and argument validation of the collectives (CollectiveProblem::validate): every
// message starts with the parameter and its value; Communicator prefixes the collective and rank.
#include <string>

#include "comm/host_reduce.hpp"
#include "parity/comm/communicator.hpp"

namespace parity::comm {
namespace {

constexpr Collective kAllCollectives[] = {Collective::kAllReduce, Collective::kReduceScatter,
                                          Collective::kAllGather, Collective::kAllToAll,
                                          Collective::kAllToAllv, Collective::kBroadcast,
                                          Collective::kBarrier};

Status check_vector(const std::vector<std::int64_t>& values, const char* name, int world_size) {
  PARITY_CHECK_ARG(static_cast<int>(values.size()) == world_size, name, ": has ", values.size(),
                   " entries, expected one per rank (", world_size, ")");
  for (std::size_t i = 0; i < values.size(); ++i) {
    PARITY_CHECK_ARG(values[i] >= 0, name, "[", i, "]=", values[i], " must be >= 0");
  }
  return Status::ok();
}

// Each block [displs[i], displs[i] + counts[i]) must lie inside [0, capacity).
Status check_blocks(const std::vector<std::int64_t>& counts,
                    const std::vector<std::int64_t>& displs, std::int64_t capacity,
                    const char* side) {
  const std::string counts_name = std::string(side) + "_counts";
  const std::string displs_name = std::string(side) + "_displs";
  for (std::size_t i = 0; i < counts.size(); ++i) {
    PARITY_CHECK_ARG(displs[i] <= capacity && counts[i] <= capacity - displs[i], displs_name, "[",
                     i, "]=", displs[i], " + ", counts_name, "[", i, "]=", counts[i], " exceeds ",
                     side, "_capacity=", capacity);
  }
  return Status::ok();
}

// Receive blocks must not overlap (two peers would write the same elements).
Status check_recv_blocks_disjoint(const AllToAllvLayout& layout) {
  for (std::size_t i = 0; i < layout.recv_counts.size(); ++i) {
    for (std::size_t j = i + 1; j < layout.recv_counts.size(); ++j) {
      if (layout.recv_counts[i] == 0 || layout.recv_counts[j] == 0) continue;
      const bool disjoint =
          layout.recv_displs[i] + layout.recv_counts[i] <= layout.recv_displs[j] ||
          layout.recv_displs[j] + layout.recv_counts[j] <= layout.recv_displs[i];
      PARITY_CHECK_ARG(disjoint, "recv_displs: blocks from rank ", i, " (", layout.recv_displs[i],
                       "+", layout.recv_counts[i], ") and rank ", j, " (", layout.recv_displs[j],
                       "+", layout.recv_counts[j], ") overlap");
    }
  }
  return Status::ok();
}

Status validate_layout(const AllToAllvLayout* layout, int world_size) {
  PARITY_CHECK_ARG(layout != nullptr,
                   "layout: missing (all_to_allv needs counts and displacements)");
  PARITY_CHECK_ARG(layout->send_capacity >= 0, "send_capacity: ", layout->send_capacity,
                   " must be >= 0");
  PARITY_CHECK_ARG(layout->recv_capacity >= 0, "recv_capacity: ", layout->recv_capacity,
                   " must be >= 0");
  PARITY_RETURN_IF_ERROR(check_vector(layout->send_counts, "send_counts", world_size));
  PARITY_RETURN_IF_ERROR(check_vector(layout->send_displs, "send_displs", world_size));
  PARITY_RETURN_IF_ERROR(check_vector(layout->recv_counts, "recv_counts", world_size));
  PARITY_RETURN_IF_ERROR(check_vector(layout->recv_displs, "recv_displs", world_size));
  PARITY_RETURN_IF_ERROR(
      check_blocks(layout->send_counts, layout->send_displs, layout->send_capacity, "send"));
  PARITY_RETURN_IF_ERROR(
      check_blocks(layout->recv_counts, layout->recv_displs, layout->recv_capacity, "recv"));
  return check_recv_blocks_disjoint(*layout);
}

// count * world_size must not overflow int64.
Status check_count(std::int64_t count, int world_size) {
  PARITY_CHECK_ARG(count >= 0, "count: ", count, " must be >= 0");
  PARITY_CHECK_ARG(count <= INT64_MAX / 16 / world_size, "count: ", count, " times ", world_size,
                   " ranks overflows the byte size");
  return Status::ok();
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kMax:
      return "max";
  }
  return "unknown";
}

Result<ReduceOp> parse_reduce_op(std::string_view text) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
    if (text == reduce_op_name(op)) return op;
  }
  return invalid_argument("op: unknown value '", text, "' (expected sum, avg or max)");
}

std::string_view collective_name(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kAllToAll:
      return "all_to_all";
    case Collective::kAllToAllv:
      return "all_to_allv";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kBarrier:
      return "barrier";
  }
  return "unknown";
}

Result<Collective> parse_collective(std::string_view text) {
  for (Collective collective : kAllCollectives) {
    if (text == collective_name(collective)) return collective;
  }
  return invalid_argument(
      "collective: unknown value '", text,
      "' (expected all_reduce, reduce_scatter, all_gather, all_to_all, all_to_allv, broadcast "
      "or barrier)");
}

Status check_collective_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF64:
    case DType::kBF16:
    case DType::kF16:
    case DType::kI32:
    case DType::kI64:
      return Status::ok();
    default:
      break;
  }
  return invalid_argument(
      "dtype: ", dtype_name(dtype),
      " is not a collective type (expected fp32, fp64, bf16, fp16, int32 or int64)");
}

Status CollectiveProblem::validate(int world_size) const {
  PARITY_CHECK_ARG(world_size >= 1, "world_size: ", world_size, " must be >= 1");
  if (collective == Collective::kBarrier) return Status::ok();
  PARITY_RETURN_IF_ERROR(check_collective_dtype(dtype));
  switch (collective) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
      PARITY_CHECK_ARG(op == ReduceOp::kSum || op == ReduceOp::kAvg || op == ReduceOp::kMax,
                       "op: ", static_cast<int>(op), " is not sum, avg or max");
      return check_count(count, world_size);
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return check_count(count, world_size);
    case Collective::kBroadcast:
      PARITY_CHECK_ARG(root >= 0 && root < world_size, "root: ", root, " is out of range [0, ",
                       world_size, ")");
      return check_count(count, world_size);
    case Collective::kAllToAllv:
      return validate_layout(layout, world_size);
    default:
      break;
  }
  return invalid_argument("collective: ", static_cast<int>(collective),
                          " is not a known collective");
}

std::int64_t CollectiveProblem::send_elements(int world_size) const {
  switch (collective) {
    case Collective::kAllReduce:
    case Collective::kAllGather:
    case Collective::kBroadcast:
      return count;
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return count * world_size;
    case Collective::kAllToAllv:
      return layout != nullptr ? layout->send_capacity : 0;
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

std::int64_t CollectiveProblem::recv_elements(int world_size) const {
  switch (collective) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kBroadcast:
      return count;
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return count * world_size;
    case Collective::kAllToAllv:
      return layout != nullptr ? layout->recv_capacity : 0;
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

}  // namespace parity::comm
