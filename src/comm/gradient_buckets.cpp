// Bucketed gradient all-reduce (see parity/comm/gradient_buckets.hpp).
#include "parity/comm/gradient_buckets.hpp"

#include <algorithm>
#include <cstring>

namespace parity::comm {

Result<GradientBuckets> GradientBuckets::create(std::vector<std::int64_t> tensor_elements,
                                                DType dtype, std::int64_t bucket_bytes) {
  PARITY_RETURN_IF_ERROR(check_collective_dtype(dtype).with_context("gradient buckets"));
  PARITY_CHECK_ARG(bucket_bytes >= 1, "bucket_bytes: ", bucket_bytes, " must be >= 1");
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  GradientBuckets buckets;
  buckets.dtype_ = dtype;
  buckets.bucket_first_tensor_.push_back(0);
  buckets.bucket_offset_bytes_.push_back(0);
  std::int64_t filled_bytes = 0;
  std::int64_t total_bytes = 0;
  for (std::size_t i = 0; i < tensor_elements.size(); ++i) {
    PARITY_CHECK_ARG(tensor_elements[i] >= 0, "tensor_elements[", i, "]=", tensor_elements[i],
                     " must be >= 0");
    const std::int64_t bytes = tensor_elements[i] * element_bytes;
    if (filled_bytes > 0 && filled_bytes + bytes > bucket_bytes) {  // close the current bucket
      buckets.bucket_first_tensor_.push_back(static_cast<int>(i));
      buckets.bucket_offset_bytes_.push_back(total_bytes);
      filled_bytes = 0;
    }
    filled_bytes += bytes;
    total_bytes += bytes;
  }
  if (!tensor_elements.empty()) {
    buckets.bucket_first_tensor_.push_back(static_cast<int>(tensor_elements.size()));
    buckets.bucket_offset_bytes_.push_back(total_bytes);
  }
  buckets.tensor_elements_ = std::move(tensor_elements);
  buckets.flat_.resize(static_cast<std::size_t>(total_bytes));
  buckets.in_flight_.resize(static_cast<std::size_t>(buckets.num_buckets()));
  return buckets;
}

std::int64_t GradientBuckets::bucket_elements(int bucket) const {
  std::int64_t elements = 0;
  for (int i = first_tensor(bucket); i < end_tensor(bucket); ++i)
    elements += tensor_elements_[static_cast<std::size_t>(i)];
  return elements;
}

Status GradientBuckets::check_call(const Communicator& comm, int bucket,
                                   const std::vector<void*>& gradients) const {
  PARITY_CHECK_ARG(bucket >= 0 && bucket < num_buckets(), "bucket: ", bucket,
                   " is out of range [0, ", num_buckets(), ")");
  PARITY_CHECK_ARG(gradients.size() == tensor_elements_.size(), "gradients: ", gradients.size(),
                   " pointers for ", tensor_elements_.size(), " tensors");
  PARITY_CHECK_ARG(comm.buffer_device() == DeviceKind::kCpu,
                   "gradient buckets: need a host communicator (", comm.backend_name(),
                   " uses device buffers)");
  for (int i = first_tensor(bucket); i < end_tensor(bucket); ++i) {
    PARITY_CHECK_ARG(gradients[static_cast<std::size_t>(i)] != nullptr ||
                         tensor_elements_[static_cast<std::size_t>(i)] == 0,
                     "gradients[", i, "]: null");
  }
  return Status::ok();
}

Status GradientBuckets::start_bucket(Communicator& comm, int bucket,
                                     const std::vector<void*>& gradients, ReduceOp op) {
  PARITY_RETURN_IF_ERROR(check_call(comm, bucket, gradients));
  PARITY_CHECK_ARG(!is_in_flight(bucket), "bucket: ", bucket,
                   " is already in flight (finish_bucket it first)");
  const std::size_t element_bytes = dtype_size_bytes(dtype_);
  unsigned char* flat = flat_.data() + bucket_offset_bytes_[static_cast<std::size_t>(bucket)];
  std::size_t offset = 0;
  for (int i = first_tensor(bucket); i < end_tensor(bucket); ++i) {
    const std::size_t bytes =
        static_cast<std::size_t>(tensor_elements_[static_cast<std::size_t>(i)]) * element_bytes;
    if (bytes > 0) std::memcpy(flat + offset, gradients[static_cast<std::size_t>(i)], bytes);
    offset += bytes;
  }
  PARITY_ASSIGN_OR_RETURN(in_flight_[static_cast<std::size_t>(bucket)],
                          comm.start_all_reduce(flat, flat, bucket_elements(bucket), dtype_, op));
  return Status::ok();
}

Status GradientBuckets::finish_bucket(Communicator& comm, int bucket,
                                      const std::vector<void*>& gradients) {
  PARITY_RETURN_IF_ERROR(check_call(comm, bucket, gradients));
  PARITY_CHECK_ARG(is_in_flight(bucket), "bucket: ", bucket,
                   " is not in flight (start_bucket it first)");
  const CollectiveHandle handle = in_flight_[static_cast<std::size_t>(bucket)];
  in_flight_[static_cast<std::size_t>(bucket)] = {};
  PARITY_RETURN_IF_ERROR(comm.wait(handle));
  const std::size_t element_bytes = dtype_size_bytes(dtype_);
  const unsigned char* flat =
      flat_.data() + bucket_offset_bytes_[static_cast<std::size_t>(bucket)];
  std::size_t offset = 0;
  for (int i = first_tensor(bucket); i < end_tensor(bucket); ++i) {
    const std::size_t bytes =
        static_cast<std::size_t>(tensor_elements_[static_cast<std::size_t>(i)]) * element_bytes;
    if (bytes > 0) std::memcpy(gradients[static_cast<std::size_t>(i)], flat + offset, bytes);
    offset += bytes;
  }
  return Status::ok();
}

Status GradientBuckets::reduce_bucket(Communicator& comm, int bucket,
                                      const std::vector<void*>& gradients, ReduceOp op) {
  PARITY_RETURN_IF_ERROR(start_bucket(comm, bucket, gradients, op));
  return finish_bucket(comm, bucket, gradients);
}

Status GradientBuckets::reduce_all(Communicator& comm, const std::vector<void*>& gradients,
                                   ReduceOp op) {
  for (int bucket = 0; bucket < num_buckets(); ++bucket)
    PARITY_RETURN_IF_ERROR(reduce_bucket(comm, bucket, gradients, op));
  return Status::ok();
}

}  // namespace parity::comm
