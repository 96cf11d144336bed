#include "parity/gemm/candidate_space.hpp"

namespace parity::gemm {

std::vector<Candidate> hopper_modelled_space(const ProblemClass& key) {
  const int tile_k = static_cast<int>(128 / dtype_size_bytes(key.a_dtype));
  const int tiles[] = {64, 128, 192, 256};
  const int clusters[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}};
  const int splits[] = {1, 2, 4, 8};
  std::vector<Candidate> space;
  space.reserve(256);
  for (const int tm : tiles) {
    for (const int tn : tiles) {
      for (const auto& cluster : clusters) {
        for (const int split : splits) {
          Candidate c;
          c.tile_m = tm;
          c.tile_n = tn;
          c.tile_k = tile_k;
          c.cluster_m = cluster[0];
          c.cluster_n = cluster[1];
          // wgmma: 64 rows per instruction, N up to 256 per warpgroup.
          c.mi_m = 64;
          c.mi_n = tn;
          c.mi_k = static_cast<int>(32 / dtype_size_bytes(key.a_dtype));
          c.split_k = split;
          c.reduction = split > 1 ? ReductionScheme::kComputeType : ReductionScheme::kNone;
          c.kernel_family = 0;
          space.push_back(c);
        }
      }
    }
  }
  return space;
}

std::vector<Candidate> amd_modelled_space(const ProblemClass& key, const DeviceParams& device) {
  // Macro-tile sizes of Origami's configuration list (origami-rankings in data/reference).
  const int mn_sizes[] = {16, 32, 48, 64, 96, 128, 192, 224, 256, 336, 448, 512};
  const int k_sizes[] = {16, 32, 64, 128, 256, 512, 1024};
  const int element_bytes = static_cast<int>(dtype_size_bytes(key.a_dtype));
  struct Mi {
    int m, k;
  };
  const Mi instructions[] = {{32, device.mi_k_32}, {16, device.mi_k_16}};
  std::vector<Candidate> space;
  for (const int tm : mn_sizes) {
    for (const int tn : mn_sizes) {
      for (const int tk : k_sizes) {
        if (static_cast<double>(tm + tn) * tk * element_bytes > device.smem_bytes_per_sm) continue;
        for (const Mi& mi : instructions) {
          if (tm % mi.m != 0 || tn % mi.m != 0 || tk % mi.k != 0) continue;
          Candidate base;
          base.tile_m = tm;
          base.tile_n = tn;
          base.tile_k = tk;
          base.mi_m = mi.m;
          base.mi_n = mi.m;
          base.mi_k = mi.k;
          base.stages = 2;  // prefetch depth
          base.xcd_mapping = XcdMapping::kContiguous;
          for (const int occupancy : {2, 1}) {
            for (const int wgm : {1, 4, 8}) {
              Candidate c = base;
              c.occupancy = occupancy;
              c.group_size = wgm;
              space.push_back(c);
            }
          }
          Candidate round_robin = base;
          round_robin.xcd_mapping = XcdMapping::kRoundRobin;
          space.push_back(round_robin);
          Candidate stream_k = base;
          stream_k.decomposition = Decomposition::kStreamK;
          stream_k.group_size = 8;
          space.push_back(stream_k);
        }
      }
    }
  }
  return space;
}

std::vector<Candidate> modelled_space(const ProblemClass& key, const DeviceParams& device) {
  return device.kind == ModelKind::kOrigami ? amd_modelled_space(key, device)
                                            : hopper_modelled_space(key);
}

Result<std::vector<Candidate>> ModelledProvider::enumerate(const GemmProblem& problem) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  const ProblemClass key = problem_class(problem);
  const std::uint64_t hash = problem_class_hash(key);
  auto it = cache_.find(hash);
  if (it == cache_.end()) it = cache_.emplace(hash, modelled_space(key, device_)).first;
  return it->second;
}

Status ModelledProvider::check(const GemmProblem& problem, const Candidate& candidate) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_RETURN_IF_ERROR(validate_candidate(candidate));
  const GemmModel model(device_, default_scalars(device_));
  const PreparedCandidate prepared = model.prepare(problem_class(problem), candidate);
  if (!prepared.is_feasible) {
    return unsupported("modelled: ", candidate.short_name(), " does not fit in ",
                       device_.smem_bytes_per_sm / 1024.0, " KiB of shared memory on ",
                       device_.name);
  }
  return Status::ok();
}

Status ModelledProvider::run(const GemmProblem& /*problem*/, const Candidate& candidate,
                             const GemmOperands& /*operands*/) {
  return unsupported("modelled: ", candidate.short_name(),
                     " is a modelled configuration; run it through a device provider");
}

}  // namespace parity::gemm
