// validate(): feature_configs checks.
#include <fmt/format.h>

#include <map>
#include <set>

#include "base/logging.h"
#include "config/validate_internal.h"

namespace tzrec::config::detail {

namespace {

const std::set<std::string> kSides = {"user", "item", "context", "feature", "const"};

// FG input "side:name"; only user|item|context inputs are supported in this build.
void check_expression(const std::string& expr, const std::string& path, protos::FgMode mode,
                      Problems* problems) {
  const std::string mode_name = protos::FgMode_Name(mode);
  if (expr.empty()) {
    problems->add(path, "required with fg_mode " + mode_name +
                            " (form side:name, side in user|item|context|feature|const)");
    return;
  }
  size_t colon = expr.find(':');
  std::string side = colon == std::string::npos ? "" : expr.substr(0, colon);
  if (colon == std::string::npos || colon + 1 == expr.size() || !kSides.count(side)) {
    problems->add(path, "must be side:name with side in user|item|context|feature|const, got '" +
                            expr + "'");
  } else if (side == "feature" || side == "const") {
    problems->not_supported(path, side + ": inputs ('" + expr + "')");
  }
}

void check_pooling(const std::string& pooling, const std::string& path, Problems* problems) {
  if (pooling != "sum" && pooling != "mean") {
    problems->add(path, "must be sum or mean, got '" + pooling + "'");
  }
}

void check_data_type(const std::string& data_type, const std::string& path, Problems* problems) {
  if (data_type != "FP32" && data_type != "FP16") {
    problems->add(path, "must be FP32 or FP16, got '" + data_type + "'");
  }
}

// "method=log10,threshold=1e-10,default=-10" etc.
void check_normalizer(const std::string& normalizer, const std::string& path, Problems* problems) {
  if (normalizer.empty()) return;
  std::string method;
  size_t start = 0;
  while (start <= normalizer.size()) {
    size_t comma = normalizer.find(',', start);
    std::string item = normalizer.substr(start, comma == std::string::npos ? std::string::npos
                                                                           : comma - start);
    if (item.rfind("method=", 0) == 0) method = item.substr(7);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  static const std::set<std::string> kMethods = {"log10", "zscore", "minmax", "expression"};
  if (!kMethods.count(method)) {
    problems->add(path, "needs method=log10|zscore|minmax|expression, got '" + normalizer + "'");
  }
}

void check_id_feature(const protos::IdFeature& f, const std::string& p, protos::FgMode mode,
                      Problems* problems) {
  if (f.embedding_dim() == 0) problems->add(p + ".embedding_dim", "must be > 0");
  const bool has_bucketizer = f.has_hash_bucket_size() || f.has_num_buckets() ||
                              f.vocab_list_size() > 0 || f.vocab_dict_size() > 0 ||
                              !f.vocab_file().empty() || f.has_zch() || f.has_dynamicemb();
  if (!has_bucketizer) {
    problems->add(p, "needs one of hash_bucket_size, num_buckets, vocab_list, vocab_dict, "
                     "vocab_file, zch, dynamicemb");
  }
  if (f.has_hash_bucket_size() && f.hash_bucket_size() == 0) {
    problems->add(p + ".hash_bucket_size", "must be > 0");
  }
  if (f.has_num_buckets() && f.num_buckets() == 0) problems->add(p + ".num_buckets", "must be > 0");
  // Weighted ids are parsed natively in FG_NONE; the FG path does not produce weights yet.
  if (f.weighted() && mode != protos::FG_NONE) {
    problems->not_supported(p + ".weighted", "with fg_mode " + protos::FgMode_Name(mode));
  }
  check_pooling(f.pooling(), p + ".pooling", problems);
  check_data_type(f.data_type(), p + ".data_type", problems);
  if (mode != protos::FG_NONE) check_expression(f.expression(), p + ".expression", mode, problems);
}

void check_raw_feature(const protos::RawFeature& f, const std::string& p, protos::FgMode mode,
                       Problems* problems) {
  if (f.boundaries_size() > 0 && f.embedding_dim() == 0) {
    problems->add(p + ".embedding_dim", "must be > 0 when boundaries are set");
  }
  for (int k = 1; k < f.boundaries_size(); ++k) {
    if (!(f.boundaries(k) > f.boundaries(k - 1))) {
      problems->add(p + ".boundaries",
                    fmt::format("must be strictly increasing, but boundaries[{}]={} <= "
                                "boundaries[{}]={}",
                                k, f.boundaries(k), k - 1, f.boundaries(k - 1)));
      break;
    }
  }
  if (f.value_dim() == 0) problems->add(p + ".value_dim", "must be > 0");
  check_pooling(f.pooling(), p + ".pooling", problems);
  check_data_type(f.data_type(), p + ".data_type", problems);
  if (mode != protos::FG_NONE) {
    check_expression(f.expression(), p + ".expression", mode, problems);
    check_normalizer(f.normalizer(), p + ".normalizer", problems);
  } else if (!f.normalizer().empty()) {
    log::warning("{}.normalizer is not applied with data_config.fg_mode FG_NONE (the column already holds "
                 "feature-generation output); use fg_mode FG_NORMAL to normalize raw values",
                 p);
  }
}

}  // namespace

void validate_features(const protos::EasyRecConfig& config, Problems* problems) {
  const protos::FgMode mode = config.data_config().fg_mode();
  std::map<std::string, int> first_index;
  auto register_name = [&](const std::string& name, const std::string& path, int i) {
    auto [it, inserted] = first_index.emplace(name, i);
    if (!inserted) {
      problems->add(path, "duplicate feature name '" + name + "' (also feature_configs[" +
                              std::to_string(it->second) + "])");
    }
  };

  for (int i = 0; i < config.feature_configs_size(); ++i) {
    const auto& f = config.feature_configs(i);
    const std::string base = item_path("", "feature_configs", i);
    const std::string type = feature_type_name(f);
    if (type.empty()) {
      problems->add(base, "no feature type set (e.g. id_feature { ... })");
      continue;
    }
    const std::string p = base + "." + type;
    if (f.has_sequence_feature()) {
      const auto& seq = f.sequence_feature();
      for (const auto& sub : seq.features()) {
        // Sub-features are named {sequence_name}__{feature_name}.
        const auto* oneof = protos::SeqFeatureConfig::descriptor()->FindOneofByName("feature");
        const auto* field = sub.GetReflection()->GetOneofFieldDescriptor(sub, oneof);
        if (!field) continue;
        const auto& msg = sub.GetReflection()->GetMessage(sub, field);
        const auto* name_field = msg.GetDescriptor()->FindFieldByName("feature_name");
        register_name(seq.sequence_name() + "__" + msg.GetReflection()->GetString(msg, name_field),
                      p, i);
      }
    } else if (feature_name(f).empty()) {
      problems->add(p + ".feature_name", "required");
    } else {
      register_name(feature_name(f), p + ".feature_name", i);
    }

    if (f.has_id_feature()) {
      check_id_feature(f.id_feature(), p, mode, problems);
    } else if (f.has_raw_feature()) {
      check_raw_feature(f.raw_feature(), p, mode, problems);
    }  // other feature types: refused by the field registry
  }
}

}  // namespace tzrec::config::detail
