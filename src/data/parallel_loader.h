// Multi-worker loader: one thread per BatchSource reads a batch, runs `transform` on it (e.g.
// feature parsing) and puts the result into its own bounded prefetch queue; the consumer takes
// results round-robin over workers, skipping exhausted ones, so the output order depends only on
// the sources and the number of workers (not on thread timing). No torch.
//
// Errors: an exception thrown by a source or the transform on a worker thread is delivered by
// next() (rethrown with its original type) at the point where that worker's next result would
// have been; the loader then stays failed and rethrows it on every later call.
// Destruction stops and joins all threads, also mid-stream (blocked workers are woken).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "data/batch_source.h"
#include "data/read_position.h"

namespace tzrec::data {

template <typename T>
class ParallelLoader {
 public:
  // The batch is the worker's own and is dropped afterwards: the transform may add to it (the
  // FG_DAG columns of feature::FeatureParser::parse_in_place).
  using Transform = std::function<T(RecordBatch&)>;
  struct Item {
    T value;
    ReadPosition position;         // position after this item
    double data_timestamp = -1.0;  // SourcedBatch::data_timestamp
  };

  // sources[w] is worker w; `start` is the position the sources were built from (its
  // next_worker is where the round-robin begins). queue_depth >= 1 results are prefetched per
  // worker.
  ParallelLoader(std::vector<std::unique_ptr<BatchSource>> sources, Transform transform,
                 ReadPosition start, int queue_depth = 2)
      : transform_(std::move(transform)), position_(std::move(start)) {
    const size_t n = sources.size();
    exhausted_.assign(n, false);
    for (size_t w = 0; w < n; ++w) {
      workers_.push_back(std::make_unique<Worker>());
      workers_.back()->capacity = static_cast<size_t>(queue_depth < 1 ? 1 : queue_depth);
      workers_.back()->source = std::move(sources[w]);
    }
    next_worker_ = n == 0 ? 0 : static_cast<size_t>(position_.next_worker) % n;
    for (size_t w = 0; w < n; ++w) {
      workers_[w]->thread = std::thread([this, w] { run(*workers_[w]); });
    }
  }

  ~ParallelLoader() {
    for (auto& w : workers_) {
      std::lock_guard<std::mutex> lock(w->mu);
      w->stop = true;
      w->cv.notify_all();
    }
    for (auto& w : workers_) w->source->cancel();
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
  }

  ParallelLoader(const ParallelLoader&) = delete;
  ParallelLoader& operator=(const ParallelLoader&) = delete;

  // The next result in round-robin order, or nullopt when every worker is exhausted.
  std::optional<Item> next() {
    if (error_) std::rethrow_exception(error_);
    const size_t n = workers_.size();
    while (!all_exhausted()) {
      const size_t w = next_worker_;
      next_worker_ = (w + 1) % n;
      if (exhausted_[w]) continue;
      Worker& worker = *workers_[w];
      std::unique_lock<std::mutex> lock(worker.mu);
      worker.cv.wait(lock, [&] { return !worker.queue.empty() || worker.finished; });
      if (worker.queue.empty()) {
        if (worker.error) {
          error_ = worker.error;
          std::rethrow_exception(error_);
        }
        exhausted_[w] = true;
        continue;
      }
      Produced p = std::move(worker.queue.front());
      worker.queue.pop_front();
      worker.cv.notify_all();
      lock.unlock();
      position_.advance(static_cast<int>(w), p.file_rows, p.stream_marks);
      position_.set_window(static_cast<int>(w), p.window_delivered);
      position_.next_worker = static_cast<int32_t>(next_worker_);
      return Item{std::move(p.value), position_, p.data_timestamp};
    }
    position_.next_worker = static_cast<int32_t>(next_worker_);
    return std::nullopt;
  }

  int num_workers() const { return static_cast<int>(workers_.size()); }

 private:
  struct Produced {
    T value;
    std::vector<std::pair<int32_t, int64_t>> file_rows;
    std::vector<PartitionPosition> stream_marks;
    double data_timestamp;
    int64_t window_delivered;
  };
  struct Worker {
    std::unique_ptr<BatchSource> source;
    std::mutex mu;
    std::condition_variable cv;  // signals both "item available" and "space available"
    std::deque<Produced> queue;
    size_t capacity = 2;
    bool finished = false;  // no more items will be pushed (end or error)
    bool stop = false;      // consumer is shutting down
    std::exception_ptr error;
    std::thread thread;
  };

  bool all_exhausted() const {
    for (bool e : exhausted_) {
      if (!e) return false;
    }
    return true;
  }

  void run(Worker& worker) {
    try {
      while (true) {
        {
          std::lock_guard<std::mutex> lock(worker.mu);
          if (worker.stop) break;
        }
        std::optional<SourcedBatch> batch = worker.source->next();
        if (!batch) break;
        Produced p{transform_(batch->records), batch->completes ? std::move(*batch->completes) : rows_per_file(*batch),
                   std::move(batch->stream_marks), batch->data_timestamp, batch->window_delivered};
        std::unique_lock<std::mutex> lock(worker.mu);
        worker.cv.wait(lock, [&] { return worker.stop || worker.queue.size() < worker.capacity; });
        if (worker.stop) break;
        worker.queue.push_back(std::move(p));
        worker.cv.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(worker.mu);
      worker.error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(worker.mu);
    worker.finished = true;
    worker.cv.notify_all();
  }

  Transform transform_;
  ReadPosition position_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<bool> exhausted_;
  size_t next_worker_ = 0;
  std::exception_ptr error_;
};

}  // namespace tzrec::data
