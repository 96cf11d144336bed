// Embedding all-to-alls (see parity/comm/embedding_exchange.hpp). Every exchange is one
// all_to_allv whose counts each side computes from data both sides know (batch sizes, owners,
// dims), except the ids, whose per-destination counts are exchanged first.
#include "parity/comm/embedding_exchange.hpp"

#include <cstring>
#include <numeric>

namespace parity::comm {
namespace {

Status check_owners(const std::vector<int>& table_owner, int num_tables, int world_size) {
  PARITY_CHECK_ARG(static_cast<int>(table_owner.size()) == num_tables,
                   "table_owner: ", table_owner.size(), " entries for ", num_tables, " tables");
  for (std::size_t t = 0; t < table_owner.size(); ++t) {
    PARITY_CHECK_ARG(table_owner[t] >= 0 && table_owner[t] < world_size, "table_owner[", t,
                     "]=", table_owner[t], " is out of range [0, ", world_size, ")");
  }
  return Status::ok();
}

std::vector<int> tables_of(const std::vector<int>& table_owner, int rank) {
  std::vector<int> tables;
  for (std::size_t t = 0; t < table_owner.size(); ++t) {
    if (table_owner[t] == rank) tables.push_back(static_cast<int>(t));
  }
  return tables;
}

std::vector<std::int64_t> exclusive_sum(const std::vector<std::int64_t>& values) {
  std::vector<std::int64_t> offsets(values.size() + 1, 0);
  std::partial_sum(values.begin(), values.end(), offsets.begin() + 1);
  return offsets;
}

// Validated pooled layout: widths of every rank's owned tables and the local column offsets.
struct PooledGeometry {
  std::vector<std::int64_t> owned_width;    // per rank
  std::vector<std::int64_t> column_offset;  // per table, in the local layout
  std::int64_t total_width = 0;
  std::vector<std::int64_t> sample_offset;  // per rank, into the global batch
};

Result<PooledGeometry> pooled_geometry(const Communicator& comm, const RoutedSparseBatch& routed,
                                       const PooledLayout& layout) {
  const int num_tables = static_cast<int>(layout.table_owner.size());
  PARITY_RETURN_IF_ERROR(check_owners(layout.table_owner, num_tables, comm.size()));
  PARITY_RETURN_IF_ERROR(check_collective_dtype(layout.dtype));
  PARITY_CHECK_ARG(static_cast<int>(layout.table_dims.size()) == num_tables,
                   "table_dims: ", layout.table_dims.size(), " entries for ", num_tables,
                   " tables");
  PARITY_CHECK_ARG(static_cast<int>(routed.rank_batch_sizes.size()) == comm.size(),
                   "routed.rank_batch_sizes: ", routed.rank_batch_sizes.size(), " entries for ",
                   comm.size(), " ranks");
  PooledGeometry g;
  g.owned_width.assign(static_cast<std::size_t>(comm.size()), 0);
  for (int t = 0; t < num_tables; ++t) {
    PARITY_CHECK_ARG(layout.table_dims[t] >= 1, "table_dims[", t, "]=", layout.table_dims[t],
                     " must be >= 1");
    g.owned_width[static_cast<std::size_t>(layout.table_owner[t])] += layout.table_dims[t];
    g.column_offset.push_back(g.total_width);
    g.total_width += layout.table_dims[t];
  }
  g.sample_offset = exclusive_sum(routed.rank_batch_sizes);
  return g;
}

enum class CopyDirection : std::uint8_t { kPackedToLocal, kLocalToPacked };

// Copies `rows` rows of the columns of `owner`'s tables between a packed [rows][owned width]
// block and the local [rows][total width] layout.
void copy_owner_columns(const PooledLayout& layout, const PooledGeometry& g, int owner,
                        std::int64_t rows, CopyDirection direction, const unsigned char* from,
                        unsigned char* to) {
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(layout.dtype));
  const std::int64_t width = g.owned_width[static_cast<std::size_t>(owner)];
  for (std::int64_t b = 0; b < rows; ++b) {
    std::int64_t packed_column = 0;
    for (std::size_t t = 0; t < layout.table_owner.size(); ++t) {
      if (layout.table_owner[t] != owner) continue;
      const std::int64_t packed_offset = (b * width + packed_column) * element_bytes;
      const std::int64_t local_offset = (b * g.total_width + g.column_offset[t]) * element_bytes;
      const auto bytes = static_cast<std::size_t>(layout.table_dims[t] * element_bytes);
      if (direction == CopyDirection::kPackedToLocal) {
        std::memcpy(to + local_offset, from + packed_offset, bytes);
      } else {
        std::memcpy(to + packed_offset, from + local_offset, bytes);
      }
      packed_column += layout.table_dims[t];
    }
  }
}

}  // namespace

