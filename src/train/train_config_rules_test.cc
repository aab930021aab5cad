// The train_config rules, as building the training session raises them (what check_config and
// train_eval both build: TrainingSession::check_construction; tests/e2e/config_contract_test.sh
// compares the two commands). Each rule is written once, where its object is built: optimizers
// (train/optimizer_builder.cc), schedules (optim/lr_scheduler.cc), part optimizers
// (train/training_session.cc), EMA (optim/dense_ema.cc), the FP16 scaler (optim/grad_scaler.cc),
// mixed precision (models/mixed_precision.cc), clipping (train/lr_scheduler_builder.cc).
#include <gtest/gtest.h>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "config/testing_pipelines.h"
#include "train/training_session.h"

namespace tzrec::train {
namespace train_config_rules_test {

const std::string kBase = std::string(config::testing::kTrainAndData) + R"(
feature_configs { raw_feature { feature_name: "d0" } }
feature_configs { id_feature { feature_name: "c0" num_buckets: 10 embedding_dim: 4 } }
model_config {
  feature_groups { group_name: "all" feature_names: ["d0", "c0"] }
  multi_tower { towers { input: "all" mlp { hidden_units: [4] } } final { hidden_units: [2] } }
  losses { binary_cross_entropy {} }
}
)";

protos::EasyRecConfig base(const std::string& extra = "") {
  return config::parse_pipeline_config_text(kBase + extra, "rules.config");
}

// The error check_config reports for `config` (validation, then construction), "(no error)" if none.
std::string check_error(const protos::EasyRecConfig& config) {
  try {
    config::check_valid(config);
    TrainingSession::check_construction(config);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

::testing::AssertionResult Fails(const protos::EasyRecConfig& config, const std::string& message_part) {
  const std::string error = check_error(config);
  if (error.find(message_part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected '" << message_part << "'; got: " << error;
}

::testing::AssertionResult Builds(const protos::EasyRecConfig& config) {
  const std::string error = check_error(config);
  if (error == "(no error)") return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << error;
}

TEST(TrainConfigRules, Optimizers) {
  EXPECT_TRUE(Builds(base()));
  for (const char* sparse : {"rowwise_adagrad_optimizer", "lamb_optimizer", "adam_optimizer", "adagrad_optimizer",
                             "adadelta_optimizer", "rmsprop_optimizer"}) {
    EXPECT_TRUE(Builds(base(std::string("train_config { sparse_optimizer { ") + sparse + " {} } }"))) << sparse;
  }
  for (const char* dense : {"rmsprop_optimizer", "adadelta_optimizer", "adamw_optimizer", "sgd_optimizer",
                            "adagrad_optimizer"}) {
    EXPECT_TRUE(Builds(base(std::string("train_config { dense_optimizer { ") + dense + " {} } }"))) << dense;
  }
  auto no_sparse = base();
  no_sparse.mutable_train_config()->clear_sparse_optimizer();
  EXPECT_TRUE(Fails(no_sparse, "train_config.sparse_optimizer: no optimizer is set; add one of sgd_optimizer"));
  auto no_dense = base();
  no_dense.mutable_train_config()->mutable_dense_optimizer()->clear_adam_optimizer();
  EXPECT_TRUE(Fails(no_dense, "train_config.dense_optimizer: no optimizer is set; add one of sgd_optimizer"));
  EXPECT_TRUE(Fails(base("train_config { dense_optimizer { sgd_optimizer { lr: -1 } } }"),
                    "train_config.dense_optimizer: invalid learning rate -1 (must be >= 0)"));
  EXPECT_TRUE(Fails(base("train_config { sparse_optimizer { sgd_optimizer { lr: -1 } } }"),
                    "train_config.sparse_optimizer.constant_learning_rate: the optimizer's lr"));
}

TEST(TrainConfigRules, LearningRates) {
  EXPECT_TRUE(Builds(base("train_config { sparse_optimizer { exponential_decay_learning_rate { decay_size: 10 } } }")));
  EXPECT_TRUE(Builds(base("train_config { dense_optimizer { cosine_annealing_learning_rate { T_max: 5 } } }")));
  EXPECT_TRUE(Builds(base("train_config { dense_optimizer { manual_step_learning_rate { schedule_sizes: [1] "
                          "learning_rates: [0.1] } } }")));
  EXPECT_TRUE(
      Builds(base("train_config { sparse_optimizer { cosine_annealing_warm_restarts_learning_rate { T_0: 3 } } }")));
  auto missing = base();
  missing.mutable_train_config()->mutable_dense_optimizer()->clear_constant_learning_rate();
  EXPECT_TRUE(Fails(missing, "train_config.dense_optimizer: needs a learning_rate, e.g. constant_learning_rate {}"));
}

TEST(TrainConfigRules, PartOptimizers) {
  EXPECT_TRUE(Builds(base("train_config { dense_optimizer { part_optimizers { regex_pattern: 'model\\\\.towers.*' "
                          "rmsprop_optimizer {} } } }")));
  EXPECT_TRUE(Builds(base("train_config { dense_optimizer { part_optimizers { regex_pattern: '.*bias' "
                          "sgd_optimizer { lr: 0.1 } constant_learning_rate {} } } }")));
  EXPECT_TRUE(Fails(base("train_config { dense_optimizer { part_optimizers { regex_pattern: '.*bias' } } }"),
                    "train_config.dense_optimizer.part_optimizers[0]: no optimizer is set"));
  EXPECT_TRUE(Fails(base("train_config { dense_optimizer { part_optimizers { regex_pattern: 'x' adam_optimizer {} } "
                         "part_optimizers { regex_pattern: '(unclosed' adam_optimizer {} } } }"),
                    "train_config.dense_optimizer.part_optimizers[1].regex_pattern: '(unclosed' is not a valid "
                    "regular expression"));
  EXPECT_TRUE(Fails(base("train_config { dense_optimizer { part_optimizers { adam_optimizer {} } } }"),
                    "train_config.dense_optimizer.part_optimizers[0].regex_pattern: required"));
}

TEST(TrainConfigRules, EmaScalerPrecisionClipping) {
  EXPECT_TRUE(Builds(base("train_config { dense_optimizer { ema {} } }")));
  EXPECT_TRUE(Builds(base("train_config { dense_optimizer { ema { decay: 0.9 } } }")));
  EXPECT_TRUE(Fails(base("train_config { dense_optimizer { ema { decay: 1.5 } } }"),
                    "train_config.dense_optimizer.ema.decay: 1.5 is not in [0, 1]"));
  EXPECT_TRUE(Builds(base("train_config { mixed_precision: 'FP16' }")));
  EXPECT_TRUE(Builds(base("train_config { mixed_precision: 'FP16' grad_scaler { init_scale: 1024 } }")));
  EXPECT_TRUE(Fails(base("train_config { mixed_precision: 'FP16' grad_scaler { init_scale: 0 } }"),
                    "train_config.grad_scaler.init_scale: must be > 0"));
  EXPECT_TRUE(Fails(base("train_config { mixed_precision: 'FP16' grad_scaler { growth_factor: 1 } }"),
                    "train_config.grad_scaler.growth_factor: must be > 1"));
  EXPECT_TRUE(Fails(base("train_config { mixed_precision: 'FP16' grad_scaler { backoff_factor: 1 } }"),
                    "train_config.grad_scaler.backoff_factor: must be in (0, 1)"));
  EXPECT_TRUE(Fails(base("train_config { mixed_precision: 'FP16' grad_scaler { growth_interval: 0 } }"),
                    "train_config.grad_scaler.growth_interval: must be >= 1"));
  // The scaler is only used (and checked) with FP16.
  EXPECT_TRUE(Builds(base("train_config { grad_scaler { growth_interval: 0 } }")));
  EXPECT_TRUE(Builds(base("train_config { mixed_precision: 'BF16' }")));
  EXPECT_TRUE(Builds(base("train_config { mixed_precision: '' }")));
  EXPECT_TRUE(Fails(base("train_config { mixed_precision: 'bf16' }"),
                    "train_config.mixed_precision: 'bf16' is not a precision; use \"BF16\" or \"FP16\""));
  EXPECT_TRUE(Builds(base("train_config { gradient_accumulation_steps: 2 }")));
  for (const char* type : {"norm", "VALUE", "none"}) {
    EXPECT_TRUE(Builds(base(std::string("train_config { grad_clipping { clipping_type: '") + type + "' } }")))
        << type;
  }
  EXPECT_TRUE(Fails(base("train_config { grad_clipping { clipping_type: 'l2' } }"),
                    "train_config.grad_clipping.clipping_type: must be norm, value or none, got 'l2'"));
}

// A single-process job whose tables cannot fit this machine (10^12 rows x 4 x 4 bytes) is refused
// by the planner's rule for one rank (train/embedding_sharding.h, check_tables_fit_one_process)
// before any table is allocated: check_config and train_eval (the session's constructor, for
// training and for evaluation / predict) give the same message, at once. A job of more ranks is
// the sharding planner's to check (plan_job).
TEST(TrainConfigRules, TablesMustFitOneProcess) {
  auto huge = base();
  huge.mutable_feature_configs(1)->mutable_id_feature()->set_num_buckets(1000000000000ULL);
  const std::string expected = "embedding table 'c0_emb' needs 16000000000000 bytes";
  const std::string checked = check_error(huge);
  EXPECT_NE(checked.find(expected), std::string::npos) << checked;
  for (bool with_optimizers : {true, false}) {
    try {
      TrainingSession session(huge, with_optimizers);
      ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.what(), checked) << with_optimizers;  // sgd keeps no state: the same bytes
    }
  }
  EXPECT_NO_THROW(TrainingSession::check_construction(huge, /*world_size=*/2));
}

}  // namespace train_config_rules_test
}  // namespace tzrec::train
