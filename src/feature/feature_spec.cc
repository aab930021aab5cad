#include "feature/feature_spec.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <set>

#include "base/error.h"
#include "base/logging.h"
#include "feature/text_values.h"

namespace tzrec::feature {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string oneof_name(const protos::FeatureConfig& fc) {
  const auto* oneof = protos::FeatureConfig::descriptor()->FindOneofByName("feature");
  const auto* field = fc.GetReflection()->GetOneofFieldDescriptor(fc, oneof);
  return field == nullptr ? std::string() : field->name();
}

// Common embedding-table settings of sparse features (docs/tzrec-compatibility.md §5.7).
template <typename Msg>
void fill_table_info(const Msg& c, const std::string& path, FeatureInfo* info) {
  if (c.embedding_dim() == 0) {
    throw ConfigError(
        fmt::format("{}.embedding_dim: must be > 0 for sparse feature {}", path, info->name));
  }
  info->embedding_dim = c.embedding_dim();
  info->embedding_name = c.embedding_name().empty() ? info->name + "_emb" : c.embedding_name();
  info->pooling = lower(c.pooling());
  if (info->pooling != "sum" && info->pooling != "mean") {
    throw ConfigError(fmt::format("{}.pooling: '{}' is not sum or mean", path, c.pooling()));
  }
  info->trainable = c.trainable();
  info->init_fn = c.init_fn();
  info->data_type = c.data_type();
  if (info->data_type != "FP32" && info->data_type != "FP16") {
    throw ConfigError(fmt::format("{}.data_type: '{}' is not FP32 or FP16", path, c.data_type()));
  }
}

// A normalizer under FG_NONE is valid but has no effect: one warning per feature and process.
void warn_normalizer_not_applied(const std::string& path) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (!warned.insert(path).second) return;
  log::warning("{}.normalizer is not applied with data_config.fg_mode FG_NONE (the column already holds "
               "feature-generation output); use fg_mode FG_NORMAL to normalize raw values",
               path);
}

// FG input column from "side:input_name" (docs/tzrec-compatibility.md §5.1).
std::string input_from_expression(const std::string& expr, const std::string& path) {
  const auto colon = expr.find(':');
  if (expr.empty() || colon == std::string::npos || colon + 1 == expr.size()) {
    throw ConfigError(fmt::format(
        "{}.expression: '{}' is not 'side:input_name' (side: user, item or context); with "
        "fg_mode FG_NORMAL/FG_DAG every feature needs an expression",
        path, expr));
  }
  const std::string side = expr.substr(0, colon);
  if (side == "feature" || side == "const") {
    throw NotSupportedError(
        fmt::format("{}.expression '{}' (FG DAG '{}:' inputs)", path, expr, side));
  }
  if (side != "user" && side != "item" && side != "context") {
    throw ConfigError(fmt::format("{}.expression: side '{}' of '{}' is not user, item or context",
                                  path, side, expr));
  }
  return expr.substr(colon + 1);
}

// Validates fg_encoded_default_value: integer ids in range (sparse) or floats (dense).
std::optional<std::string> fg_encoded_default(bool has, const std::string& value,
                                              const FeatureSpec& spec, const std::string& sep) {
  if (!has || value.empty()) return std::nullopt;
  for_each_token(value, sep, [&](std::string_view tok) {
    if (spec.info.is_sparse) {
      std::string_view id_part = tok;
      if (spec.info.weighted) {
        const auto colon = tok.rfind(':');
        if (colon != std::string_view::npos) id_part = tok.substr(0, colon);
      }
      int64_t id = 0;
      if (!parse_int64(id_part, &id) || id < 0 || id >= spec.info.num_embeddings) {
        throw ConfigError(fmt::format(
            "{}.fg_encoded_default_value: '{}' is not an id in [0, {}) (tokens separated by "
            "data_config.fg_encoded_multival_sep)",
            spec.field_path, std::string(tok), spec.info.num_embeddings));
      }
    } else {
      double v = 0;
      if (!parse_double(tok, &v)) {
        throw ConfigError(fmt::format("{}.fg_encoded_default_value: '{}' is not a number",
                                      spec.field_path, std::string(tok)));
      }
    }
  });
  return value;
}

void check_vocab_ids(const FeatureSpec& spec) {
  for (const auto& [token, id] : spec.vocab) {
    if (id < 0 || id >= spec.info.num_embeddings) {
      throw ConfigError(fmt::format(
          "{}: vocab id {} of '{}' is outside the table [0, {}) sized by {}", spec.field_path, id,
          token, spec.info.num_embeddings, spec.table_size_source));
    }
  }
  if (spec.oov_id < 0 || spec.oov_id >= spec.info.num_embeddings) {
    throw ConfigError(fmt::format(
        "{}.default_bucketize_value: {} is outside the table [0, {}) sized by {}", spec.field_path,
        spec.oov_id, spec.info.num_embeddings, spec.table_size_source));
  }
}

