#include "feature/combine_feature.h"

#include <cmath>
#include <map>

#include "feature/dense_embedding_settings.h"
#include "feature/fg_json_entry.h"
#include "feature/text_values.h"

namespace tzrec::feature {

CombineFeature::CombineFeature(const protos::CombineFeature& c, const std::string& path, const std::string& type,
                               const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // use_mask: refused when the config is loaded (config/field_registry.cc).
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  Bucketizer::Fields f;
  f.has_num_buckets = c.has_num_buckets();
  f.num_buckets = c.num_buckets();
  f.boundaries.assign(c.boundaries().begin(), c.boundaries().end());
  bucketizer_ = Bucketizer(f, c.default_value(), path, info_.name);
  info_.is_sparse = bucketizer_.kind() != Bucketizer::Kind::kNone;
  if (info_.is_sparse) {
    fill_table_info(c, path, &info_);
    info_.num_embeddings = bucketizer_.num_embeddings();
    info_.value_dim = sequence ? 1 : 0;  // one id per item; a row's id is pooled
  } else {
    info_.embedding_dim = c.embedding_dim();
    info_.value_dim = 1;
  }
  fill_dense_embedding(c, 1, SequenceDenseEmbedding::kIgnored, path, &info_);
  for (const auto& [key, value] : c.value_map()) value_map_.emplace(key, static_cast<double>(value));

  values_.feature = info_.name;
  values_.field_path = path;
  values_.width = 1;
  if (reads_encoded_column(fg_mode_)) {
    if (c.has_normalizer()) warn_normalizer_not_applied(path);  // the data is FG output
    own_encoded_.init(c, bucketizer_, 1, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }
  // The default value: its value_map entry, else a number ("" is 0).
  values_.default_value = c.default_value().empty() ? "0" : c.default_value();
  if (const auto it = value_map_.find(values_.default_value); it != value_map_.end()) {
    values_.default_value = fmt::format("{}", it->second);
  }
  double x = 0;
  if (!parse_double(values_.default_value, &x)) {
    throw ConfigError(fmt::format(
        "{}.default_value: '{}' is neither a key of value_map nor a number; rows without a value take it", path,
        c.default_value()));
  }
  if (c.combiner().empty()) {
    throw ConfigError(path + ".combiner: must not be empty; a combine_feature combines its values by sum, mean, min, "
                             "max or count");
  }
  values_.combiner = parse_combiner(c.combiner(), path + ".combiner");
  if (c.has_normalizer()) values_.normalizer = Normalizer::parse(c.normalizer(), path + ".normalizer");
  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  inputs_.push_back(make_fg_input(c.expression(), path + ".expression", ctx, sequence, c.sequence_fields(),
                                  c.separator(), /*kv_map=*/false, /*single_input=*/true));
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
}

double CombineFeature::value_of(const MultiInputCells& cells, int64_t r, int64_t k, LookupValues* values,
                                std::string* buf) const {
  values->begin();
  cells.for_each_value(0, r, k, [&](const CellValue& v) {
    if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
    if (value_map_.empty()) {
      double d = 0;
      if (!as_double(v, &d)) {
        throw DataError(fmt::format(
            "{}: value '{}' of combine_feature {} is not a number; without value_map the values are numbers — fix "
            "the data or set {}.value_map",
            cells.where(0, r), display(v), info_.name, field_path_));
      }
      CellValue x;
      x.kind = CellValue::Kind::kFloat;
      x.d = d;
      values->add_number(x, cells.cells(0), r);
      return;
    }
    const auto it = value_map_.find(std::string(as_text(v, buf)));
    if (it == value_map_.end()) return;  // not in value_map: no value
    CellValue x;
    x.kind = CellValue::Kind::kFloat;
    x.d = it->second;
    values->add_number(x, cells.cells(0), r);
  });
  float result = 0;
  values->finish(HashKind::kStdHash, cells.cells(0), r, &result);  // no text bucketizer: no hashing
  return result;
}

int64_t CombineFeature::id_of(double x, const MultiInputCells& cells, int64_t r, HashKind hash_kind) const {
  if (bucketizer_.kind() == Bucketizer::Kind::kBoundaries) return bucketizer_.bucket(x);
  // num_buckets: the number as an integer (truncated, as a cast to int64), then the range check of
  // bucketizer.h.
  if (!std::isfinite(x) || std::fabs(x) >= 9.2e18) {
    throw DataError(fmt::format("{}: combine_feature {} gives {}, not an id of num_buckets; fix the data",
                                cells.where(0, r), info_.name, x));
  }
  const std::string text = std::to_string(static_cast<int64_t>(std::trunc(x)));
  return bucketizer_.text_id(text, hash_kind, cells.cells(0), r);
}

void CombineFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  if (cells.cells(0).is_map()) {
    throw DataError(fmt::format("column {} is a {}; combine_feature {} reads values (text or a list)",
                                cells.cells(0).name(), cells.cells(0).describe_type(), info_.name));
  }
  LookupValues values(&values_);
  std::string buf;
  if (!info_.is_sequence) {
    for (int64_t r = 0; r < out.rows; ++r) {
      const double x = value_of(cells, r, 0, &values, &buf);
      if (info_.is_sparse) {
        out.sparse->push(id_of(x, cells, r, out.hash_kind), 1.0f);
        out.sparse->lengths.push_back(1);
      } else {
        out.dense[r * out.dense_stride + out.dense_offset] = static_cast<float>(x);
      }
    }
    return;
  }
  std::vector<int64_t> ids_per_item;
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t items = cells.begin_row(r);
    ids_per_item.clear();
    for (int64_t k = 0; k < items; ++k) {
      const double x = value_of(cells, r, k, &values, &buf);
      if (info_.is_sparse) {
        out.sparse->push(id_of(x, cells, r, out.hash_kind), 1.0f);
        ids_per_item.push_back(1);
      } else {
        out.sequence_dense->push_back(static_cast<float>(x));
      }
    }
    if (info_.is_sparse) {
      end_sequence_row(ids_per_item, true, out);
    } else {
      out.sequence_lengths->push_back(items);
    }
  }
}

std::vector<nlohmann::ordered_json> CombineFeature::fg_json_entries() const {
  const protos::CombineFeature& c = config_;
  nlohmann::ordered_json e;
  e["feature_type"] = "combine_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = fg_default_value(c.default_value(), info_.is_sequence);
  e["expression"] = c.expression();
  e["value_type"] = "float";
  e["need_prefix"] = false;
  std::string combiner = c.combiner();
  for (char& ch : combiner) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  e["combiner"] = combiner;
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_normalizer()) e["normalizer"] = c.normalizer();
  if (!c.value_map().empty()) {
    // Sorted by key: TorchEasyRec iterates the protobuf map, whose order is not defined.
    const std::map<std::string, float> sorted(c.value_map().begin(), c.value_map().end());
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [key, value] : sorted) m[key] = fg_float(value, fmt::format("{}.value_map[{}]", field_path_, key));
    e["value_map"] = std::move(m);
  }
  if (c.has_num_buckets()) {
    e["num_buckets"] = c.num_buckets();
    e["value_type"] = "int64";
  } else if (c.boundaries_size() > 0) {
    e["boundaries"] = fg_float_list(c.boundaries(), field_path_ + ".boundaries");
  }
  if (info_.is_sparse) e["value_dim"] = 1;
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
