// Training progress output: a live one-line bar on a terminal, plain log lines otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace tzrec::observe {

struct ProgressSnapshot {
  int64_t step = 0;          // index of the step just trained
  int64_t epoch = 0;
  int64_t total_steps = -1;  // num_steps, or -1 when training by epochs
  std::map<std::string, double> learning_rates;  // "lr_g0" → value
  std::map<std::string, double> losses;          // loss name → value, plus "total_loss"
  // Fraction of the time since the last log line spent waiting for input batches; < 0: unknown.
  double data_wait_fraction = -1;
};

class ProgressReporter {
 public:
  // log_every: log_step_count_steps. The bar is used when stderr is a terminal.
  explicit ProgressReporter(int64_t log_every);

  // Called after every step with the number of samples it trained on.
  void on_step(const ProgressSnapshot& snapshot, int64_t samples);
  // Ends a live bar line before other output (checkpoint / eval messages).
  void interrupt();
  // Restarts the throughput window (after evaluations, which are not training time).
  void restart_window();

  // "Train epoch-0 step-10 lr_g0:0.01 binary_cross_entropy:0.45000 total_loss:0.45000 samples/s:1234
  // data_wait:2.5%"
  static std::string format_line(const ProgressSnapshot& snapshot, double samples_per_sec);

 private:
  int64_t log_every_;
  bool tty_;
  bool bar_open_ = false;
  std::chrono::steady_clock::time_point window_start_;
  std::chrono::steady_clock::time_point last_draw_;
  int64_t window_samples_ = 0;
  double samples_per_sec_ = 0;
};

}  // namespace tzrec::observe
