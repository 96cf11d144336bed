// Collective cost models (alpha-beta) on the machine's topology: switched scale-up (NVSwitch:
// every GPU injects at its per-GPU bandwidth, optional in-switch reduction) or full mesh (xGMI:
// one link per GPU pair), scale-up domains joined by per-GPU NICs. Times in microseconds, bytes
// as the collective's user sees them. Pure functions; see docs/planner.md for the equations.
#pragma once

#include <string_view>
#include <vector>

#include "parity/plan/calibration.hpp"
#include "parity/plan/inputs.hpp"

namespace parity::plan {

// The bandwidths and latencies the models use, derived once from machine + calibration.
struct CommParams {
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes = 1;
  bool is_full_mesh = false;
  double link_bytes_per_us = 0.0;     // one scale-up link, one direction, achievable
  double gpu_bytes_per_us = 0.0;      // per-GPU scale-up injection, achievable
  double nic_bytes_per_us = 0.0;      // per-GPU NIC, achievable
  double base_us = 0.0;
  double scale_up_step_us = 0.0;
  double scale_out_step_us = 0.0;
  double in_switch_reduction_speedup = 1.0;
};
CommParams comm_params(const Machine& machine, const PlannerCalibration& calibration);

enum class AllReduceAlgorithm : std::uint8_t { kRing, kTree, kInSwitch, kHierarchical };
std::string_view all_reduce_algorithm_name(AllReduceAlgorithm algorithm);

struct CollectiveTime {
  double time_us = 0.0;
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;  // all-reduce only
};

// All-reduce of `bytes` over every rank: the fastest of ring, tree, in-switch (when the switch
// reduces) inside one domain; across domains the hierarchical form (intra reduce-scatter,
// inter-node ring over 1/ranks_per_node of the data, intra all-gather).
CollectiveTime all_reduce_time(const CommParams& comm, double bytes);

// All-to-all where rank o sends `bytes_per_peer[o]` to every other rank (the pattern of pooled
// embeddings: an owner sends each peer that peer's share of its tables' outputs). Switched: the
// busiest sender or receiver at its injection bandwidth; full mesh: the busiest pair on its one
// link; across domains the off-node part through the NICs, concurrently with the on-node part.
double all_to_all_time(const CommParams& comm, const std::vector<double>& bytes_per_peer);

}  // namespace parity::plan
