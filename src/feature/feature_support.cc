#include "feature/feature_support.h"

#include <cctype>
#include <mutex>
#include <set>

#include "base/logging.h"
#include "config/feature_util.h"
#include "feature/dynamicemb_settings.h"
#include "feature/fg_dag.h"

namespace tzrec::feature {

void fill_table_info(uint32_t embedding_dim, const std::string& embedding_name, const std::string& pooling,
                     bool trainable, const std::string& init_fn, const std::string& data_type,
                     const std::string& path, FeatureInfo* info) {
  // embedding_dim 0 (unset) is an error where a group uses the feature (embedding/
  // embedding_config.h: require_embedding_dim).
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

FgInputName parse_fg_input(const std::string& expr, const std::string& field_path) {
  const auto colon = expr.find(':');
  if (expr.empty() || colon == std::string::npos || colon + 1 == expr.size()) {
    throw ConfigError(fmt::format(
        "{}: '{}' is not 'side:input_name' (side: user, item, context, feature or const); with "
        "fg_mode FG_NORMAL/FG_DAG every feature needs its inputs",
        field_path, expr));
  }
  FgInputName in{expr.substr(0, colon), expr.substr(colon + 1)};
  if (in.side != "user" && in.side != "item" && in.side != "context" && in.side != "feature" && in.side != "const") {
    throw ConfigError(fmt::format("{}: side '{}' of '{}' is not user, item, context, feature or const", field_path,
                                  in.side, expr));
  }
  return in;
}

std::string fg_input_column(const FgInputName& n, const BuildContext& ctx, bool per_item,
                            const std::string& field_path) {
  if (n.side == "feature" || n.side == "const") {
    if (per_item) {
      throw NotSupportedError(fmt::format("{} '{}:{}' as an input of a sequence's items (FG DAG inputs of items)",
                                          field_path, n.side, n.name));
    }
    return ctx.fg_dag ? dag_input_column(n.side, n.name) : n.name;
  }
  return per_item ? sequence_input_column(ctx, n.name) : n.name;
}

std::string sequence_input_column(const BuildContext& ctx, const std::string& input) {
  return config::grouped_sequence_name(ctx.sequence_name, input);
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
      const bool parsed = parse_int64(id_part, &id);
      if (parsed && has_raw_ids(info)) return;  // zch / dynamicemb: raw ids, any int64 (as the column's)
      if (!parsed || id < 0 || id >= info.num_embeddings) {
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

void warn_once(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (warned.insert(message).second) log::warning("{}", message);
}

void warn_normalizer_not_applied(const std::string& path) {
  warn_once(path + ".normalizer is not applied with data_config.fg_mode FG_NONE or FG_BUCKETIZE (the column "
                   "already holds feature-generation output, normalized); use fg_mode FG_NORMAL to normalize raw "
                   "values");
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

EncodedIds encoded_ids_spec(const FeatureInfo* info, const std::string& field_path, const std::string& multival_sep,
                            const std::string& sequence_delim, const std::optional<std::string>& default_value,
                            const std::string& table_size_source, const std::string& table_size_field) {
  EncodedIds spec;
  spec.info = info;
  spec.field_path = field_path;
  spec.multival_sep = multival_sep;
  spec.sequence_delim = sequence_delim;
  spec.default_value = default_value ? &*default_value : nullptr;
  spec.table_size_source = table_size_source;
  spec.table_size_field = table_size_field;
  spec.raw_ids = has_raw_ids(*info);
  return spec;
}

int64_t encoded_id(const EncodedIds& spec, const CellValue& v, HashKind hash_kind, const ColumnCells& cells,
                   int64_t r) {
  if (spec.bucketize) return spec.bucketize(v, hash_kind, cells, r);
  const FeatureInfo& info = *spec.info;
  int64_t id = 0;
  if (!as_int64(v, &id)) {
    const std::string where = cells.where(r);
    throw DataError(fmt::format(
        "{}: '{}' is not an integer id for feature {}; with fg_mode FG_NONE the column holds "
        "bucketized ids separated by data_config.fg_encoded_multival_sep{} — check the data, "
        "the separator and data_config.fg_mode",
        where, display(v), info.name, info.is_sequence ? " (items by the sequence_delim)" : ""));
  }
  if (spec.raw_ids) return id;
  if (id < 0 || id >= info.num_embeddings) {
    throw DataError(fmt::format("{}: id {} out of range [0, {}) for feature {} ({}); {}", cells.where(r), id,
                                info.num_embeddings, info.name, spec.table_size_source,
                                range_hint(spec.table_size_field)));
  }
  return id;
}

void parse_encoded_ids(const EncodedIds& spec, const ColumnCells& cells, const ParseOutput& out) {
  const FeatureInfo& info = *spec.info;
  for (int64_t r = 0; r < out.rows; ++r) {
    int64_t len = 0;
    auto take = [&](const CellValue& v, bool from_default) {
      CellValue id_val = v;
      float w = 1.0f;
      if (info.weighted) {
        const bool plain_default = from_default && v.text.find(':') == std::string_view::npos;
        if (!plain_default && !weighted_key(v, &id_val, &w)) {
          throw DataError(fmt::format(
              "{}: '{}' of weighted feature {} is not id:weight; weighted features read 'id:weight' tokens "
              "(separated by data_config.fg_encoded_multival_sep) or map columns; fix the data",
              cells.where(r), display(v), info.name));
        }
      }
      out.sparse->push(encoded_id(spec, id_val, out.hash_kind, cells, r), w);
      ++len;
    };
    for_each_value_or_default(cells, r, spec.multival_sep, spec.default_value, take);
    out.sparse->lengths.push_back(len);
  }
}

void parse_own_encoded_ids(const EncodedIds& spec, const FeatureInfo& info, const data::RecordBatch& batch,
                           const ParseOutput& out) {
  const ColumnCells cells(batch, info.name, "feature " + info.name, info.is_sequence);
  if (info.is_sequence) {
    parse_encoded_id_sequence(spec, cells, out);
  } else {
    parse_encoded_ids(spec, cells, out);
  }
}

void parse_own_encoded(const Feature* dense, const EncodedIds& spec, const FeatureInfo& info,
                       const data::RecordBatch& batch, const ParseOutput& out) {
  if (dense != nullptr) {
    dense->parse(batch, out);
  } else {
    parse_own_encoded_ids(spec, info, batch, out);
  }
}

void parse_encoded_id_sequence(const EncodedIds& spec, const ColumnCells& cells, const ParseOutput& out) {
  const FeatureInfo& info = *spec.info;
  std::vector<int64_t> ids_per_item;
  for (int64_t r = 0; r < out.rows; ++r) {
    ids_per_item.clear();
    auto push_item = [&](const auto& for_each_id) {
      int64_t n = 0;
      for_each_id([&](const CellValue& v) {
        out.sparse->push(encoded_id(spec, v, out.hash_kind, cells, r), 1.0f);
        ++n;
      });
      if (info.value_dim == 1 && n != 1) {
        throw DataError(fmt::format(
            "{}: item {} of sequence feature {} has {} ids; with value_dim 1 each item is one id — set "
            "{}.value_dim: 0 for items with several ids, or fix the data",
            cells.where(r), ids_per_item.size(), info.name, n, spec.field_path));
      }
      ids_per_item.push_back(n);
    };
    if (!cells.empty(r)) {
      cells.for_each_item(r, spec.sequence_delim, spec.multival_sep, [&](const ColumnCells::Item& item) {
        push_item([&](auto&& fn) { item.for_each(fn); });
      });
    } else if (spec.default_value) {
      // TorchEasyRec: an empty history becomes one item holding the default ids.
      push_item([&](auto&& fn) {
        CellValue v;
        for_each_token(*spec.default_value, spec.multival_sep, [&](std::string_view tok) {
          v.text = tok;
          fn(v);
        });
      });
    }
    end_sequence_row(ids_per_item, info.value_dim == 1, out);
  }
}

void end_sequence_row(int64_t items, const ParseOutput& out) {
  out.sequence_lengths->push_back(items);
  out.sparse->lengths.push_back(items);
}

void end_sequence_row(const std::vector<int64_t>& ids_per_item, bool one_id_per_item, const ParseOutput& out) {
  const auto items = static_cast<int64_t>(ids_per_item.size());
  if (one_id_per_item) {
    end_sequence_row(items, out);
    return;
  }
  out.sequence_lengths->push_back(items);
  int64_t ids = 0;
  for (int64_t n : ids_per_item) ids += n;
  out.sparse->lengths.push_back(ids);
  out.item_lengths->insert(out.item_lengths->end(), ids_per_item.begin(), ids_per_item.end());
}

}  // namespace tzrec::feature
