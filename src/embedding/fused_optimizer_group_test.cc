// FusedOptimizerGroup: one optimizer state over several fused operators, keys told apart by the
// members' prefixes and, within a prefix, by table.
#include "embedding/fused_optimizer_group.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace fused_optimizer_group_test {

std::unique_ptr<FusedEmbeddingBags> adagrad(const std::vector<std::string>& tables) {
  std::vector<FusedTableSpec> specs;
  std::vector<FusedFeatureSpec> features;
  for (const std::string& t : tables) {
    specs.push_back(FusedTableSpec{t, torch::zeros({4, 2}), true});
    features.push_back(FusedFeatureSpec{t + "_f", t, "sum"});
  }
  FusedOptimizerOptions options;
  options.kind = FusedOptimizerKind::kAdagrad;
  return std::make_unique<FusedEmbeddingBags>(specs, features, options);
}

TEST(FusedOptimizerGroup, StateKeysByPrefixAndTable) {
  // The pooled collection has table "a"; two sequence collections (one per dim) have "a" and "b".
  auto pooled = adagrad({"a"});
  auto seq2 = adagrad({"a"});
  auto seq4 = adagrad({"b"});
  FusedOptimizerGroup group({pooled.get(), seq2.get(), seq4.get()}, {"", "sequence.", "sequence."});
  auto state = group.state_dict();
  std::vector<std::string> keys;
  for (const auto& [k, v] : state) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"a.momentum1", "sequence.a.momentum1", "sequence.b.momentum1"}));
  // Loading routes each key to its member: distinct values come back where they were.
  state["a.momentum1"] = torch::full({4, 2}, 1.0f);
  state["sequence.a.momentum1"] = torch::full({4, 2}, 2.0f);
  state["sequence.b.momentum1"] = torch::full({4, 2}, 3.0f);
  group.load_state_dict(state);
  EXPECT_EQ(pooled->state_dict().at("a.momentum1")[0][0].item<float>(), 1.0f);
  EXPECT_EQ(seq2->state_dict().at("a.momentum1")[0][0].item<float>(), 2.0f);
  EXPECT_EQ(seq4->state_dict().at("b.momentum1")[0][0].item<float>(), 3.0f);
  group.set_lr(0.5);
  EXPECT_EQ(seq4->lr(), 0.5);
  // A key of no table is reported by the member its prefix points to.
  state["sequence.c.momentum1"] = torch::zeros({4, 2});
  EXPECT_THROW(group.load_state_dict(state), CheckpointError);
}

}  // namespace fused_optimizer_group_test
}  // namespace tzrec::embedding
