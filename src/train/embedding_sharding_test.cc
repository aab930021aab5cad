// The memory rule of a single-process job (check_tables_fit_one_process): the planner's rule for
// one rank (dist/planner.h, world_size 1), applied to the tables of a model built without them.
// Sizes are set relative to this machine's MemTotal (/proc/meminfo, what the planner reads) with
// margins that hold for any STORAGE_RESERVE_PERCENT, or far beyond any machine (10^12 rows).
#include "train/embedding_sharding.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/testing_pipelines.h"
#include "embedding/sharded_lookup.h"
#include "feature/features.h"
#include "models/model.h"
#include "train/optimizer_builder.h"

namespace tzrec::train {
namespace embedding_sharding_test {

// MemTotal of /proc/meminfo in bytes (read independently of dist/planner_cost.cc).
int64_t mem_total_bytes() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char key[64];
  long long kib = 0;
  int64_t out = 0;
  while (std::fscanf(f, "%63s %lld kB", key, &kib) == 2) {
    if (std::strcmp(key, "MemTotal:") == 0) out = static_cast<int64_t>(kib) * 1024;
  }
  std::fclose(f);
  return out;
}

// One sparse feature "c0" of `rows` rows and dim 16 (64 bytes per fp32 row) in a multi_tower model.
protos::EasyRecConfig config_with(int64_t rows, const std::string& sparse_optimizer) {
  return config::parse_pipeline_config_text(
      std::string(config::testing::kTrainAndData) + "train_config { sparse_optimizer { " + sparse_optimizer +
          " {} } }\n" + "feature_configs { raw_feature { feature_name: \"d0\" } }\n" +
          "feature_configs { id_feature { feature_name: \"c0\" hash_bucket_size: " + std::to_string(rows) +
          " embedding_dim: 16 } }\n" + R"(
model_config {
  feature_groups { group_name: "all" feature_names: ["d0", "c0"] }
  multi_tower { towers { input: "all" mlp { hidden_units: [4] } } final { hidden_units: [2] } }
  losses { binary_cross_entropy {} }
}
)",
      "memory.config");
}

// The error of the rule for `config` with its sparse optimizer (none: evaluation), or "(no error)".
std::string rule_error(const protos::EasyRecConfig& config, bool with_optimizer) {
  std::shared_ptr<models::Model> model;
  {
    embedding::DeferTableAllocation defer;
    model = models::create_model(config, feature::build_feature_infos(config));
  }
  const auto optimizer = with_optimizer ? sparse_optimizer_options(config.train_config().sparse_optimizer())
                                        : embedding::FusedOptimizerOptions{};
  try {
    check_tables_fit_one_process(config, model->embeddings(), optimizer);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TablesFitOneProcess, SmallTablesPass) {
  EXPECT_EQ(rule_error(config_with(1000, "adagrad_optimizer"), true), "(no error)");
}

TEST(TablesFitOneProcess, ATableBeyondAnyMachineIsNamedWithItsBytes) {
  // 10^12 rows x 16 x 4 bytes = 6.4e13 bytes of weights; rowwise_adagrad keeps 4 bytes per row.
  const std::string msg = rule_error(config_with(1000000000000LL, "rowwise_adagrad_optimizer"), true);
  for (const char* part :
       {"embedding table 'c0_emb' needs 68000000000000 bytes", "weights 64000000000000 + optimizer state 4000000000000",
        "rank 0 has only", "add ranks (`tzrec launch --nproc-per-node N`", "hash_bucket_size"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in: " << msg;
  }
}

TEST(TablesFitOneProcess, OptimizerStateCountsInTrainingOnly) {
  const int64_t mem = mem_total_bytes();
  ASSERT_GT(mem, 0);
  // Weights of half the machine's memory fit (the reserve is below 50% unless set so); adagrad's
  // per-element state (4 x dim bytes per row, dist/planner.h) doubles them to all of it, which
  // never fits.
  const auto config = config_with(mem / 2 / 64, "adagrad_optimizer");
  EXPECT_EQ(rule_error(config, /*with_optimizer=*/false), "(no error)");  // eval, predict, export
  const std::string msg = rule_error(config, /*with_optimizer=*/true);
  EXPECT_NE(msg.find("embedding table 'c0_emb' needs"), std::string::npos) << msg;
  // sgd keeps no state: training fits as evaluation does.
  EXPECT_EQ(rule_error(config_with(mem / 2 / 64, "sgd_optimizer"), true), "(no error)");
}

TEST(TablesFitOneProcess, ShardingConstraintsDoNotMatterOnOneProcess) {
  // planner_table_sizes ignores embedding_constraints (one process holds every table whole).
  auto config = config_with(1000, "sgd_optimizer");
  config.mutable_train_config()->mutable_global_embedding_constraints()->add_sharding_types("grid_shard");
  EXPECT_EQ(rule_error(config, true), "(no error)");
}

}  // namespace embedding_sharding_test
}  // namespace tzrec::train
