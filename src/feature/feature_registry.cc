#include "feature/feature_registry.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "feature/bool_mask_feature.h"
#include "feature/combine_feature.h"
#include "feature/combo_feature.h"
#include "feature/custom_feature.h"
#include "feature/data_groups.h"
#include "feature/empty_input_default.h"
#include "feature/expr_feature.h"
#include "feature/feature_support.h"
#include "feature/hash.h"
#include "feature/id_feature.h"
#include "feature/kv_dot_product.h"
#include "feature/lookup_feature.h"
#include "feature/match_feature.h"
#include "feature/overlap_feature.h"
#include "feature/raw_feature.h"
#include "feature/sample_mask.h"
#include "feature/sequence_feature.h"
#include "feature/tokenize_feature.h"

namespace tzrec::feature {
namespace {

using Factory = FeaturePtr (*)(const google::protobuf::Message& msg, const std::string& path, const std::string& type,
                               const BuildContext& ctx, bool sequence);

template <class T, class Msg>
FeaturePtr make(const google::protobuf::Message& msg, const std::string& path, const std::string& type,
                const BuildContext& ctx, bool sequence) {
  return std::make_unique<T>(static_cast<const Msg&>(msg), path, type, ctx, sequence);
}

struct FeatureType {
  Factory factory;
  bool sequence;  // the sequence_* variant
};

// Oneof member name → how to build it (grouped sequence_feature sub-features use the entry of
// their own type with sequence = true).
const std::map<std::string, FeatureType>& feature_types() {
  static const std::map<std::string, FeatureType> types = {
      {"id_feature", {make<IdFeature, protos::IdFeature>, false}},
      {"sequence_id_feature", {make<IdFeature, protos::IdFeature>, true}},
      {"raw_feature", {make<RawFeature, protos::RawFeature>, false}},
      {"sequence_raw_feature", {make<RawFeature, protos::RawFeature>, true}},
      {"combo_feature", {make<ComboFeature, protos::ComboFeature>, false}},
      {"sequence_combo_feature", {make<ComboFeature, protos::ComboFeature>, true}},
      {"lookup_feature", {make<LookupFeature, protos::LookupFeature>, false}},
      {"sequence_lookup_feature", {make<LookupFeature, protos::LookupFeature>, true}},
      {"match_feature", {make<MatchFeature, protos::MatchFeature>, false}},
      {"sequence_match_feature", {make<MatchFeature, protos::MatchFeature>, true}},
      {"custom_feature", {make<CustomFeature, protos::CustomFeature>, false}},
      {"sequence_custom_feature", {make<CustomFeature, protos::CustomFeature>, true}},
      {"expr_feature", {make<ExprFeature, protos::ExprFeature>, false}},
      {"sequence_expr_feature", {make<ExprFeature, protos::ExprFeature>, true}},
      {"tokenize_feature", {make<TokenizeFeature, protos::TokenizeFeature>, false}},
      {"sequence_tokenize_feature", {make<TokenizeFeature, protos::TokenizeFeature>, true}},
      {"overlap_feature", {make<OverlapFeature, protos::OverlapFeature>, false}},
      {"sequence_overlap_feature", {make<OverlapFeature, protos::OverlapFeature>, true}},
      {"kv_dot_product", {make<KvDotProduct, protos::KvDotProduct>, false}},
      {"sequence_kv_dot_product", {make<KvDotProduct, protos::KvDotProduct>, true}},
      {"bool_mask_feature", {make<BoolMaskFeature, protos::BoolMaskFeature>, false}},
      {"sequence_bool_mask_feature", {make<BoolMaskFeature, protos::BoolMaskFeature>, true}},
      {"combine_feature", {make<CombineFeature, protos::CombineFeature>, false}},
      {"sequence_combine_feature", {make<CombineFeature, protos::CombineFeature>, true}},
  };
  return types;
}

// use_mask (every feature message has it; feature/sample_mask.h): whether the parser masks the
// feature's input in training. TorchEasyRec masks in FG_NONE and FG_NORMAL only; under FG_NONE it
// hands the masked rows the feature's encoded default, which without fg_encoded_default_value it
// computes by running feature generation on empty inputs (needs_empty_input_default).
bool use_mask_applies(const google::protobuf::Message& msg, const std::string& path, const BuildContext& ctx) {
  const auto* d = msg.GetDescriptor();
  const auto* use_mask = d->FindFieldByName("use_mask");
  if (use_mask == nullptr || !msg.GetReflection()->GetBool(msg, use_mask)) return false;
  if (ctx.fg_dag || ctx.fg_mode == FgMode::kBucketize) {
    warn_once(path + ".use_mask has no effect under data_config.fg_mode " + (ctx.fg_dag ? "FG_DAG" : "FG_BUCKETIZE") +
              " (TorchEasyRec masks inputs in FG_NONE and FG_NORMAL only)");
    return false;
  }
  if (ctx.fg_mode == FgMode::kNone && d->FindFieldByName("fg_encoded_default_value") == nullptr) {
    throw NotSupportedError(path + ".use_mask under fg_mode FG_NONE (the feature has no fg_encoded_default_value)");
  }
  return true;
}

// A masked FG_NONE feature without fg_encoded_default_value.
bool needs_empty_input_default(const google::protobuf::Message& msg, const BuildContext& ctx) {
  const auto* field = msg.GetDescriptor()->FindFieldByName("fg_encoded_default_value");
  return ctx.use_mask && ctx.fg_mode == FgMode::kNone && field != nullptr && !msg.GetReflection()->HasField(msg, field);
}

// The feature message with the fg_encoded_default_value TorchEasyRec computes for it: the
// feature built for FG_NORMAL, run on empty inputs (feature/empty_input_default.h). A feature
// that feature generation cannot build (no expression, say) gets TorchEasyRec's demand instead.
std::unique_ptr<google::protobuf::Message> with_empty_input_default(const FeatureType& type,
                                                                    const google::protobuf::Message& msg,
                                                                    const std::string& path, const std::string& name,
                                                                    const BuildContext& ctx, bool sequence) {
  if (sequence) {
    throw NotSupportedError(fmt::format("{}.use_mask of a sequence feature under fg_mode FG_NONE without "
                                        "fg_encoded_default_value: set fg_encoded_default_value",
                                        path));
  }
  BuildContext fg_ctx = ctx;
  fg_ctx.fg_mode = FgMode::kNormal;
  fg_ctx.use_mask = false;
  FeaturePtr fg_feature;
  try {
    fg_feature = type.factory(msg, path, name, fg_ctx, sequence);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}.use_mask under fg_mode FG_NONE: set fg_encoded_default_value (the value of "
                                  "masked rows), or give the feature what feature generation needs to compute it "
                                  "from empty inputs ({})",
                                  path, e.what()));
  }
  return with_fg_encoded_default(msg, empty_input_fg_output(*fg_feature, hash_kind_from_env(), ctx.multival_sep));
}

