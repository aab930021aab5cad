// Event-time checkpoint decisions. Expected values: TorchEasyRec's own cases for
// should_save_on_timestamp, quorum_event_time and CheckpointManager.maybe_save
// (tzrec/utils/checkpoint_util_test.py), re-derived by hand in the comments.
#include "train/event_time_checkpoints.h"

#include <gtest/gtest.h>

namespace tzrec::train {
namespace event_time_checkpoints_test {

TEST(EventTimeCheckpoints, CrossesIntervalBoundariesAndTargets) {
  EXPECT_TRUE(crosses_save_time(3600, 3599, 3600, {}));    // floor 1 > floor 0
  EXPECT_FALSE(crosses_save_time(3500, 3000, 3600, {}));   // both in bucket 0
  EXPECT_FALSE(crosses_save_time(10000, 0, 0, {}));        // interval disabled
  EXPECT_TRUE(crosses_save_time(1500, 1000, 0, {1500}));   // a target is inclusive on the right
  EXPECT_TRUE(crosses_save_time(1600, 1000, 0, {1500}));
  EXPECT_FALSE(crosses_save_time(1400, 1000, 0, {1500}));  // not reached
  EXPECT_FALSE(crosses_save_time(2000, 1500, 0, {1500}));  // no second firing
  EXPECT_TRUE(crosses_save_time(1600, 1000, 0, {900, 1500, 5000}));
  EXPECT_TRUE(crosses_save_time(1600, 1000, 3600, {1500}));  // same bucket, target crossed
}

TEST(EventTimeCheckpoints, QuorumTimeIsAnUpperQuantile) {
  EXPECT_EQ(quorum_event_time({}, 0.5), std::nullopt);
  EXPECT_EQ(quorum_event_time({42}, 0.5), 42.0);
  EXPECT_EQ(quorum_event_time({5, 5, 5}, 0.5), 5.0);
  EXPECT_EQ(quorum_event_time({10, 20, 30, 40}, 1.0), 10.0);   // all ranks: the minimum
  EXPECT_EQ(quorum_event_time({10, 20, 30, 40}, 0.01), 40.0);  // any rank: the maximum
  EXPECT_EQ(quorum_event_time({10, 20, 30, 40}, 0.5), 30.0);   // k = 2: second largest
  EXPECT_EQ(quorum_event_time({10, 30, 20}, 0.5), 20.0);       // k = ceil(1.5) = 2: median
  EXPECT_EQ(quorum_event_time({100, 101, 1e18}, 0.5), 101.0);  // one outlier does not move it
  EXPECT_EQ(quorum_event_time({100, 101, -1}, 0.5), 100.0);    // 2 of 3 have a time
  EXPECT_EQ(quorum_event_time({100, -1, -1}, 0.5), -1.0);      // 1 of 3: quorum not met
  // 0.1 * 10 is 1.0000000000000002 in doubles: still k = 1 (the largest).
  EXPECT_EQ(quorum_event_time({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.1), 10.0);
}

protos::TrainConfig interval_config(uint32_t interval_s) {
  protos::TrainConfig c;
  c.set_save_checkpoints_timestamp_interval(interval_s);
  return c;
}

TEST(EventTimeCheckpoints, FirstTimeOnlySetsTheReference) {
  EventTimeTrigger t(interval_config(3600));
  EXPECT_TRUE(t.enabled());
  EXPECT_FALSE(t.observe(3599.0));  // reference
  EXPECT_TRUE(t.observe(3600.0));   // boundary crossed
  t.saved();
  EXPECT_FALSE(t.observe(3700.0));  // same bucket as the watermark 3600
  EXPECT_TRUE(t.observe(7200.0));
}

TEST(EventTimeCheckpoints, StepsWithoutTimeNeitherSetNorFire) {
  EventTimeTrigger t(interval_config(3600));
  EXPECT_FALSE(t.observe(-1.0));
  EXPECT_FALSE(t.observe(std::nullopt));
  EXPECT_EQ(t.current(), std::nullopt);
  EXPECT_FALSE(t.observe(3599.0));  // a real time sets the reference now
  EXPECT_EQ(t.current(), 3599.0);
  EXPECT_TRUE(t.observe(3600.0));
}

TEST(EventTimeCheckpoints, RestoredWatermarkIsTheReference) {
  EventTimeTrigger t(interval_config(3600));
  t.restore(3599.0);
  EXPECT_TRUE(t.observe(3600.0));  // no new reference step after a restore
  EventTimeTrigger off(protos::TrainConfig{});
  EXPECT_FALSE(off.enabled());
  EXPECT_FALSE(off.observe(1717000000.0));
}

}  // namespace event_time_checkpoints_test
}  // namespace tzrec::train
