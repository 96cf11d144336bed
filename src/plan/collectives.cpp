// Alpha-beta collective models (Thakur, Rabenseifner, Gropp 2005; NCCL's bus-bandwidth
// conventions), specialised to switched vs full-mesh scale-up. docs/planner.md has the equations.
#include "parity/plan/collectives.hpp"

#include <algorithm>
#include <cmath>

namespace parity::plan {

CommParams comm_params(const Machine& machine, const PlannerCalibration& calibration) {
  CommParams comm;
  comm.ranks = machine.num_gpus;
  comm.nodes = machine.num_nodes;
  comm.ranks_per_node = machine.gpus_per_node();
  comm.is_full_mesh = machine.gpu.scale_up_topology == hw::ScaleUpTopology::kFullMesh;
  // GB/s = 1e3 bytes per microsecond.
  const double up_efficiency = calibration.scale_up_efficiency.value;
  comm.link_bytes_per_us = machine.gpu.scale_up_link_gbps.value * 1e3 * up_efficiency;
  comm.gpu_bytes_per_us = machine.gpu.scale_up_per_gpu_gbps.value * 1e3 * up_efficiency;
  comm.nic_bytes_per_us =
      machine.gpu.scale_out_nic_gbps.value * 1e3 * calibration.scale_out_efficiency.value;
  comm.base_us = calibration.collective_base_us.value;
  comm.scale_up_step_us = calibration.scale_up_step_us.value;
  comm.scale_out_step_us = calibration.scale_out_step_us.value;
  comm.in_switch_reduction_speedup =
      comm.is_full_mesh ? 1.0 : calibration.in_switch_reduction_speedup.value;
  return comm;
}

std::string_view all_reduce_algorithm_name(AllReduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllReduceAlgorithm::kRing: return "ring";
    case AllReduceAlgorithm::kTree: return "tree";
    case AllReduceAlgorithm::kInSwitch: return "in_switch";
    case AllReduceAlgorithm::kHierarchical: return "hierarchical";
  }
  return "unknown";
}

namespace {

// Bandwidth a collective over `group` GPUs of one domain gets per GPU: the switch port, or on a
// full mesh the links to the other group members (multi-ring over every link), capped by the port.
double group_bytes_per_us(const CommParams& comm, int group) {
  if (!comm.is_full_mesh) return comm.gpu_bytes_per_us;
  return std::min(comm.gpu_bytes_per_us, (group - 1) * comm.link_bytes_per_us);
}

CollectiveTime intra_all_reduce(const CommParams& comm, int group, double bytes) {
  if (group <= 1 || bytes <= 0.0) return {0.0, AllReduceAlgorithm::kRing};
  const double p = group;
  const double bandwidth = group_bytes_per_us(comm, group);
  const double ring_us =
      comm.base_us + 2.0 * (p - 1.0) * comm.scale_up_step_us + 2.0 * (p - 1.0) / p * bytes / bandwidth;
  // A pipelined double-binary tree moves every byte up and down once: algbw = busbw / 2.
  const double tree_us = comm.base_us + 2.0 * std::ceil(std::log2(p)) * comm.scale_up_step_us +
                         2.0 * bytes / bandwidth;
  CollectiveTime best{ring_us, AllReduceAlgorithm::kRing};
  if (tree_us < best.time_us) best = {tree_us, AllReduceAlgorithm::kTree};
  if (comm.in_switch_reduction_speedup > 1.0) {
    const double in_switch_us = comm.base_us + 2.0 * comm.scale_up_step_us +
                                2.0 * (p - 1.0) / p * bytes /
                                    (bandwidth * comm.in_switch_reduction_speedup);
    if (in_switch_us < best.time_us) best = {in_switch_us, AllReduceAlgorithm::kInSwitch};
  }
  return best;
}

}  // namespace

CollectiveTime all_reduce_time(const CommParams& comm, double bytes) {
  if (comm.ranks <= 1 || bytes <= 0.0) return {0.0, AllReduceAlgorithm::kRing};
  if (comm.nodes <= 1) return intra_all_reduce(comm, comm.ranks, bytes);
  // Hierarchical: reduce-scatter + all-gather inside the node (together one intra all-reduce),
  // and between them a ring all-reduce over the nodes of each GPU's 1/ranks_per_node share.
  const double nodes = comm.nodes;
  const double share = bytes / comm.ranks_per_node;
  const double inter_us = comm.base_us + 2.0 * (nodes - 1.0) * comm.scale_out_step_us +
                          2.0 * (nodes - 1.0) / nodes * share / comm.nic_bytes_per_us;
  const double intra_us = intra_all_reduce(comm, comm.ranks_per_node, bytes).time_us;
  return {intra_us + inter_us, AllReduceAlgorithm::kHierarchical};
}

double all_to_all_time(const CommParams& comm, const std::vector<double>& bytes_per_peer) {
  const int p = comm.ranks;
  if (p <= 1 || static_cast<int>(bytes_per_peer.size()) != p) return 0.0;
  const int q = comm.ranks_per_node;
  // Per node: total bytes each node's senders put out per peer (receivers see the sum of others).
  std::vector<double> node_sum(static_cast<std::size_t>(comm.nodes), 0.0);
  double total = 0.0, max_per_peer = 0.0;
  for (int rank = 0; rank < p; ++rank) {
    node_sum[static_cast<std::size_t>(rank / q)] += bytes_per_peer[rank];
    total += bytes_per_peer[rank];
    max_per_peer = std::max(max_per_peer, bytes_per_peer[rank]);
  }
  if (total <= 0.0) return 0.0;
  double intra_us = 0.0, inter_us = 0.0;
  if (q > 1) {
    if (comm.is_full_mesh) {
      intra_us = max_per_peer / comm.link_bytes_per_us;  // the busiest pair on its own link
    } else {
      double busiest = 0.0;
      for (int rank = 0; rank < p; ++rank) {
        const double sent = (q - 1) * bytes_per_peer[rank];
        const double received = node_sum[static_cast<std::size_t>(rank / q)] - bytes_per_peer[rank];
        busiest = std::max({busiest, sent, received});
      }
      intra_us = busiest / comm.gpu_bytes_per_us;
    }
  }
  if (comm.nodes > 1) {
    double busiest = 0.0;
    for (int rank = 0; rank < p; ++rank) {
      const double sent = (p - q) * bytes_per_peer[rank];
      const double received = total - node_sum[static_cast<std::size_t>(rank / q)];
      busiest = std::max({busiest, sent, received});
    }
    inter_us = busiest / comm.nic_bytes_per_us;
  }
  const double latency_us =
      comm.base_us + (comm.nodes > 1 ? comm.scale_out_step_us : comm.scale_up_step_us);
  return latency_us + std::max(intra_us, inter_us);
}

}  // namespace parity::plan
