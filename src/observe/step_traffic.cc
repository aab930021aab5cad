#include "observe/step_traffic.h"

#include <algorithm>

#include <fmt/format.h>

namespace tzrec::observe {

namespace {

std::string bytes_text(double bytes) {
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace

void StepTraffic::end(const dist::ProcessGroup& pg) {
  for (const dist::CollectiveTraffic& t : pg.traffic()) {
    dist::CollectiveTraffic& sum = total_[{t.kind, t.what}];
    sum.kind = t.kind;
    sum.what = t.what;
    sum.calls += t.calls;
    sum.bytes += t.bytes;
    sum.seconds += t.seconds;
  }
  for (const dist::CollectiveTraffic& t : before_) {
    dist::CollectiveTraffic& sum = total_[{t.kind, t.what}];
    sum.calls -= t.calls;
    sum.bytes -= t.bytes;
    sum.seconds -= t.seconds;
  }
  before_.clear();
}

std::string StepTraffic::per_step_summary(int64_t steps) const {
  std::vector<const dist::CollectiveTraffic*> used;
  for (const auto& [key, t] : total_) {
    if (t.calls > 0) used.push_back(&t);
  }
  if (used.empty() || steps <= 0) return "none";
  std::stable_sort(used.begin(), used.end(), [](const auto* a, const auto* b) { return a->bytes > b->bytes; });
  const double n = static_cast<double>(steps);
  std::string out;
  double bytes = 0, seconds = 0;
  for (const dist::CollectiveTraffic* t : used) {
    out += fmt::format("{}{} '{}' {} in {:.2f} ms", out.empty() ? "" : ", ", t->kind, t->what,
                       bytes_text(static_cast<double>(t->bytes) / n), 1e3 * t->seconds / n);
    bytes += static_cast<double>(t->bytes);
    seconds += t->seconds;
  }
  return fmt::format("{}; in all {} in {:.2f} ms", out, bytes_text(bytes / n), 1e3 * seconds / n);
}

}  // namespace tzrec::observe
