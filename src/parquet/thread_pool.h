// A small fixed thread pool for decoding (and encoding) columns in parallel.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tzrec::parquet {

class ThreadPool {
 public:
  // num_threads counts the calling thread: 1 → no worker threads, everything runs inline.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(0) .. fn(count - 1) on the workers and the calling thread; returns when all are
  // done. If tasks throw, the first exception (by task index) is rethrown. Calls from several
  // threads are serialized (one job at a time); a task must not call parallel_for itself.
  void parallel_for(int64_t count, const std::function<void(int64_t)>& fn);

 private:
  void worker_loop();
  void run_tasks();

  std::vector<std::thread> workers_;
  std::mutex job_mu_;  // one parallel_for at a time
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  // Current job.
  const std::function<void(int64_t)>* fn_ = nullptr;
  int64_t count_ = 0;
  int64_t next_ = 0;
  int64_t finished_ = 0;
  int active_workers_ = 0;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace tzrec::parquet
