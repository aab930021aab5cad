#include "feature/overlap_feature.h"

#include <algorithm>
#include <unordered_set>

#include "feature/dense_embedding_settings.h"
#include "feature/fg_json_entry.h"

namespace tzrec::feature {
namespace {

// The methods of OverlapFeature.method (docs/tzrec-compatibility.md §5.10); pyfg's proximity_*
// methods are not implemented here.
OverlapFeature::Method parse_overlap_method(const std::string& m, const std::string& field) {
  if (m == "query_common_ratio") return OverlapFeature::Method::kQueryCommonRatio;
  if (m == "title_common_ratio") return OverlapFeature::Method::kTitleCommonRatio;
  if (m == "is_contain") return OverlapFeature::Method::kIsContain;
  if (m == "is_equal") return OverlapFeature::Method::kIsEqual;
  if (m == "index_of") return OverlapFeature::Method::kIndexOf;
  if (m.rfind("proximity_", 0) == 0) throw NotSupportedError(fmt::format("{} '{}'", field, m));
  constexpr const char* kMethods = "query_common_ratio, title_common_ratio, is_contain, is_equal or index_of";
  if (m.empty()) throw ConfigError(fmt::format("{}: must be set ({})", field, kMethods));
  throw ConfigError(fmt::format("{}: '{}' is not an overlap method; use {}", field, m, kMethods));
}

// Terms of `a` found in `b`, counted with repetition (short rows compared pairwise, long ones
// through a set of b's terms).
size_t common_terms(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  if (a.size() * b.size() <= 1024) {
    return static_cast<size_t>(std::count_if(a.begin(), a.end(), [&](std::string_view t) {
      return std::any_of(b.begin(), b.end(), [&](std::string_view u) { return equal_short_text(u, t); });
    }));
  }
  std::unordered_set<std::string_view> in_b(b.begin(), b.end());
  return static_cast<size_t>(std::count_if(a.begin(), a.end(), [&](std::string_view t) { return in_b.count(t) > 0; }));
}

}  // namespace

OverlapFeature::OverlapFeature(const protos::OverlapFeature& c, const std::string& path, const std::string& type,
                               const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // use_mask: refused when the config is loaded (config/field_registry.cc).
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  // Every row has a value (0 for empty inputs): the default value is not used.
  values_ = single_number_values(c, "0", path, sequence, &info_);
  if (reads_encoded_column(fg_mode_)) {
    if (!c.normalizer().empty()) warn_normalizer_not_applied(path);  // the data is FG output
    own_encoded_.init(c, values_.bucketizer, 1, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }

  method_ = parse_overlap_method(c.method(), path + ".method");
  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  inputs_.push_back(make_fg_input(c.query(), path + ".query", ctx, sequence, c.sequence_fields(), c.separator()));
  inputs_.push_back(make_fg_input(c.title(), path + ".title", ctx, sequence, c.sequence_fields(), c.separator()));
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
  if (!c.normalizer().empty()) values_.normalizer = Normalizer::parse(c.normalizer(), path + ".normalizer");
}

double OverlapFeature::overlap(Method method, const std::vector<std::string_view>& query,
                               const std::vector<std::string_view>& title) {
  if (query.empty() || title.empty()) return 0.0;
  switch (method) {
    case Method::kQueryCommonRatio:
      return static_cast<double>(common_terms(query, title)) / static_cast<double>(query.size());
    case Method::kTitleCommonRatio:
      return static_cast<double>(common_terms(title, query)) / static_cast<double>(title.size());
    case Method::kIsContain:
      return std::search(title.begin(), title.end(), query.begin(), query.end(), equal_short_text) != title.end()
                 ? 1.0
                 : 0.0;
    case Method::kIsEqual:
      return std::equal(query.begin(), query.end(), title.begin(), title.end(), equal_short_text) ? 1.0 : 0.0;
    case Method::kIndexOf: {
      const auto at = std::search(title.begin(), title.end(), query.begin(), query.end(), equal_short_text);
      return at == title.end() ? -1.0 : static_cast<double>(at - title.begin());
    }
  }
  return 0.0;
}

void OverlapFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (cells.cells(i).is_map()) {
      throw DataError(fmt::format("column {} is a {}; overlap feature {} reads terms (text or a list)",
                                  cells.cells(i).name(), cells.cells(i).describe_type(), info_.name));
    }
  }
  std::vector<std::string_view> terms[2];  // views of the batch's text, or of numbers' text in texts[i]
  ValueTexts texts[2];
  emit_lookup_rows(
      info_, values_, &cells, false, out, [](int64_t, int64_t) {},
      [&](int64_t r, int64_t k, LookupValues* values) {
        for (size_t i = 0; i < 2; ++i) {
          terms[i].clear();
          texts[i].clear();
          cells.for_each_value(i, r, k, [&](const CellValue& v) {
            if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
            texts[i].append(v, &terms[i]);
          });
        }
        CellValue x;
        x.kind = CellValue::Kind::kFloat;
        x.d = overlap(method_, terms[0], terms[1]);
        values->add_number(x, cells.cells(0), r);
      });
}

std::vector<nlohmann::ordered_json> OverlapFeature::fg_json_entries() const {
  const protos::OverlapFeature& c = config_;
  nlohmann::ordered_json e;
  e["feature_type"] = "overlap_feature";
  e["feature_name"] = c.feature_name();
  e["query"] = c.query();
  e["title"] = c.title();
  e["method"] = c.method();
  e["value_type"] = "float";
  e["separator"] = c.separator();  // TorchEasyRec writes it whatever its value
  if (!c.normalizer().empty()) e["normalizer"] = c.normalizer();
  if (c.boundaries_size() > 0) e["boundaries"] = fg_float_list(c.boundaries(), field_path_ + ".boundaries");
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
