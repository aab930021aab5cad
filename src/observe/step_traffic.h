// The collectives of a distributed run's training steps (checkpoints and evaluations excluded):
// the process group's counters taken around each step and summed, for the training log.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dist/process_group.h"

namespace tzrec::observe {

class StepTraffic {
 public:
  // Around one training step: begin() takes the counters, end() adds what changed since.
  void begin(const dist::ProcessGroup& pg) { before_ = pg.traffic(); }
  void end(const dist::ProcessGroup& pg);

  // Per step over `steps` steps, largest byte counts first, e.g.
  // "all_reduce 'dense gradients' 1538.3 KiB in 2.10 ms, ...; in all 7.0 MiB in 12.30 ms";
  // "none" without collectives.
  std::string per_step_summary(int64_t steps) const;

 private:
  std::vector<dist::CollectiveTraffic> before_;
  std::map<std::pair<std::string, std::string>, dist::CollectiveTraffic> total_;  // (kind, what) →
};

}  // namespace tzrec::observe
