// The BatchReader machinery shared by the binary and TSV readers: a subclass produces batches in
// order (produce) and can restart at a sample position (restart_at); this base runs produce on a
// background thread into a bounded queue (ReaderOptions::prefetch_batches deep) and hands batches
// out by swapping buffers, so steady-state reading allocates nothing. position_samples counts only
// the samples handed out, so a checkpoint taken between next() calls resumes exactly.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "parity/data/dataset.hpp"

namespace parity::data {

class PrefetchingReader : public BatchReader {
 public:
  ~PrefetchingReader() override;
  Result<bool> next(Batch* batch) final;
  std::int64_t position_samples() const final { return position_samples_; }
  Status seek_samples(std::int64_t position) final;

 protected:
  explicit PrefetchingReader(const ReaderOptions& options) : options_(options) {}
  // Subclasses call start() at the end of their own construction (the thread calls produce).
  void start();
  // Fills `batch` (buffers may hold an earlier batch: resize, do not assume empty); false at the
  // end.
  virtual Result<bool> produce(Batch* batch) = 0;
  // Makes the next produce() start at sample `position`; called with the thread stopped.
  virtual Status restart_at(std::int64_t position) = 0;
  const ReaderOptions& options() const { return options_; }
  // Joins the thread. Subclass destructors call it first: produce() must not run on a
  // half-destroyed object.
  void stop();

 private:
  struct Item {
    Batch batch;
    Status status;
    bool is_end = false;
  };
  void run();

  ReaderOptions options_;
  std::int64_t position_samples_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> queue_;           // produced, not yet handed out
  std::vector<Batch> free_batches_;  // buffers to reuse
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace parity::data
