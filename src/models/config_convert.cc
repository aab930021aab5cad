#include "models/config_convert.h"

#include <google/protobuf/message.h>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::models {
namespace {

embedding::DynamicEmbInitializer to_initializer(const feature::DynamicEmbInit& in, const std::string& path) {
  using Mode = embedding::DynamicEmbInitializer::Mode;
  embedding::DynamicEmbInitializer out;
  if (in.mode == "NORMAL") {
    out.mode = Mode::kNormal;
  } else if (in.mode == "TRUNCATED_NORMAL") {
    out.mode = Mode::kTruncatedNormal;
  } else if (in.mode == "UNIFORM") {
    out.mode = Mode::kUniform;
  } else if (in.mode == "CONSTANT") {
    out.mode = Mode::kConstant;
  } else {
    throw ConfigError(fmt::format("{}.mode: unknown '{}'; use NORMAL, TRUNCATED_NORMAL, UNIFORM or CONSTANT", path,
                                  in.mode));
  }
  out.mean = in.mean;
  out.std_dev = in.std_dev;
  out.lower = in.lower;
  out.upper = in.upper;
  out.value = in.value;
  return out;
}

// A feature's dynamicemb settings as the embedding layer takes them (docs/tzrec-compatibility.md
// §5.13); ConfigError for an unknown initializer mode or score strategy.
embedding::DynamicEmbOptions to_dynamic_emb_options(const feature::DynamicEmbSettings& d, const std::string& table) {
  embedding::DynamicEmbOptions out;
  embedding::DynamicTableOptions& t = out.table;
  t.max_capacity = d.max_capacity;
  if (d.init_capacity > 0) t.init_capacity = d.init_capacity;
  t.bucket_capacity = d.bucket_capacity;
  t.score_strategy = embedding::parse_dynamic_score_strategy(d.score_strategy, d.path + ".score_strategy");
  if (d.admission) {
    embedding::DynamicAdmissionOptions a;
    a.threshold = d.admission_threshold;
    if (d.counter_capacity > 0) a.counter_capacity = d.counter_capacity;
    a.counter_bucket_capacity = d.counter_bucket_capacity;
    t.admission = a;
    out.admission_init =
        to_initializer(d.admission_init, d.path + ".frequency_admission_strategy.initializer_args");
  }
  t.field_path = d.path;
  t.table_name = table;
  out.init = to_initializer(d.init, d.path + ".initializer_args");
  out.eval_init = to_initializer(d.eval_init, d.path + ".eval_initializer_args");
  return out;
}

}  // namespace

embedding::FeatureSpec to_feature_spec(const feature::FeatureInfo& info) {
  embedding::FeatureSpec spec;
  spec.name = info.name;
  spec.path = info.path;
  spec.is_sparse = info.is_sparse;
  spec.num_embeddings = info.num_embeddings;
  spec.embedding_dim = info.embedding_dim;
  spec.embedding_name = info.embedding_name;
  spec.pooling = info.pooling;
  spec.weighted = info.weighted;
  spec.trainable = info.trainable;
  spec.init_fn = info.init_fn;
  spec.dtype = info.data_type == "FP16" ? torch::kFloat16 : torch::kFloat32;
  spec.value_dim = info.value_dim;
  if (info.dense_embedding == "autodis") {
    spec.dense_embedding.type = embedding::DenseEmbeddingType::kAutoDis;
    spec.dense_embedding.num_channels = info.autodis_num_channels;
    spec.dense_embedding.temperature = info.autodis_temperature;
    spec.dense_embedding.keep_prob = info.autodis_keep_prob;
  } else if (info.dense_embedding == "mlp") {
    spec.dense_embedding.type = embedding::DenseEmbeddingType::kMlp;
  }
  spec.is_sequence = info.is_sequence;
  spec.neg = info.neg;
  if (!info.zch_path.empty()) {
    embedding::ZchOptions z;
    z.zch_size = info.num_embeddings;
    z.eviction_interval = info.zch_eviction_interval;
    z.eviction = info.zch_eviction == "lru"            ? embedding::ZchEvictionKind::kLru
                 : info.zch_eviction == "distance_lfu" ? embedding::ZchEvictionKind::kDistanceLfu
                                                       : embedding::ZchEvictionKind::kLfu;
    z.decay_exponent = info.zch_decay_exponent;
    z.threshold_filtering_func = info.zch_threshold_filtering_func;
    z.field_path = info.zch_path;
    spec.zch = std::move(z);
  }
  if (!info.dynamicemb.path.empty()) spec.dynamicemb = to_dynamic_emb_options(info.dynamicemb, info.embedding_name);
  return spec;
}