FeatureSpec build_id(const protos::IdFeature& c, int index, FgMode mode,
                     const std::string& multival_sep) {
  FeatureSpec s;
  s.config_index = index;
  s.field_path = fmt::format("feature_configs[{}].id_feature", index);
  const std::string& path = s.field_path;
  if (c.feature_name().empty()) throw ConfigError(path + ".feature_name: must be set");
  s.info.name = c.feature_name();
  s.info.type = "id_feature";
  s.info.is_sparse = true;
  s.info.weighted = c.weighted();
  // zch, dynamicemb, vocab_file, stub_type: refused when the config is loaded (config/field_registry.cc).
  if (c.has_fg_value_type() && c.fg_value_type() != "string") {
    throw NotSupportedError(path + ".fg_value_type '" + c.fg_value_type() + "'");
  }
  fill_table_info(c, path, &s.info);

  // Effective vocabularies (docs/tzrec-compatibility.md §5.4): without default_bucketize_value, id 0 is the
  // default value and id 1 is OOV.
  std::vector<std::string> vocab_list;
  if (c.vocab_list_size() > 0) {
    if (c.has_default_bucketize_value()) {
      vocab_list.assign(c.vocab_list().begin(), c.vocab_list().end());
    } else {
      vocab_list = {c.default_value(), "<OOV>"};
      vocab_list.insert(vocab_list.end(), c.vocab_list().begin(), c.vocab_list().end());
    }
  }
  std::map<std::string, int64_t> vocab_dict(c.vocab_dict().begin(), c.vocab_dict().end());
  if (!vocab_dict.empty() && !c.has_default_bucketize_value()) vocab_dict[c.default_value()] = 0;

  // num_embeddings precedence: hash_bucket_size > num_buckets > vocab_list > vocab_dict.
  if (c.has_hash_bucket_size()) {
    if (c.hash_bucket_size() == 0) throw ConfigError(path + ".hash_bucket_size: must be > 0");
    s.info.num_embeddings = static_cast<int64_t>(c.hash_bucket_size());
    s.table_size_field = "hash_bucket_size";
  } else if (c.has_num_buckets()) {
    if (c.num_buckets() == 0) throw ConfigError(path + ".num_buckets: must be > 0");
    s.info.num_embeddings = static_cast<int64_t>(c.num_buckets());
    s.table_size_field = "num_buckets";
  } else if (!vocab_list.empty()) {
    s.info.num_embeddings = static_cast<int64_t>(vocab_list.size());
    s.table_size_field = "vocab_list";
  } else if (!vocab_dict.empty()) {
    int64_t max_id = 0;
    for (const auto& [k, v] : vocab_dict) max_id = std::max(max_id, v);
    s.info.num_embeddings = max_id + 1;
    s.table_size_field = "vocab_dict";
  } else {
    throw ConfigError(fmt::format(
        "{}: set one of hash_bucket_size, num_buckets, vocab_list or vocab_dict for feature {}",
        path, s.info.name));
  }
  s.table_size_source = s.table_size_field + " " + std::to_string(s.info.num_embeddings);

  if (mode == FgMode::kNone) {
    s.input_column = s.info.name;
    s.fg_encoded_default = fg_encoded_default(c.has_fg_encoded_default_value(),
                                              c.fg_encoded_default_value(), s, multival_sep);
    return s;
  }
  s.input_column = input_from_expression(c.expression(), path);
  s.default_value = c.default_value();
  s.separator = c.separator();
  if (s.separator.empty()) throw ConfigError(path + ".separator: must not be empty");
  // Bucketizer precedence of TorchEasyRec's fg_json: hash > vocab_list > vocab_dict > num_buckets.
  if (c.has_hash_bucket_size()) {
    s.bucketizer = Bucketizer::kHash;
    s.hash_bucket_size = c.hash_bucket_size();
  } else if (!vocab_list.empty()) {
    s.bucketizer = Bucketizer::kVocab;
    // A token listed twice keeps its later position (the default value found in vocab_list
    // maps to its list position).
    for (size_t i = 0; i < vocab_list.size(); ++i) s.vocab[vocab_list[i]] = static_cast<int64_t>(i);
    s.oov_id =
        c.has_default_bucketize_value() ? static_cast<int64_t>(c.default_bucketize_value()) : 1;
    check_vocab_ids(s);
  } else if (!vocab_dict.empty()) {
    s.bucketizer = Bucketizer::kVocab;
    for (const auto& [k, v] : vocab_dict) s.vocab[k] = v;
    s.oov_id =
        c.has_default_bucketize_value() ? static_cast<int64_t>(c.default_bucketize_value()) : 1;
    check_vocab_ids(s);
  } else {
    s.bucketizer = Bucketizer::kNumBuckets;
  }
  return s;
}