Status SparseBatch::validate() const {
  PARITY_CHECK_ARG(num_tables >= 0, "num_tables: ", num_tables, " must be >= 0");
  PARITY_CHECK_ARG(batch_size >= 0, "batch_size: ", batch_size, " must be >= 0");
  PARITY_CHECK_ARG(static_cast<std::int64_t>(lengths.size()) == num_tables * batch_size,
                   "lengths: ", lengths.size(),
                   " entries, expected num_tables * batch_size = ", num_tables * batch_size);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    PARITY_CHECK_ARG(lengths[i] >= 0, "lengths[", i, "]=", lengths[i], " must be >= 0");
    total += lengths[i];
  }
  PARITY_CHECK_ARG(total == static_cast<std::int64_t>(ids.size()), "ids: ", ids.size(),
                   " entries, but the lengths sum to ", total);
  return Status::ok();
}

// Long on purpose: the three collective phases (counts, lengths, ids) share their displacement
// arrays; split apart they would pass a dozen vectors between them.
Result<RoutedSparseBatch> route_sparse_batch(Communicator& comm, const SparseBatch& local,
                                             const std::vector<int>& table_owner) {
  PARITY_CHECK_ARG(comm.buffer_device() == DeviceKind::kCpu,
                   "route_sparse_batch: needs a host communicator (", comm.backend_name(),
                   " uses device buffers)");
  PARITY_RETURN_IF_ERROR(local.validate().with_context("route_sparse_batch: local"));
  PARITY_RETURN_IF_ERROR(
      check_owners(table_owner, local.num_tables, comm.size()).with_context("route_sparse_batch"));
  const int world = comm.size();
  const auto n = static_cast<std::size_t>(world);
  RoutedSparseBatch routed;
  routed.tables = tables_of(table_owner, comm.rank());
  routed.rank_batch_sizes.assign(n, 0);
  PARITY_RETURN_IF_ERROR(
      comm.all_gather(&local.batch_size, routed.rank_batch_sizes.data(), 1, DType::kI64));
  const std::vector<std::int64_t> sample_offset = exclusive_sum(routed.rank_batch_sizes);
  routed.global_batch_size = sample_offset.back();

  // Per-table id ranges of the local CSR, then the send blocks packed by destination.
  std::vector<std::int64_t> table_ids(static_cast<std::size_t>(local.num_tables), 0);
  for (int t = 0; t < local.num_tables; ++t) {
    for (std::int64_t b = 0; b < local.batch_size; ++b)
      table_ids[t] += local.lengths[t * local.batch_size + b];
  }
  const std::vector<std::int64_t> table_id_offset = exclusive_sum(table_ids);
  AllToAllvLayout lengths_layout, ids_layout;
  std::vector<std::int64_t> send_lengths, send_ids;
  for (int peer = 0; peer < world; ++peer) {
    const std::vector<int> owned = tables_of(table_owner, peer);
    lengths_layout.send_displs.push_back(static_cast<std::int64_t>(send_lengths.size()));
    ids_layout.send_displs.push_back(static_cast<std::int64_t>(send_ids.size()));
    for (int t : owned) {
      const auto* first = local.lengths.data() + t * local.batch_size;
      send_lengths.insert(send_lengths.end(), first, first + local.batch_size);
      const auto* first_id = local.ids.data() + table_id_offset[t];
      send_ids.insert(send_ids.end(), first_id, first_id + table_ids[t]);
    }
    lengths_layout.send_counts.push_back(static_cast<std::int64_t>(send_lengths.size()) -
                                         lengths_layout.send_displs.back());
    ids_layout.send_counts.push_back(static_cast<std::int64_t>(send_ids.size()) -
                                     ids_layout.send_displs.back());
  }
  // Counts exchange: how many ids each rank sends here (lengths counts follow from batch sizes).
  std::vector<std::int64_t> ids_from(n, 0);
  PARITY_RETURN_IF_ERROR(
      comm.all_to_all(ids_layout.send_counts.data(), ids_from.data(), 1, DType::kI64));
  const auto owned_count = static_cast<std::int64_t>(routed.tables.size());
  for (std::size_t s = 0; s < n; ++s) {
    lengths_layout.recv_counts.push_back(owned_count * routed.rank_batch_sizes[s]);
    lengths_layout.recv_displs.push_back(owned_count * sample_offset[s]);
  }
  ids_layout.recv_counts = ids_from;
  ids_layout.recv_displs = exclusive_sum(ids_from);
  ids_layout.recv_displs.pop_back();
  lengths_layout.send_capacity = static_cast<std::int64_t>(send_lengths.size());
  lengths_layout.recv_capacity = owned_count * routed.global_batch_size;
  ids_layout.send_capacity = static_cast<std::int64_t>(send_ids.size());
  ids_layout.recv_capacity = std::accumulate(ids_from.begin(), ids_from.end(), std::int64_t{0});
  std::vector<std::int64_t> recv_lengths(static_cast<std::size_t>(lengths_layout.recv_capacity));
  std::vector<std::int64_t> recv_ids(static_cast<std::size_t>(ids_layout.recv_capacity));
  PARITY_RETURN_IF_ERROR(
      comm.all_to_allv(send_lengths.data(), recv_lengths.data(), lengths_layout, DType::kI64));
  PARITY_RETURN_IF_ERROR(
      comm.all_to_allv(send_ids.data(), recv_ids.data(), ids_layout, DType::kI64));

  // Received: per source s, [owned table k][B_s] lengths and the ids of each k in turn. Reorder
  // to (k, global sample): for each k, the sources in rank order.
  routed.lengths.resize(recv_lengths.size());
  std::vector<std::int64_t> cursor(ids_layout.recv_displs);  // next unread id of each source
  for (std::int64_t k = 0; k < owned_count; ++k) {
    for (std::size_t s = 0; s < n; ++s) {
      const std::int64_t batch = routed.rank_batch_sizes[s];
      const std::int64_t* block = recv_lengths.data() + lengths_layout.recv_displs[s] + k * batch;
      std::copy(block, block + batch,
                routed.lengths.begin() + k * routed.global_batch_size + sample_offset[s]);
      const std::int64_t count = std::accumulate(block, block + batch, std::int64_t{0});
      routed.ids.insert(routed.ids.end(), recv_ids.begin() + cursor[s],
                        recv_ids.begin() + cursor[s] + count);
      cursor[s] += count;
    }
  }
  return routed;
}