// The data_config side of use_mask: probabilities in [0, 1] (sample_mask_options), and what the
// masks do not reach.
void check_sample_masks(const protos::DataConfig& dc, const FeatureSet& set) {
  const SampleMaskOptions options = sample_mask_options(dc);
  bool any = false;
  for (const FeaturePtr& f : set.features) {
    if (!f->info().use_mask) continue;
    any = true;
    if (set.candidate && set.candidate->holds(f->info())) {
      throw NotSupportedError(f->field_path() + ".use_mask on a feature of the candidate sequence whose negatives the "
                              "sampler draws");
    }
  }
  if (options.active() && dc.has_tdm_sampler()) {
    throw NotSupportedError("data_config.sample_mask_prob / negative_sample_mask_prob with data_config.tdm_sampler");
  }
  if (options.active() && !any) {
    warn_once("data_config.sample_mask_prob / negative_sample_mask_prob mask nothing: no feature sets use_mask (in "
              "fg_mode FG_NONE or FG_NORMAL)");
  }
  if (any && !options.active()) {
    warn_once("use_mask masks nothing: data_config.sample_mask_prob and negative_sample_mask_prob are 0");
  }
}

}  // namespace

FeaturePtr make_feature(const std::string& type, const google::protobuf::Message& msg, const std::string& path,
                        const BuildContext& ctx, bool sequence) {
  auto it = feature_types().find(type);
  if (it == feature_types().end()) throw NotSupportedError(path);
  // stub_type is a field of every feature message (docs/tzrec-compatibility.md §5.2).
  BuildContext feature_ctx = ctx;
  if (const auto* stub = msg.GetDescriptor()->FindFieldByName("stub_type"); stub != nullptr) {
    feature_ctx.stub_type = msg.GetReflection()->GetBool(msg, stub);
  }
  feature_ctx.use_mask = use_mask_applies(msg, path, ctx);
  const bool is_sequence = sequence || it->second.sequence;
  if (needs_empty_input_default(msg, feature_ctx)) {
    const auto with_default = with_empty_input_default(it->second, msg, path, type, feature_ctx, is_sequence);
    return it->second.factory(*with_default, path, type, feature_ctx, is_sequence);
  }
  return it->second.factory(msg, path, type, feature_ctx, is_sequence);
}

