#include "config/field_registry.h"

#include <set>

#include <gtest/gtest.h>

#include "config/pipeline_config.h"
#include "config/validate_testing.h"

namespace tzrec::config {
namespace field_registry_test {

namespace pb = google::protobuf;

// Every message of the schema, reached from EasyRecConfig's file and the files it imports.
std::vector<const pb::Descriptor*> all_messages() {
  std::vector<const pb::Descriptor*> out;
  std::set<const pb::FileDescriptor*> seen;
  std::vector<const pb::FileDescriptor*> files = {protos::EasyRecConfig::descriptor()->file()};
  while (!files.empty()) {
    const pb::FileDescriptor* f = files.back();
    files.pop_back();
    if (!seen.insert(f).second || f->package() != "tzrec.protos") continue;
    for (int i = 0; i < f->dependency_count(); ++i) files.push_back(f->dependency(i));
    std::vector<const pb::Descriptor*> todo;
    for (int i = 0; i < f->message_type_count(); ++i) todo.push_back(f->message_type(i));
    while (!todo.empty()) {
      const pb::Descriptor* d = todo.back();
      todo.pop_back();
      out.push_back(d);
      for (int i = 0; i < d->nested_type_count(); ++i) todo.push_back(d->nested_type(i));
    }
  }
  return out;
}

TEST(FieldRegistry, ClassifiesEveryFieldOfTheSchema) {
  const auto messages = all_messages();
  ASSERT_GT(messages.size(), 150u);  // the whole schema, not only pipeline.proto
  std::string unclassified;
  int fields = 0, oneof_members = 0;
  for (const pb::Descriptor* d : messages) {
    for (int i = 0; i < d->field_count(); ++i) {
      const pb::FieldDescriptor* f = d->field(i);
      ++fields;
      if (f->containing_oneof() != nullptr) ++oneof_members;
      if (field_rule(f) == nullptr) unclassified += "\n  " + f->full_name();
    }
  }
  EXPECT_TRUE(unclassified.empty()) << "fields without a rule in config/field_registry.cc:" << unclassified;
  EXPECT_GT(fields, 1000);
  EXPECT_GT(oneof_members, 100);
}

TEST(FieldRegistry, EveryEntryNamesARealField) {
  const auto stale = unknown_registry_entries();
  std::string list;
  for (const auto& s : stale) list += " " + s;
  EXPECT_TRUE(stale.empty()) << "registry entries naming no message or field:" << list;
}

TEST(FieldRegistry, WarnedFieldsSayWhy) {
  for (const pb::Descriptor* d : all_messages()) {
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldRule* rule = field_rule(d->field(i));
      if (rule != nullptr && rule->support == FieldSupport::kWarned) {
        EXPECT_FALSE(rule->why.empty()) << d->field(i)->full_name();
      }
    }
  }
}

protos::EasyRecConfig parse(const std::string& text) { return parse_pipeline_config_text(text, "test.config"); }

std::vector<std::string> paths(const std::vector<FieldFinding>& findings, FieldSupport support) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    if (f.support == support) out.push_back(f.path);
  }
  return out;
}

TEST(FieldRegistry, ReportsSetRefusedAndWarnedFieldsWithTheirPaths) {
  const auto findings = check_set_fields(parse(R"(
    data_config { batch_size: 8 pin_memory: false input_fields { input_name: "a" input_type: INT64 }
                  tdm_sampler { num_eval_sample: 2 } }
    train_config { cudnn_allow_tf32: false delta_embedding_dump_config { feature_store_config { region: "r" } } }
    feature_configs { kv_dot_product { feature_name: "a" kv_delimiter: 1 } }
    feature_configs { id_feature { feature_name: "b" dynamicemb { max_capacity: 4 init_table: "t" } } }
    model_config { simple_multi_task { } kernel: TRITON })"));
  using V = std::vector<std::string>;
  EXPECT_EQ(paths(findings, FieldSupport::kRefused),
            (V{"train_config.delta_embedding_dump_config.feature_store_config", "data_config.tdm_sampler.num_eval_sample",
               "feature_configs[0].kv_dot_product.kv_delimiter", "model_config.simple_multi_task"}));
  EXPECT_EQ(paths(findings, FieldSupport::kWarned),
            (V{"train_config.cudnn_allow_tf32", "data_config.pin_memory", "data_config.input_fields[0].input_type",
               "model_config.kernel"}));
}

TEST(FieldRegistry, DefaultValuesAndHonouredFieldsAreNotReported) {
  // Refused and warned scalars set to their defaults change nothing; map entries are data.
  EXPECT_TRUE(check_set_fields(parse(R"(
    data_config { batch_size: 8 shuffle: false pin_memory: true in_order: true sample_mask_prob: 0 }
    train_config { num_steps: 3 keep_checkpoint_max: 2 }
    feature_configs { id_feature { feature_name: "a" embedding_dim: 4 vocab_dict: [{key: "x" value: 2}] } }
    model_config { deepfm { } })"))
                  .empty());
}

TEST(FieldRegistry, ValidateRefusesWhatTheRegistryRefuses) {
  const auto config = parse(R"(
    train_input_path: "t" model_dir: "m"
    data_config { batch_size: 8 label_fields: "label" }
    train_config { num_steps: 1 sparse_optimizer { sgd_optimizer { lr: 0.1 } constant_learning_rate {} }
                   dense_optimizer { adam_optimizer { lr: 0.1 } constant_learning_rate {} }
                   grad_clipping { enable_global_grad_clip: true }
                   delta_embedding_dump_config { feature_store_config { region: "r" } } }
    feature_configs { id_feature { feature_name: "a" num_buckets: 10 embedding_dim: 4 } }
    model_config { feature_groups { group_name: "all" feature_names: "a" }
                   multi_tower { towers { input: "all" mlp { hidden_units: [4] } } }
                   losses { binary_cross_entropy {} } })");
  EXPECT_TRUE(testing::NotSupported(config, "train_config.delta_embedding_dump_config.feature_store_config"));
  EXPECT_FALSE(testing::NotSupported(config, "train_config.grad_clipping.enable_global_grad_clip"));
}

}  // namespace field_registry_test
}  // namespace tzrec::config
