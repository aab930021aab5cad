#include "datagen/interaction_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace tzrec::datagen {
namespace interaction_model_test {

const std::vector<uint64_t> kActions = {1, 2, 4, 64};

TEST(InteractionModel, ActionRatesFollowTheTargets) {
  const InteractionModel model(2000, kActions, 5);
  Rng rng(99);
  std::vector<double> taken(kActions.size(), 0.0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const UserProfile u = model.user(rng.uniform_int(0, 999), rng.normal());
    const int64_t item = model.draw_item(u, kHistoryInterest, rng);
    Interaction e;
    model.respond(u, item, model.taste_affinity(u, item), rng, &e);
    EXPECT_EQ(e.item, item);
    for (size_t k = 0; k < kActions.size(); ++k) taken[k] += (e.action & kActions[k]) != 0 ? 1.0 : 0.0;
    ASSERT_EQ(e.action & ~uint64_t{1 + 2 + 4 + 64}, 0u);
    ASSERT_GE(e.watch_time, 0);
  }
  const std::vector<double> targets = {0.35, 0.21, 0.126, 0.076};
  for (size_t k = 0; k < kActions.size(); ++k) EXPECT_NEAR(taken[k] / n, targets[k], 0.03) << "action " << kActions[k];
}

TEST(InteractionModel, UsersSeeTheirInterestsAndRespondToAffinity) {
  const InteractionModel model(2000, kActions, 5);
  Rng rng(7);
  const UserProfile u = model.user(42, 0.0);
  ASSERT_FALSE(u.topics.empty());
  int in_interest = 0;
  for (int i = 0; i < 2000; ++i) {
    const int64_t item = model.draw_item(u, kHistoryInterest, rng);
    ASSERT_TRUE(item >= 0 && item < model.num_items());
    in_interest += std::count(u.topics.begin(), u.topics.end(), model.topic(item)) > 0 ? 1 : 0;
  }
  EXPECT_GT(in_interest, 1500);  // 0.8 from the interests, plus popular items of those topics
  // The same item at a high and a low affinity.
  int high = 0;
  int low = 0;
  for (int i = 0; i < 4000; ++i) {
    Interaction e;
    model.respond(u, 3, 1.5, rng, &e);
    high += (e.action & 1) != 0;
    model.respond(u, 3, -1.5, rng, &e);
    low += (e.action & 1) != 0;
  }
  EXPECT_GT(high, 2 * low);
  // Users are a pure function of the seed and index.
  EXPECT_EQ(model.user(42, 0.0).topics, u.topics);
  EXPECT_EQ(InteractionModel(2000, kActions, 5).vector(17), model.vector(17));
}

TEST(InteractionModel, RecentAffinityIsHighestForItemsLikeTheRecentEvents) {
  const InteractionModel model(2000, kActions, 5);
  // A history of one topic's items: another item of that topic scores above items of other topics.
  std::vector<Interaction> history;
  int64_t same = -1;
  int64_t other = -1;
  for (int64_t i = 0; i < model.num_items(); ++i) {
    if (model.topic(i) == model.topic(0)) {
      if (history.size() < 10) {
        history.push_back(Interaction{i, 1, 10, 0});
      } else if (same < 0) {
        same = i;
      }
    } else if (other < 0) {
      other = i;
    }
  }
  ASSERT_GE(same, 0);
  ASSERT_GE(other, 0);
  EXPECT_GT(model.recent_affinity(history, same), model.recent_affinity(history, other) + 1.0);
}

TEST(InteractionModel, Times) {
  Rng rng(3);
  for (int i = 0; i < 1000; ++i) {
    const int64_t end = InteractionModel::end_time(rng);
    ASSERT_TRUE(end >= 1649376000 && end <= 1651968000);
    const int64_t gap = InteractionModel::gap_after(30, rng);
    ASSERT_GE(gap, 31);
    ASSERT_LE(gap, 7 * 86400);
  }
}

}  // namespace interaction_model_test
}  // namespace tzrec::datagen