FeatureSet build_features(const protos::EasyRecConfig& config) {
  const auto& dc = config.data_config();
  FeatureSet set;
  switch (dc.fg_mode()) {
    case protos::FG_NONE:
      set.fg_mode = FgMode::kNone;
      break;
    case protos::FG_NORMAL:
    case protos::FG_DAG:
      set.fg_mode = FgMode::kNormal;
      break;
    case protos::FG_BUCKETIZE:
      set.fg_mode = FgMode::kBucketize;
      break;
    default:
      throw NotSupportedError("data_config.fg_mode " + protos::FgMode_Name(dc.fg_mode()));
  }
  set.multival_sep = dc.fg_encoded_multival_sep();
  if (set.multival_sep.empty()) throw ConfigError("data_config.fg_encoded_multival_sep: must not be empty");
  BuildContext ctx;
  ctx.fg_mode = set.fg_mode;
  ctx.fg_dag = dc.fg_mode() == protos::FG_DAG;
  set.fg_dag = ctx.fg_dag;
  ctx.multival_sep = set.multival_sep;
  const auto* oneof = protos::FeatureConfig::descriptor()->FindOneofByName("feature");
  for (int i = 0; i < config.feature_configs_size(); ++i) {
    const protos::FeatureConfig& fc = config.feature_configs(i);
    const auto* field = fc.GetReflection()->GetOneofFieldDescriptor(fc, oneof);
    if (field == nullptr) throw ConfigError(fmt::format("feature_configs[{}]: no feature type is set", i));
    ctx.config_index = i;
    const std::string path = fmt::format("feature_configs[{}].{}", i, field->name());
    if (fc.has_sequence_feature()) {
      expand_sequence_feature(fc.sequence_feature(), path, ctx, &set.features);
    } else {
      set.features.push_back(make_feature(field->name(), fc.GetReflection()->GetMessage(fc, field), path, ctx, false));
    }
  }
  std::map<std::string, const Feature*> names;
  for (const FeaturePtr& f : set.features) {
    if (auto [it, inserted] = names.emplace(f->info().name, f.get()); !inserted) {
      throw ConfigError(fmt::format("{}.feature_name: '{}' is used by another feature ({})", f->field_path(),
                                    f->info().name, it->second->field_path()));
    }
  }
  // Features sharing a table (same embedding_name) must agree on its shape.
  std::map<std::string, const Feature*> tables;
  for (const FeaturePtr& f : set.features) {
    const FeatureInfo& info = f->info();
    if (!info.is_sparse || info.stub) continue;  // stub features have no table
    auto [it, inserted] = tables.emplace(info.embedding_name, f.get());
    if (inserted) continue;
    const FeatureInfo& o = it->second->info();
    if (o.num_embeddings != info.num_embeddings || o.embedding_dim != info.embedding_dim) {
      throw ConfigError(fmt::format(
          "{}.embedding_name: table '{}' is shared with {} but has {} x {} rows x dim there and {} x {} here; shared "
          "tables need the same size",
          f->field_path(), info.embedding_name, it->second->field_path(), o.num_embeddings, o.embedding_dim,
          info.num_embeddings, info.embedding_dim));
    }
  }
  for (const FeaturePtr& f : set.features) {
    // TorchEasyRec evaluates stub features only as producers of FG_DAG inputs; FG_NORMAL runs
    // every feature on its own and refuses them (docs/tzrec-compatibility.md §5.2).
    if (f->info().stub && dc.fg_mode() == protos::FG_NORMAL) {
      throw ConfigError(f->field_path() +
                        ".stub_type: fg_mode FG_NORMAL does not evaluate intermediate (stub_type) features; use "
                        "fg_mode FG_DAG, or unset stub_type");
    }
  }
  if (ctx.fg_dag) set.dag = plan_fg_dag(set.features);
  set.neg = negative_features(dc, set.features);
  set.candidate = candidate_sequence(dc, set.features);
  set.force_base_data_group = dc.force_base_data_group();
  check_sample_masks(dc, set);
  return set;
}

}  // namespace tzrec::feature
