#include "prefetching_reader.hpp"

#include <utility>

namespace parity::data {

PrefetchingReader::~PrefetchingReader() { stop(); }

void PrefetchingReader::start() {
  if (options_.prefetch_batches <= 0) return;  // synchronous: next() calls produce itself
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void PrefetchingReader::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  for (Item& item : queue_) free_batches_.push_back(std::move(item.batch));
  queue_.clear();
}

void PrefetchingReader::run() {
  const auto depth = static_cast<std::size_t>(options_.prefetch_batches);
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || queue_.size() < depth; });
      if (stopping_) return;
      if (!free_batches_.empty()) {
        item.batch = std::move(free_batches_.back());
        free_batches_.pop_back();
      }
    }
    Result<bool> produced = produce(&item.batch);  // the slow part runs unlocked
    const bool is_last = !produced.is_ok() || !produced.value();
    if (!produced.is_ok()) item.status = produced.status();
    item.is_end = produced.is_ok() && !produced.value();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(item));
    }
    changed_.notify_all();
    if (is_last) return;
  }
}

Result<bool> PrefetchingReader::next(Batch* batch) {
  PARITY_CHECK_ARG(batch != nullptr, "next: batch is null");
  if (!thread_.joinable()) {
    PARITY_ASSIGN_OR_RETURN(const bool has_batch, produce(batch));
    if (has_batch) position_samples_ += batch->batch_size;
    return has_batch;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !queue_.empty(); });
  Item& front = queue_.front();
  if (!front.status.is_ok() || front.is_end) {
    // Leave the end/error at the front: every later next() sees it again.
    if (!front.status.is_ok()) return front.status;
    return false;
  }
  std::swap(*batch, front.batch);
  free_batches_.push_back(std::move(front.batch));
  queue_.pop_front();
  position_samples_ += batch->batch_size;
  lock.unlock();
  changed_.notify_all();
  return true;
}

Status PrefetchingReader::seek_samples(std::int64_t position) {
  PARITY_CHECK_ARG(position >= 0, "seek_samples: position ", position, " is negative");
  const std::int64_t total = num_samples();
  PARITY_CHECK_ARG(total < 0 || position <= total, "seek_samples: position ", position,
                   " is past the end of the split (", total, " samples)");
  const bool was_running = thread_.joinable();
  stop();
  PARITY_RETURN_IF_ERROR(restart_at(position));
  position_samples_ = position;
  if (was_running || options_.prefetch_batches > 0) start();
  return Status::ok();
}

}  // namespace parity::data
