#include "observe/step_traffic.h"

#include <gtest/gtest.h>

#include "dist/testing_multiprocess.h"

namespace tzrec::observe {
namespace step_traffic_test {

// Two ranks: two steps with one 1 KiB all_reduce and one 256-byte broadcast from rank 0 each; a
// collective between the steps (a checkpoint's, say) is not counted.
TEST(StepTraffic, SumsTheCollectivesOfTheStepsOnly) {
  auto statuses = dist::testing::run_ranks(2, [](dist::ProcessGroup& pg) {
    StepTraffic traffic;
    EXPECT_EQ(traffic.per_step_summary(0), "none");
    for (int step = 0; step < 2; ++step) {
      traffic.begin(pg);
      torch::Tensor grads = torch::ones({256});
      pg.all_reduce(grads, dist::ReduceOp::kSum, "dense gradients");
      torch::Tensor flag = torch::ones({64});
      pg.broadcast(flag, 0, "flag");
      traffic.end(pg);
      torch::Tensor outside = torch::ones({4096});
      pg.all_reduce(outside, dist::ReduceOp::kSum, "checkpoint");
    }
    const std::string summary = traffic.per_step_summary(2);
    EXPECT_EQ(summary.rfind("all_reduce 'dense gradients' 1.0 KiB in ", 0), 0u) << summary;
    if (pg.rank() == 0) {
      EXPECT_NE(summary.find(", broadcast 'flag' 256 B in "), std::string::npos) << summary;
      EXPECT_NE(summary.find("; in all 1.2 KiB in "), std::string::npos) << summary;
    } else {
      EXPECT_NE(summary.find(", broadcast 'flag' 0 B in "), std::string::npos) << summary;  // receives only
    }
    EXPECT_EQ(summary.find("checkpoint"), std::string::npos) << summary;
  });
  dist::testing::expect_all_succeeded(statuses);
}

}  // namespace step_traffic_test
}  // namespace tzrec::observe
