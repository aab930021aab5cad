#include "parquet/thread_pool.h"

#include <exception>

namespace tzrec::parquet {

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

// Claims and runs tasks of the current job until none are left. Called with mu_ unlocked.
void ThreadPool::run_tasks() {
  for (;;) {
    int64_t i;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_ >= count_) return;
      i = next_++;
    }
    std::exception_ptr error;
    try {
      (*fn_)(i);
    } catch (...) {
      error = std::current_exception();  // rethrown by parallel_for
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (error) errors_[static_cast<size_t>(i)] = error;
      ++finished_;
      if (finished_ == count_) done_cv_.notify_all();
    }
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++active_workers_;
    }
    run_tasks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      --active_workers_;
      if (active_workers_ == 0) done_cv_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t count, const std::function<void(int64_t)>& fn) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    for (int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::lock_guard<std::mutex> job_lock(job_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    count_ = count;
    next_ = 0;
    finished_ = 0;
    errors_.assign(static_cast<size_t>(count), nullptr);
    ++generation_;
  }
  work_cv_.notify_all();
  run_tasks();
  std::vector<std::exception_ptr> errors;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Wait for all tasks and for every worker to leave run_tasks (they read fn_ / count_).
    done_cv_.wait(lock, [&] { return finished_ == count_ && active_workers_ == 0; });
    fn_ = nullptr;
    count_ = 0;
    next_ = 0;
    errors.swap(errors_);
  }
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace tzrec::parquet