Status return_pooled_outputs(Communicator& comm, const RoutedSparseBatch& routed,
                             const PooledLayout& layout, const void* owned_pooled,
                             void* local_pooled) {
  PARITY_ASSIGN_OR_RETURN(const PooledGeometry g, pooled_geometry(comm, routed, layout));
  const auto n = static_cast<std::size_t>(comm.size());
  const std::int64_t my_batch = routed.rank_batch_sizes[static_cast<std::size_t>(comm.rank())];
  const std::int64_t my_width = g.owned_width[static_cast<std::size_t>(comm.rank())];
  AllToAllvLayout a2a;  // send: rows of rank s's samples; receive: [my_batch][width of owner o]
  std::int64_t offset = 0;
  for (std::size_t s = 0; s < n; ++s) {
    a2a.send_counts.push_back(routed.rank_batch_sizes[s] * my_width);
    a2a.send_displs.push_back(g.sample_offset[s] * my_width);
    a2a.recv_counts.push_back(my_batch * g.owned_width[s]);
    a2a.recv_displs.push_back(offset);
    offset += a2a.recv_counts.back();
  }
  a2a.send_capacity = g.sample_offset.back() * my_width;
  a2a.recv_capacity = offset;
  std::vector<unsigned char> packed(static_cast<std::size_t>(offset) *
                                    dtype_size_bytes(layout.dtype));
  PARITY_RETURN_IF_ERROR(comm.all_to_allv(owned_pooled, packed.data(), a2a, layout.dtype));
  for (std::size_t o = 0; o < n; ++o) {
    copy_owner_columns(layout, g, static_cast<int>(o), my_batch, CopyDirection::kPackedToLocal,
                       packed.data() + a2a.recv_displs[o] * static_cast<std::int64_t>(
                                                                dtype_size_bytes(layout.dtype)),
                       static_cast<unsigned char*>(local_pooled));
  }
  return Status::ok();
}

Status send_pooled_gradients(Communicator& comm, const RoutedSparseBatch& routed,
                             const PooledLayout& layout, const void* local_gradients,
                             void* owned_gradients) {
  PARITY_ASSIGN_OR_RETURN(const PooledGeometry g, pooled_geometry(comm, routed, layout));
  const auto n = static_cast<std::size_t>(comm.size());
  const std::int64_t my_batch = routed.rank_batch_sizes[static_cast<std::size_t>(comm.rank())];
  const std::int64_t my_width = g.owned_width[static_cast<std::size_t>(comm.rank())];
  AllToAllvLayout a2a;  // the transpose of return_pooled_outputs' exchange
  std::int64_t offset = 0;
  for (std::size_t o = 0; o < n; ++o) {
    a2a.send_counts.push_back(my_batch * g.owned_width[o]);
    a2a.send_displs.push_back(offset);
    offset += a2a.send_counts.back();
    a2a.recv_counts.push_back(routed.rank_batch_sizes[o] * my_width);
    a2a.recv_displs.push_back(g.sample_offset[o] * my_width);
  }
  a2a.send_capacity = offset;
  a2a.recv_capacity = g.sample_offset.back() * my_width;
  std::vector<unsigned char> packed(static_cast<std::size_t>(offset) *
                                    dtype_size_bytes(layout.dtype));
  for (std::size_t o = 0; o < n; ++o) {
    copy_owner_columns(layout, g, static_cast<int>(o), my_batch, CopyDirection::kLocalToPacked,
                       static_cast<const unsigned char*>(local_gradients),
                       packed.data() + a2a.send_displs[o] * static_cast<std::int64_t>(
                                                                dtype_size_bytes(layout.dtype)));
  }
  return comm.all_to_allv(packed.data(), owned_gradients, a2a, layout.dtype);
}

}  // namespace parity::comm
