// ZchModule against TorchRec's own MCHManagedCollisionModule: seeded random streams run through
// TorchRec's torchrec/modules/mc_modules.py by tests/tools/zch_reference.py (the file
// tests/data/zch/mc_reference.json, see tests/data/README.md), replayed here step by step.
#include "embedding/zch_module.h"
#include "embedding/testing_tensors.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tzrec::embedding {
namespace zch_module_torchrec_test {

using testing::vec;

using Json = nlohmann::ordered_json;

Json load_reference() {
  const std::string path = std::string(TZREC_SOURCE_DIR) + "/tests/data/zch/mc_reference.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return Json::parse(in);
}

ZchEvictionKind kind_of(const std::string& name) {
  if (name == "lfu") return ZchEvictionKind::kLfu;
  if (name == "lru") return ZchEvictionKind::kLru;
  return ZchEvictionKind::kDistanceLfu;
}

TEST(ZchModuleTorchRec, ReplaysTorchRecStreams) {
  const Json ref = load_reference();
  ASSERT_GE(ref["cases"].size(), 20u);
  for (const Json& c : ref["cases"]) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(name + " " + c["threshold_filtering_func"].get<std::string>());
    ZchOptions o;
    o.zch_size = c["zch_size"].get<int64_t>();
    o.eviction_interval = c["eviction_interval"].get<int64_t>();
    o.eviction = kind_of(c["eviction"].get<std::string>());
    o.decay_exponent = c["decay_exponent"].get<double>();
    o.threshold_filtering_func = c["threshold_filtering_func"].get<std::string>();
    ZchModule m(o);
    torch::manual_seed(c["torch_seed"].get<uint64_t>());  // the probabilistic filter's draws
    int step = 0;
    for (const Json& s : c["steps"]) {
      SCOPED_TRACE("step " + std::to_string(step++));
      const auto ids = s["ids"].get<std::vector<int64_t>>();
      const torch::Tensor out =
          m.forward(torch::tensor(ids, torch::kInt64), s["training"].get<bool>());
      ASSERT_EQ(vec(out), s["remapped"].get<std::vector<int64_t>>());
      if (!s["evict_called"].get<bool>()) continue;
      const auto evicted = m.evict();
      if (s["evicted"].is_null()) {
        EXPECT_FALSE(evicted.has_value());
      } else {
        ASSERT_TRUE(evicted.has_value());
        EXPECT_EQ(vec(*evicted), s["evicted"].get<std::vector<int64_t>>());
      }
    }
    // The state dict: same names, same order, same values.
    const auto state = m.state();
    ASSERT_EQ(state.size(), c["state"].size());
    size_t i = 0;
    for (const auto& [key, value] : c["state"].items()) {
      EXPECT_EQ(state[i].first, key);
      EXPECT_EQ(vec(state[i].second), value.get<std::vector<int64_t>>()) << key;
      ++i;
    }
  }
}

}  // namespace zch_module_torchrec_test
}  // namespace tzrec::embedding
