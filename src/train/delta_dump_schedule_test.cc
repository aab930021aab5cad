// DeltaDumpSchedule (delta_dump_schedule.h). Expected decisions worked out by hand from
// TorchEasyRec's DeltaEmbeddingDumper (maybe_dump / _local_dump_decision / final_dump), with a
// clock the test moves.
#include "train/delta_dump_schedule.h"

#include <gtest/gtest.h>

namespace tzrec::train {
namespace delta_dump_schedule_test {

using std::chrono::minutes;
using std::chrono::seconds;

TEST(DeltaDumpSchedule, EveryNStepsFromStepOne) {
  protos::DeltaEmbeddingDumpConfig config;
  config.set_dump_interval_steps(3);
  DeltaDumpSchedule schedule(config);
  schedule.start();
  std::vector<int64_t> dumped;
  for (int64_t step = 0; step <= 10; ++step) {
    if (schedule.due_after(step)) dumped.push_back(step);
  }
  EXPECT_EQ(dumped, (std::vector<int64_t>{3, 6, 9}));
  EXPECT_TRUE(schedule.final_due(10));   // the steps after 9
  EXPECT_FALSE(schedule.final_due(10));  // once
  DeltaDumpSchedule boundary(config);
  EXPECT_FALSE(boundary.final_due(9));   // 9 was dumped after its step
  EXPECT_FALSE(boundary.final_due(0));   // nothing after step 0 counts (TorchEasyRec: global_step <= 0)
}

TEST(DeltaDumpSchedule, DefaultIntervalIs1000Steps) {
  DeltaDumpSchedule schedule{protos::DeltaEmbeddingDumpConfig()};
  EXPECT_FALSE(schedule.due_after(999));
  EXPECT_TRUE(schedule.due_after(1000));
}

TEST(DeltaDumpSchedule, EveryMMinutesOnAFixedGridSkippingMissedDeadlines) {
  protos::DeltaEmbeddingDumpConfig config;
  config.set_dump_interval_minutes(2);
  auto now = std::chrono::steady_clock::time_point() + minutes(100);
  DeltaDumpSchedule schedule(config, [&] { return now; });
  EXPECT_FALSE(schedule.due_after(0));  // not started: no deadline yet
  schedule.start();                     // deadlines at 102, 104, 106, ... minutes
  now += seconds(119);
  EXPECT_FALSE(schedule.due_after(1));
  now += seconds(1);  // 102:00
  EXPECT_TRUE(schedule.due_after(2));
  EXPECT_FALSE(schedule.due_after(3));
  now += minutes(5);  // 107:00: 104 and 106 passed, one dump; the next deadline is 108
  EXPECT_TRUE(schedule.due_after(4));
  now += seconds(59);
  EXPECT_FALSE(schedule.due_after(5));
  now += seconds(1);  // 108:00
  EXPECT_TRUE(schedule.due_after(6));
  EXPECT_FALSE(schedule.final_due(6));  // just dumped
  EXPECT_TRUE(schedule.final_due(7));
}

}  // namespace delta_dump_schedule_test
}  // namespace tzrec::train
