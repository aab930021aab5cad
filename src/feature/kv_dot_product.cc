#include "feature/kv_dot_product.h"

#include <algorithm>
#include <unordered_map>

#include "feature/dense_embedding_settings.h"
#include "feature/fg_json_entry.h"
#include "feature/text_values.h"

namespace tzrec::feature {
namespace {

// The entries of input i at row r (item k): keys[j] with values[j], in order. Text keys are views
// of the batch; keys of typed values are text kept in *texts.
void read_kv_entries(const MultiInputCells& cells, size_t i, int64_t r, int64_t k, const std::string& feature,
                     std::vector<std::string_view>* keys, std::vector<double>* values, ValueTexts* texts) {
  keys->clear();
  values->clear();
  texts->clear();
  auto bad_value = [&](const CellValue& v) {
    return DataError(fmt::format(
        "{}: entry '{}' of kv_dot_product {} has a value that is not a number; entries are 'key:value' (or a key "
        "alone, value 1) — fix the data",
        cells.where(i, r), display(v), feature));
  };
  const ColumnCells& c = cells.cells(i);
  if (!cells.input(i).sequence && c.is_map()) {
    if (c.empty(r)) return;
    c.for_each_entry(r, [&](const CellValue& key, const CellValue& value) {
      double d = 0;
      if (!as_double(value, &d)) throw bad_value(value);
      texts->append(key, keys);
      values->push_back(d);
    });
    return;
  }
  cells.for_each_value(i, r, k, [&](const CellValue& v) {
    if (v.kind != CellValue::Kind::kText) {  // a typed number: a key of value 1
      texts->append(v, keys);
      values->push_back(1.0);
      return;
    }
    if (v.text.empty()) return;
    const auto colon = v.text.rfind(':');
    if (colon == std::string_view::npos) {
      texts->append(v, keys);
      values->push_back(1.0);
      return;
    }
    double d = 0;
    if (!parse_double(v.text.substr(colon + 1), &d)) throw bad_value(v);
    keys->emplace_back(v.text.data(), colon);
    values->push_back(d);
  });
}

// Query entries (keys[0], vals[0]) · document entries (keys[1], vals[1]): each query key counts
// once, with its last entry, times the document's last value of that key (none: nothing); summed
// in the query's order. Short rows are compared pairwise; long ones through the two maps.
double kv_dot(const std::vector<std::string_view>* keys, const std::vector<double>* vals,
              std::unordered_map<std::string_view, double>* document, std::unordered_map<std::string_view, size_t>* last) {
  const std::vector<std::string_view>& q = keys[0];
  const std::vector<std::string_view>& d = keys[1];
  double dot = 0;
  if (q.size() * (q.size() + d.size()) <= 4096) {
    for (size_t j = 0; j < q.size(); ++j) {
      if (std::any_of(q.begin() + static_cast<std::ptrdiff_t>(j) + 1, q.end(),
                      [&](std::string_view later) { return equal_short_text(later, q[j]); })) {
        continue;
      }
      for (size_t l = d.size(); l-- > 0;) {
        if (equal_short_text(d[l], q[j])) {
          dot += vals[0][j] * vals[1][l];
          break;
        }
      }
    }
    return dot;
  }
  document->clear();
  for (size_t j = 0; j < d.size(); ++j) (*document)[d[j]] = vals[1][j];
  last->clear();
  for (size_t j = 0; j < q.size(); ++j) (*last)[q[j]] = j;
  for (size_t j = 0; j < q.size(); ++j) {
    if ((*last)[q[j]] != j) continue;  // a later entry of the same key counts
    const auto it = document->find(q[j]);
    if (it != document->end()) dot += vals[0][j] * it->second;
  }
  return dot;
}

}  // namespace

KvDotProduct::KvDotProduct(const protos::KvDotProduct& c, const std::string& path, const std::string& type,
                           const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // kv_delimiter, use_mask: refused when the config is loaded (config/field_registry.cc).
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  // TorchEasyRec's test: an empty default value gives 0 (bucket 0 of [0.05, 0.15, 1.0]).
  const std::string default_value = c.default_value().empty() ? "0" : c.default_value();
  values_ = single_number_values(c, default_value, path, sequence, &info_);
  check_numeric_default(values_);
  if (reads_encoded_column(fg_mode_)) {
    own_encoded_.init(c, values_.bucketizer, 1, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }
  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  inputs_.push_back(make_fg_input(c.query(), path + ".query", ctx, sequence, c.sequence_fields(), c.separator(),
                                  /*kv_map=*/true));
  inputs_.push_back(make_fg_input(c.document(), path + ".document", ctx, sequence, c.sequence_fields(),
                                  c.separator(), /*kv_map=*/true));
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
}

void KvDotProduct::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  std::vector<std::string_view> keys[2];
  std::vector<double> vals[2];
  ValueTexts texts[2];
  std::unordered_map<std::string_view, double> document;
  std::unordered_map<std::string_view, size_t> last;
  emit_lookup_rows(
      info_, values_, &cells, false, out, [](int64_t, int64_t) {},
      [&](int64_t r, int64_t k, LookupValues* values) {
        for (size_t i = 0; i < 2; ++i) read_kv_entries(cells, i, r, k, info_.name, &keys[i], &vals[i], &texts[i]);
        if (keys[0].empty() || keys[1].empty()) return;  // no entry: the default value
        CellValue x;
        x.kind = CellValue::Kind::kFloat;
        x.d = kv_dot(keys, vals, &document, &last);
        values->add_number(x, cells.cells(0), r);
      });
}

std::vector<nlohmann::ordered_json> KvDotProduct::fg_json_entries() const {
  const protos::KvDotProduct& c = config_;
  nlohmann::ordered_json e;
  e["feature_type"] = "kv_dot_product";
  e["feature_name"] = c.feature_name();
  e["default_value"] = fg_default_value(c.default_value(), info_.is_sequence);
  e["query"] = c.query();
  e["document"] = c.document();
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_kv_delimiter()) e["kv_delimiter"] = fg_float(c.kv_delimiter(), field_path_ + ".kv_delimiter");
  if (c.boundaries_size() > 0) e["boundaries"] = fg_float_list(c.boundaries(), field_path_ + ".boundaries");
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
