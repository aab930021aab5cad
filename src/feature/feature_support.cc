#include "feature/feature_support.h"

#include <cctype>
#include <mutex>
#include <set>

#include "base/logging.h"

namespace tzrec::feature {

void fill_table_info(uint32_t embedding_dim, const std::string& embedding_name, const std::string& pooling,
                     bool trainable, const std::string& init_fn, const std::string& data_type,
                     const std::string& path, FeatureInfo* info) {
  if (embedding_dim == 0) {
    throw ConfigError(fmt::format("{}.embedding_dim: must be > 0 for sparse feature {}", path, info->name));
  }
  info->embedding_dim = embedding_dim;
  info->embedding_name = embedding_name.empty() ? info->name + "_emb" : embedding_name;
  info->pooling = pooling;
  for (auto& c : info->pooling) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (info->pooling != "sum" && info->pooling != "mean") {
    throw ConfigError(fmt::format("{}.pooling: '{}' is not sum or mean", path, pooling));
  }
  info->trainable = trainable;
  info->init_fn = init_fn;
  info->data_type = data_type;
  if (data_type != "FP32" && data_type != "FP16") {
    throw ConfigError(fmt::format("{}.data_type: '{}' is not FP32 or FP16", path, data_type));
  }
}

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
    throw NotSupportedError(fmt::format("{}.expression '{}' (FG DAG '{}:' inputs)", path, expr, side));
  }
  if (side != "user" && side != "item" && side != "context") {
    throw ConfigError(fmt::format("{}.expression: side '{}' of '{}' is not user, item or context", path, side, expr));
  }
  return expr.substr(colon + 1);
}

std::string sequence_input_column(const BuildContext& ctx, const std::string& input) {
  return ctx.sequence_name.empty() ? input : ctx.sequence_name + "__" + input;
}

std::optional<std::string> fg_encoded_default(bool has, const std::string& value, const FeatureInfo& info,
                                              const std::string& path, const std::string& sep) {
  if (!has || value.empty()) return std::nullopt;
  for_each_token(value, sep, [&](std::string_view tok) {
    if (info.is_sparse) {
      std::string_view id_part = tok;
      if (info.weighted) {
        const auto colon = tok.rfind(':');
        if (colon != std::string_view::npos) id_part = tok.substr(0, colon);
      }
      int64_t id = 0;
      if (!parse_int64(id_part, &id) || id < 0 || id >= info.num_embeddings) {
        throw ConfigError(fmt::format(
            "{}.fg_encoded_default_value: '{}' is not an id in [0, {}) (tokens separated by "
            "data_config.fg_encoded_multival_sep)",
            path, std::string(tok), info.num_embeddings));
      }
    } else {
      double v = 0;
      if (!parse_double(tok, &v)) {
        throw ConfigError(fmt::format("{}.fg_encoded_default_value: '{}' is not a number", path, std::string(tok)));
      }
    }
  });
  return value;
}

void warn_normalizer_not_applied(const std::string& path) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (!warned.insert(path).second) return;
  log::warning("{}.normalizer is not applied with data_config.fg_mode FG_NONE (the column already holds "
               "feature-generation output); use fg_mode FG_NORMAL to normalize raw values",
               path);
}

std::string range_hint(const std::string& table_size_field) {
  if (table_size_field == "num_buckets" || table_size_field == "hash_bucket_size") {
    return "fix the data or raise " + table_size_field;
  }
  return "fix the data or the " + table_size_field;
}

bool split_weighted(std::string_view tok, std::string_view* key, float* weight) {
  const auto colon = tok.rfind(':');
  if (colon == std::string_view::npos) return false;
  double w = 0;
  if (!parse_double(tok.substr(colon + 1), &w)) return false;
  *key = tok.substr(0, colon);
  *weight = static_cast<float>(w);
  return true;
}

bool weighted_key(const CellValue& v, CellValue* key, float* weight) {
  *key = v;
  if (v.has_weight) {
    *weight = static_cast<float>(v.weight);
    return true;
  }
  if (v.kind != CellValue::Kind::kText) return false;
  return split_weighted(v.text, &key->text, weight);
}

void end_sequence_row(const std::vector<int64_t>& ids_per_item, bool one_id_per_item, const ParseOutput& out) {
  const auto items = static_cast<int64_t>(ids_per_item.size());
  out.sequence_lengths->push_back(items);
  if (one_id_per_item) {
    out.sparse->lengths.push_back(items);
    return;
  }
  int64_t ids = 0;
  for (int64_t n : ids_per_item) ids += n;
  out.sparse->lengths.push_back(ids);
  out.item_lengths->insert(out.item_lengths->end(), ids_per_item.begin(), ids_per_item.end());
}

}  // namespace tzrec::feature