FeatureSpec build_raw(const protos::RawFeature& c, int index, FgMode mode,
                      const std::string& multival_sep) {
  FeatureSpec s;
  s.config_index = index;
  s.field_path = fmt::format("feature_configs[{}].raw_feature", index);
  const std::string& path = s.field_path;
  if (c.feature_name().empty()) throw ConfigError(path + ".feature_name: must be set");
  s.info.name = c.feature_name();
  s.info.type = "raw_feature";
  // autodis, mlp, stub_type: refused when the config is loaded (config/field_registry.cc).
  if (c.value_dim() == 0) throw ConfigError(path + ".value_dim: must be >= 1");
  const int64_t value_dim = c.value_dim();
  s.raw_value_dim = value_dim;
  if (c.boundaries_size() > 0) {
    s.info.is_sparse = true;
    fill_table_info(c, path, &s.info);
    s.boundaries.assign(c.boundaries().begin(), c.boundaries().end());
    for (size_t i = 0; i < s.boundaries.size(); ++i) {
      if (std::isnan(s.boundaries[i]) || (i > 0 && !(s.boundaries[i - 1] < s.boundaries[i]))) {
        throw ConfigError(fmt::format("{}.boundaries: must be strictly increasing (entry {} is {})",
                                      path, i, s.boundaries[i]));
      }
    }
    s.info.num_embeddings = static_cast<int64_t>(s.boundaries.size()) + 1;
    s.table_size_field = "boundaries";
    s.table_size_source =
        fmt::format("{} boundaries -> {} buckets", s.boundaries.size(), s.info.num_embeddings);
    s.bucketizer = Bucketizer::kBoundaries;
  } else {
    s.info.is_sparse = false;
    s.info.value_dim = value_dim;
    s.info.embedding_dim = c.embedding_dim();
    s.bucketizer = Bucketizer::kNone;
  }
  if (mode == FgMode::kNone) {
    // The column holds FG output: bucket ids when boundaries are set, else value_dim floats.
    if (c.has_normalizer()) warn_normalizer_not_applied(path);
    s.input_column = s.info.name;
    s.fg_encoded_default = fg_encoded_default(c.has_fg_encoded_default_value(),
                                              c.fg_encoded_default_value(), s, multival_sep);
    return s;
  }
  s.input_column = input_from_expression(c.expression(), path);
  s.default_value = c.default_value();
  s.separator = c.separator();
  if (s.separator.empty()) throw ConfigError(path + ".separator: must not be empty");
  if (c.has_normalizer()) s.normalizer = Normalizer::parse(c.normalizer(), path + ".normalizer");
  return s;
}

}  // namespace

ParserSpec build_parser_spec(const protos::EasyRecConfig& config) {
  const auto& dc = config.data_config();
  ParserSpec spec;
  switch (dc.fg_mode()) {
    case protos::FG_NONE:
      spec.fg_mode = FgMode::kNone;
      break;
    case protos::FG_NORMAL:
    case protos::FG_DAG:
      spec.fg_mode = FgMode::kNormal;
      break;
    default:
      throw NotSupportedError("data_config.fg_mode " + protos::FgMode_Name(dc.fg_mode()));
  }
  spec.multival_sep = dc.fg_encoded_multival_sep();
  if (spec.multival_sep.empty()) {
    throw ConfigError("data_config.fg_encoded_multival_sep: must not be empty");
  }
  std::set<std::string> names;
  std::map<std::string, const FeatureSpec*> tables;
  for (int i = 0; i < config.feature_configs_size(); ++i) {
    const auto& fc = config.feature_configs(i);
    switch (fc.feature_case()) {
      case protos::FeatureConfig::kIdFeature:
        spec.features.push_back(build_id(fc.id_feature(), i, spec.fg_mode, spec.multival_sep));
        break;
      case protos::FeatureConfig::kRawFeature:
        spec.features.push_back(build_raw(fc.raw_feature(), i, spec.fg_mode, spec.multival_sep));
        break;
      case protos::FeatureConfig::FEATURE_NOT_SET:
        throw ConfigError(fmt::format("feature_configs[{}]: no feature type is set", i));
      default:
        throw NotSupportedError(fmt::format("feature_configs[{}].{}", i, oneof_name(fc)));
    }
    const FeatureSpec& f = spec.features.back();
    if (!names.insert(f.info.name).second) {
      throw ConfigError(fmt::format("{}.feature_name: '{}' is used by another feature",
                                    f.field_path, f.info.name));
    }
  }
  // Features sharing a table (same embedding_name) must agree on its shape.
  for (const auto& f : spec.features) {
    if (!f.info.is_sparse) continue;
    auto [it, inserted] = tables.emplace(f.info.embedding_name, &f);
    if (inserted) continue;
    const FeatureInfo& o = it->second->info;
    if (o.num_embeddings != f.info.num_embeddings || o.embedding_dim != f.info.embedding_dim) {
      throw ConfigError(fmt::format(
          "{}.embedding_name: table '{}' is shared with {} but has {} x {} rows x dim there and "
          "{} x {} here; shared tables need the same size",
          f.field_path, f.info.embedding_name, it->second->field_path, o.num_embeddings,
          o.embedding_dim, f.info.num_embeddings, f.info.embedding_dim));
    }
  }
  spec.label_fields.assign(dc.label_fields().begin(), dc.label_fields().end());
  spec.sample_weight_fields.assign(dc.sample_weight_fields().begin(),
                                   dc.sample_weight_fields().end());
  return spec;
}

}  // namespace tzrec::feature
