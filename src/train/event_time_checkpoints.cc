#include "train/event_time_checkpoints.h"

#include <algorithm>
#include <cmath>

namespace tzrec::train {

std::optional<double> quorum_event_time(std::vector<double> times, double quorum) {
  if (times.empty()) return std::nullopt;
  std::sort(times.begin(), times.end());
  const int64_t m = static_cast<int64_t>(times.size());
  // The epsilon keeps e.g. 0.1 * 10 from rounding up to 2 (as TorchEasyRec does).
  const int64_t k = std::max<int64_t>(
      1, std::min<int64_t>(m, static_cast<int64_t>(std::ceil(quorum * static_cast<double>(m) - 1e-9))));
  return times[static_cast<size_t>(m - k)];
}

bool crosses_save_time(double now, double last, int64_t interval_s, const std::vector<uint64_t>& targets) {
  if (interval_s > 0 &&
      std::floor(now / static_cast<double>(interval_s)) > std::floor(last / static_cast<double>(interval_s))) {
    return true;
  }
  for (uint64_t t : targets) {
    const double target = static_cast<double>(t);
    if (last < target && target <= now) return true;
  }
  return false;
}

EventTimeTrigger::EventTimeTrigger(const protos::TrainConfig& train_config)
    : interval_s_(train_config.save_checkpoints_timestamp_interval()),
      targets_(train_config.save_checkpoints_timestamps().begin(),
               train_config.save_checkpoints_timestamps().end()),
      quorum_(train_config.save_checkpoints_timestamp_quorum()) {}

bool EventTimeTrigger::observe(std::optional<double> event_time) {
  current_.reset();
  if (!enabled() || !event_time || *event_time < 0) return false;
  current_ = event_time;
  if (!last_) {
    last_ = event_time;
    return false;
  }
  return crosses_save_time(*event_time, *last_, interval_s_, targets_);
}

void EventTimeTrigger::saved() {
  if (current_) last_ = current_;
}

}  // namespace tzrec::train