std::vector<embedding::FeatureSpec> to_feature_specs(const std::vector<feature::FeatureInfo>& infos) {
  std::vector<embedding::FeatureSpec> specs;
  specs.reserve(infos.size());
  for (const auto& info : infos) specs.push_back(to_feature_spec(info));
  return specs;
}

std::vector<embedding::FeatureGroupConfig> to_group_configs(const protos::ModelConfig& model_config) {
  std::vector<embedding::FeatureGroupConfig> groups;
  for (int i = 0; i < model_config.feature_groups_size(); ++i) {
    const protos::FeatureGroupConfig& g = model_config.feature_groups(i);
    const std::string path = fmt::format("model_config.feature_groups[{}]", i);
    embedding::FeatureGroupConfig out;
    out.group_name = g.group_name();
    out.path = path;
    switch (g.group_type()) {
      case protos::DEEP:
        out.type = embedding::GroupType::kDeep;
        break;
      case protos::WIDE:
        out.type = embedding::GroupType::kWide;
        break;
      case protos::SEQUENCE:
        out.type = embedding::GroupType::kSequence;
        break;
      case protos::JAGGED_SEQUENCE:
        out.type = embedding::GroupType::kJaggedSequence;
        break;
      default:
        throw NotSupportedError(
            fmt::format("{}.group_type {} (group '{}')", path, protos::FeatureGroupType_Name(g.group_type()),
                        g.group_name()));
    }
    for (int k = 0; k < g.sequence_groups_size(); ++k) {
      const protos::SeqGroupConfig& sg = g.sequence_groups(k);
      const std::string sg_path = fmt::format("{}.sequence_groups[{}]", path, k);
      embedding::SequenceGroupConfig nested;
      nested.group_name = sg.group_name();
      nested.feature_names.assign(sg.feature_names().begin(), sg.feature_names().end());
      nested.path = sg_path;
      // TorchEasyRec: a nested sequence group without a suffix of its own takes its DEEP group's.
      nested.embedding_name_suffix = sg.embedding_name_suffix().empty() ? g.embedding_name_suffix()
                                                                        : sg.embedding_name_suffix();
      out.sequence_groups.push_back(std::move(nested));
    }
    for (int k = 0; k < g.sequence_encoders_size(); ++k) {
      const protos::SeqEncoderConfig& e = g.sequence_encoders(k);
      // Every encoder message has `input` as field 2 ("required" in the schema, optional here:
      // a group with one sequence group defaults to it, as in TorchEasyRec).
      std::string input;
      const auto* set = e.GetReflection()->GetOneofFieldDescriptor(e, e.GetDescriptor()->FindOneofByName("seq_module"));
      if (set != nullptr) {
        const google::protobuf::Message& m = e.GetReflection()->GetMessage(e, set);
        const auto* input_field = m.GetDescriptor()->FindFieldByName("input");
        if (input_field != nullptr) input = m.GetReflection()->GetString(m, input_field);
      }
      out.sequence_encoders.push_back({input, fmt::format("{}.sequence_encoders[{}]", path, k)});
    }
    out.embedding_name_suffix = g.embedding_name_suffix();
    out.feature_names.assign(g.feature_names().begin(), g.feature_names().end());
    groups.push_back(std::move(out));
  }
  return groups;
}

nn::MLPOptions to_mlp_options(const protos::MLP& mlp) {
  nn::MLPOptions o;
  o.hidden_units.assign(mlp.hidden_units().begin(), mlp.hidden_units().end());
  // float in the proto, as in tzrec (the ratio reaches torch as the float's double value).
  o.dropout_ratio.assign(mlp.dropout_ratio().begin(), mlp.dropout_ratio().end());
  o.activation = mlp.activation();
  o.use_bn = mlp.use_bn();
  o.bias = mlp.bias();
  o.use_ln = mlp.use_ln();
  return o;
}

}  // namespace tzrec::models
