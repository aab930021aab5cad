#include "observe/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "base/logging.h"

namespace tzrec::observe {
namespace {

std::string format_eta(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
  return fmt::format("{}m{:02d}s", s / 60, s % 60);
}

}  // namespace

ProgressReporter::ProgressReporter(int64_t log_every)
    : log_every_(std::max<int64_t>(1, log_every)), tty_(::isatty(STDERR_FILENO) == 1) {
  restart_window();
}

void ProgressReporter::restart_window() {
  window_start_ = std::chrono::steady_clock::now();
  last_draw_ = window_start_;
  window_samples_ = 0;
}

std::string ProgressReporter::format_line(const ProgressSnapshot& snapshot, double samples_per_sec) {
  std::string line = fmt::format("Train epoch-{} step-{}", snapshot.epoch, snapshot.step);
  for (const auto& [name, value] : snapshot.learning_rates) line += fmt::format(" {}:{:g}", name, value);
  for (const auto& [name, value] : snapshot.losses) line += fmt::format(" {}:{:.5f}", name, value);
  if (samples_per_sec > 0) line += fmt::format(" samples/s:{:.0f}", samples_per_sec);
  if (snapshot.data_wait_fraction >= 0) {
    line += fmt::format(" data_wait:{:.1f}%", 100.0 * snapshot.data_wait_fraction);
  }
  return line;
}

void ProgressReporter::on_step(const ProgressSnapshot& snapshot, int64_t samples) {
  window_samples_ += samples;
  const auto now = std::chrono::steady_clock::now();
  const double window = std::chrono::duration<double>(now - window_start_).count();
  if (window > 0) samples_per_sec_ = window_samples_ / window;
  if (!tty_) {
    if (snapshot.step % log_every_ == 0) {
      log::info("{}", format_line(snapshot, samples_per_sec_));
      restart_window();
    }
    return;
  }
  // Terminal: redraw at most ~10 times per second, and print a permanent line every log_every.
  const bool permanent = snapshot.step % log_every_ == 0;
  if (!permanent && std::chrono::duration<double>(now - last_draw_).count() < 0.1) return;
  last_draw_ = now;
  std::string bar;
  if (snapshot.total_steps > 0) {
    const double done = static_cast<double>(snapshot.step + 1) / snapshot.total_steps;
    const int width = 20;
    const int filled = static_cast<int>(done * width);
    bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
    const double steps_per_sec = samples > 0 && samples_per_sec_ > 0 ? samples_per_sec_ / samples : 0;
    if (steps_per_sec > 0) {
      bar += fmt::format("{}/{} ETA {} ", snapshot.step + 1, snapshot.total_steps,
                         format_eta((snapshot.total_steps - snapshot.step - 1) / steps_per_sec));
    }
  }
  std::fprintf(stderr, "\r\033[K%s%s", bar.c_str(), format_line(snapshot, samples_per_sec_).c_str());
  bar_open_ = true;
  if (permanent) {
    std::fputc('\n', stderr);
    bar_open_ = false;
    restart_window();
  }
  std::fflush(stderr);
}

void ProgressReporter::interrupt() {
  if (bar_open_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
    bar_open_ = false;
  }
}

}  // namespace tzrec::observe
