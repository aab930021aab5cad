#include "train/delta_dump_schedule.h"

namespace tzrec::train {

DeltaDumpSchedule::DeltaDumpSchedule(const protos::DeltaEmbeddingDumpConfig& config, Clock clock)
    : clock_(std::move(clock)) {
  if (config.has_dump_interval_minutes()) {
    interval_ = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::minutes(config.dump_interval_minutes()));
  } else {
    steps_ = config.dump_interval_steps();
  }
}

void DeltaDumpSchedule::start() {
  if (!steps_) next_ = clock_() + interval_;
}

bool DeltaDumpSchedule::due_after(int64_t step) {
  if (steps_) {
    if (step <= 0 || step % *steps_ != 0) return false;
  } else {
    if (!next_) return false;
    const auto now = clock_();
    if (now < *next_) return false;
    while (*next_ <= now) *next_ += interval_;
  }
  last_dump_step_ = step;
  return true;
}

bool DeltaDumpSchedule::final_due(int64_t step) {
  if (step <= 0) return false;
  if (steps_ && step % *steps_ == 0) return false;  // due_after dumped it
  if (last_dump_step_ && *last_dump_step_ == step) return false;
  last_dump_step_ = step;
  return true;
}

}  // namespace tzrec::train
