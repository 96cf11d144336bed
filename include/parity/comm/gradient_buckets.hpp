// Bucketed gradient all-reduce for the data-parallel dense part: gradient tensors are grouped, in
// a fixed order, into flat buckets of at most `bucket_bytes`; each bucket is one all_reduce.
// The trainer calls start_bucket(i) as soon as bucket i's gradients are final in the backward
// (buckets in the order gradients become ready: last layer first), so the all-reduce runs while
// the rest of the backward computes, and finish_bucket(i) before the optimiser step. Every bucket
// has its own flat buffer, so all can be in flight at once. reduce_bucket is start + finish: the
// blocking and overlapped schedules issue the same collectives, hence the same bits. The order
// never changes between steps, so with a rank-order communicator the result is bitwise
// reproducible. Host buffers (local and MPI communicators).
#pragma once

#include <cstdint>
#include <vector>

#include "parity/comm/communicator.hpp"

namespace parity::comm {

class GradientBuckets {
 public:
  /// Tensors in `tensor_elements` order fill a bucket until the next would exceed bucket_bytes;
  /// a tensor larger than bucket_bytes gets a bucket of its own. Empty tensors are allowed.
  static Result<GradientBuckets> create(std::vector<std::int64_t> tensor_elements, DType dtype,
                                        std::int64_t bucket_bytes);

  int num_buckets() const { return static_cast<int>(bucket_first_tensor_.size()) - 1; }
  /// Tensors [first, last) of bucket `bucket`.
  int first_tensor(int bucket) const {
    return bucket_first_tensor_[static_cast<std::size_t>(bucket)];
  }
  int end_tensor(int bucket) const {
    return bucket_first_tensor_[static_cast<std::size_t>(bucket) + 1];
  }
  std::int64_t bucket_elements(int bucket) const;

  /// Flattens bucket `bucket`'s gradients (gradients[i] points at tensor i) into the bucket's
  /// flat buffer and starts its all-reduce with `op` (avg for data-parallel means).
  Status start_bucket(Communicator& comm, int bucket, const std::vector<void*>& gradients,
                      ReduceOp op);
  /// Waits for bucket `bucket`'s all-reduce and copies the result back into `gradients`.
  Status finish_bucket(Communicator& comm, int bucket, const std::vector<void*>& gradients);
  bool is_in_flight(int bucket) const {
    return in_flight_[static_cast<std::size_t>(bucket)].communicator_id != 0;
  }
  /// start_bucket then finish_bucket.
  Status reduce_bucket(Communicator& comm, int bucket, const std::vector<void*>& gradients,
                       ReduceOp op);
  /// Every bucket in order.
  Status reduce_all(Communicator& comm, const std::vector<void*>& gradients, ReduceOp op);

 private:
  std::vector<std::int64_t> tensor_elements_;
  std::vector<int> bucket_first_tensor_;  // num_buckets + 1 entries
  Status check_call(const Communicator& comm, int bucket,
                    const std::vector<void*>& gradients) const;

  DType dtype_ = DType::kF32;
  std::vector<std::int64_t> bucket_offset_bytes_;  // in flat_; num_buckets + 1 entries
  std::vector<unsigned char> flat_;                // every bucket, side by side
  std::vector<CollectiveHandle> in_flight_;        // per bucket; empty handle when not started
};

}  // namespace parity::comm
