// Checkpoints by consumed event time (train_config.save_checkpoints_timestamp_interval,
// save_checkpoints_timestamps, save_checkpoints_timestamp_quorum), as TorchEasyRec's
// CheckpointManager decides them (tzrec/utils/checkpoint_util.py; docs/tzrec-compatibility.md
// §8.x): each rank's event time is the latest message timestamp of its current batch (streams
// only; -1 when unknown), the ranks' times are reconciled to the time a quorum of them reached,
// and a checkpoint is saved when that time crosses a Unix-epoch-aligned interval boundary or an
// absolute target since the last save. The first time seen only sets the reference. The time at
// each save (the watermark) is stored in the checkpoint and restored with it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tzrec/protos/train.pb.h"

namespace tzrec::train {

// The largest T that at least ceil(quorum * m) of the m values reach (quorum 1: the minimum, near
// 0: the maximum); -1 entries (no timestamp) count as not reached. nullopt for no values.
std::optional<double> quorum_event_time(std::vector<double> times, double quorum);

// Whether event time `now` crossed an interval boundary (floor(t / interval_s) grew; interval 0
// disables) or a target in (last, now] since `last`.
bool crosses_save_time(double now, double last, int64_t interval_s, const std::vector<uint64_t>& targets);

class EventTimeTrigger {
 public:
  explicit EventTimeTrigger(const protos::TrainConfig& train_config);

  bool enabled() const { return interval_s_ > 0 || !targets_.empty(); }
  double quorum() const { return quorum_; }

  // Feeds the reconciled event time of a step (nullopt or negative: none); returns whether a
  // checkpoint is due. The first time only sets the reference.
  bool observe(std::optional<double> event_time);
  // The reconciled time of the last observe() (nullopt when it had none).
  std::optional<double> current() const { return current_; }
  // After a save: the watermark becomes the current time (when there is one).
  void saved();
  // The watermark of a restored checkpoint (nullopt: none saved; the next time sets it).
  void restore(std::optional<double> watermark) { last_ = watermark; }

 private:
  int64_t interval_s_ = 0;
  std::vector<uint64_t> targets_;
  double quorum_ = 0.5;
  std::optional<double> last_;
  std::optional<double> current_;
};

}  // namespace tzrec::train
