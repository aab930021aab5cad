#include "feature/lookup_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "feature/text_values.h"

namespace tzrec::feature {

Combiner parse_combiner(const std::string& text, const std::string& field_path) {
  std::string c = text;
  for (auto& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (c.empty()) return Combiner::kNone;
  if (c == "sum") return Combiner::kSum;
  if (c == "mean" || c == "avg") return Combiner::kMean;
  if (c == "min") return Combiner::kMin;
  if (c == "max") return Combiner::kMax;
  if (c == "count") return Combiner::kCount;
  if (c == "gap_min" || c == "gap_max") throw NotSupportedError(fmt::format("{} '{}'", field_path, text));
  throw ConfigError(
      fmt::format("{}: '{}' is not a combiner (\"\", sum, mean, avg, min, max, count)", field_path, text));
}

void check_numeric_default(const LookupValuesSpec& spec) {
  double x = 0;
  if (spec.default_value.empty()) {
    if (spec.bucketizer.kind() == Bucketizer::Kind::kBoundaries && !spec.multi_dim) return;
    throw ConfigError(
        fmt::format("{}.default_value: must be a number for feature {}: rows without a hit take it (dense output{})",
                    spec.field_path, spec.feature, spec.multi_dim ? ", or value_dim > 1" : ""));
  }
  if (!parse_double(spec.default_value, &x)) {
    throw ConfigError(fmt::format("{}.default_value: '{}' is not a number; feature {} has numeric values",
                                  spec.field_path, spec.default_value, spec.feature));
  }
}

void check_fg_value_type(bool has, const std::string& value, const Bucketizer& b, const std::string& path) {
  if (!has) return;
  const bool ok = b.is_text() ? (value == "string" ||
                                 (b.kind() == Bucketizer::Kind::kNumBuckets && (value == "int64" || value == "int32")))
                              : value == "float" || value == "double";
  if (!ok) throw NotSupportedError(fmt::format("{}.fg_value_type '{}'", path, value));
}

void check_text_default(const std::string& default_value, const Bucketizer& b, const std::string& path) {
  if (b.kind() != Bucketizer::Kind::kNumBuckets || default_value.empty()) return;
  int64_t id = 0;
  if (!parse_int64(default_value, &id) || id < 0 || id >= b.num_embeddings()) {
    throw ConfigError(fmt::format("{}.default_value: '{}' is not an id in [0, {}) (num_buckets)", path, default_value,
                                  b.num_embeddings()));
  }
}

void LookupValues::add_number(const CellValue& v, const ColumnCells& cells, int64_t r) {
  ++hits_;
  if (spec_->combiner == Combiner::kCount) return;  // counts hits, whatever their values
  auto take = [&](const CellValue& x) {
    double d = 0;
    if (!as_double(x, &d)) {
      throw DataError(fmt::format(
          "{}: map value '{}' of feature {} is not a number; numeric lookups need numbers (set a "
          "hash_bucket_size, num_buckets or vocab for text values){}",
          cells.where(r), display(x), spec_->feature,
          spec_->multi_dim ? fmt::format(", {} of them separated by '{}'", spec_->width, spec_->value_separator)
                           : std::string()));
    }
    numbers_.push_back(d);
  };
  if (!spec_->multi_dim || v.kind != CellValue::Kind::kText) {
    take(v);
    return;
  }
  for_each_token(v.text, spec_->value_separator, [&](std::string_view tok) {
    CellValue t;
    t.text = tok;
    take(t);
  });
}

void LookupValues::finish(HashKind hash_kind, const ColumnCells& cells, int64_t r, float* dense) {
  const LookupValuesSpec& s = *spec_;
  if (s.bucketizer.is_text()) {
    if (hits_ == 0 && !s.default_value.empty())
      ids_.push_back(s.bucketizer.text_id(s.default_value, hash_kind, cells, r));
    return;
  }
  if (hits_ == 0) {
    double d = 0;
    if (s.default_value.empty() || !parse_double(s.default_value, &d)) {
      numbers_.clear();  // boundaries without a default: no id (checked at construction otherwise)
    } else {
      numbers_.assign(static_cast<size_t>(s.multi_dim ? s.width : 1), d);
    }
  } else if (s.combiner != Combiner::kNone && !s.multi_dim) {
    double v = 0;
    switch (s.combiner) {
      case Combiner::kCount:
        v = static_cast<double>(hits_);
        break;
      case Combiner::kMin:
        v = *std::min_element(numbers_.begin(), numbers_.end());
        break;
      case Combiner::kMax:
        v = *std::max_element(numbers_.begin(), numbers_.end());
        break;
      default:
        for (double x : numbers_) v += x;
        if (s.combiner == Combiner::kMean) v /= static_cast<double>(numbers_.size());
        break;
    }
    numbers_.assign(1, v);
  }
  if (s.normalizer) {
    for (double& x : numbers_) x = s.normalizer->apply(x);
  }
  if (s.bucketizer.kind() == Bucketizer::Kind::kBoundaries) {
    if (s.multi_dim && static_cast<int64_t>(numbers_.size()) != s.width) {
      throw DataError(fmt::format("{}: feature {} found {} values, expected value_dim {}; fix the data or {}.value_dim",
                                  cells.where(r), s.feature, numbers_.size(), s.width, s.field_path));
    }
    for (double x : numbers_) ids_.push_back(s.bucketizer.bucket(x));
    return;
  }
  if (static_cast<int64_t>(numbers_.size()) != s.width) {
    throw DataError(fmt::format(
        "{}: feature {} found {} values, expected value_dim {} (a dense output has value_dim numbers{}); fix the "
        "data or {}",
        cells.where(r), s.feature, numbers_.size(), s.width, s.multi_dim ? "" : "; several hits need a combiner",
        s.field_path));
  }
  for (size_t k = 0; k < numbers_.size(); ++k) dense[k] = static_cast<float>(numbers_[k]);
}

}  // namespace tzrec::feature
