#include "feature/bucketizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/error.h"
#include "feature/boundaries.h"
#include "feature/feature_support.h"
#include "feature/text_values.h"
#include "feature/dynamicemb_settings.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {

Bucketizer::Bucketizer(const Fields& f, const std::string& default_value, const std::string& path,
                       const std::string& feature_name, int64_t vocab_list_extra_rows)
    : feature_name_(feature_name) {
  if (f.has_zch) {
    // docs/tzrec-compatibility.md §5.12: zch takes precedence over every other size; the values are
    // hashed over the whole int64 range (TorchEasyRec's fg.json hash_bucket_size 2^63 - 1).
    kind_ = Kind::kHash;
    raw_ids_ = true;
    hash_buckets_ = Modulus(kZchHashBucketSize);
    num_embeddings_ = zch_table_size(f.zch_size, path + ".zch");
    table_size_field_ = "zch.zch_size";
  } else if (f.has_dynamicemb) {
    // §5.13: raw ids as with zch, max_capacity rows.
    kind_ = Kind::kHash;
    raw_ids_ = true;
    hash_buckets_ = Modulus(kZchHashBucketSize);
    num_embeddings_ = dynamicemb_table_size(f.dynamicemb_max_capacity, path + ".dynamicemb");
    table_size_field_ = "dynamicemb.max_capacity";
  } else if (f.has_hash_bucket_size) {
    if (f.hash_bucket_size == 0) throw ConfigError(path + ".hash_bucket_size: must be > 0");
    kind_ = Kind::kHash;
    hash_buckets_ = Modulus(f.hash_bucket_size);
    num_embeddings_ = static_cast<int64_t>(f.hash_bucket_size);
    table_size_field_ = "hash_bucket_size";
  } else if (f.has_num_buckets) {
    if (f.num_buckets == 0) throw ConfigError(path + ".num_buckets: must be > 0");
    kind_ = Kind::kNumBuckets;
    num_embeddings_ = static_cast<int64_t>(f.num_buckets);
    table_size_field_ = "num_buckets";
  } else if (!f.vocab_list.empty()) {
    // Without default_bucketize_value: [default_value, "<OOV>"] + vocab_list; a token listed twice
    // keeps its later position (a default value found in vocab_list maps to its list position).
    std::vector<std::string> list;
    if (!f.has_default_bucketize_value) list = {default_value, "<OOV>"};
    list.insert(list.end(), f.vocab_list.begin(), f.vocab_list.end());
    for (size_t i = 0; i < list.size(); ++i) vocab_[list[i]] = static_cast<int64_t>(i);
    kind_ = Kind::kVocab;
    num_embeddings_ = static_cast<int64_t>(list.size()) + vocab_list_extra_rows;
    table_size_field_ = "vocab_list";
  } else if (!f.vocab_dict.empty()) {
    int64_t max_id = 0;
    for (const auto& [k, v] : f.vocab_dict) {
      vocab_[k] = static_cast<int64_t>(v);
      max_id = std::max(max_id, static_cast<int64_t>(v));
    }
    // TorchEasyRec: a non-empty default value maps to 0 (overriding its dict entry).
    if (!f.has_default_bucketize_value && !default_value.empty()) vocab_[default_value] = 0;
    kind_ = Kind::kVocab;
    num_embeddings_ = max_id + 1;
    table_size_field_ = "vocab_dict";
  } else if (!f.vocab_file.empty()) {
    const config::VocabFile file = config::load_feature_vocab_file(f.vocab_file, path, f.has_default_bucketize_value);
    for (const auto& [token, id] : file.tokens) vocab_[token] = id;
    kind_ = Kind::kVocab;
    num_embeddings_ = file.num_embeddings;
    table_size_field_ = "vocab_file";
  } else if (!f.boundaries.empty()) {
    boundaries_ = f.boundaries;
    check_boundaries(boundaries_, path + ".boundaries");
    kind_ = Kind::kBoundaries;
    num_embeddings_ = static_cast<int64_t>(boundaries_.size()) + 1;
    table_size_field_ = "boundaries";
  } else {
    return;
  }
  table_size_source_ =
      kind_ == Kind::kVocab || kind_ == Kind::kBoundaries
          ? fmt::format("{} -> {} rows", table_size_field_, num_embeddings_)
          : fmt::format("{} {}", table_size_field_, num_embeddings_);
  if (kind_ != Kind::kVocab) return;
  oov_id_ = f.has_default_bucketize_value ? static_cast<int64_t>(f.default_bucketize_value) : 1;
  for (const auto& [token, id] : vocab_) {
    if (id < 0 || id >= num_embeddings_) {
      throw ConfigError(fmt::format("{}: vocab id {} of '{}' is outside the table [0, {}) sized by {}", path, id, token,
                                    num_embeddings_, table_size_source_));
    }
  }
  if (oov_id_ >= num_embeddings_) {
    throw ConfigError(fmt::format("{}.default_bucketize_value: {} is outside the table [0, {}) sized by {}", path,
                                  oov_id_, num_embeddings_, table_size_source_));
  }
}

int64_t Bucketizer::text_id(std::string_view text, HashKind hash_kind, const ColumnCells& cells, int64_t r) const {
  switch (kind_) {
    case Kind::kHash:
      return hash_bucket(text, hash_buckets_, hash_kind);
    case Kind::kVocab: {
      auto it = vocab_.find(std::string(text));
      return it == vocab_.end() ? oov_id_ : it->second;
    }
    case Kind::kNumBuckets: {
      int64_t id = 0;
      CellValue v;
      v.text = text;
      if (!parse_int64(text, &id)) {
        throw DataError(
            fmt::format("{}: value '{}' of feature {} is not an integer; num_buckets needs integer ids in [0, {}) (use "
                        "hash_bucket_size or a vocab for other values)",
                        cells.where(r), display(v), feature_name_, num_embeddings_));
      }
      if (id < 0 || id >= num_embeddings_) {
        throw DataError(fmt::format("{}: value {} out of range [0, {}) for feature {} ({}); {}", cells.where(r), id,
                                    num_embeddings_, feature_name_, table_size_source_, range_hint(table_size_field_)));
      }
      return id;
    }
    default:
      break;
  }
  return 0;
}

int64_t Bucketizer::value_id(const CellValue& v, HashKind hash_kind, const ColumnCells& cells, int64_t r) const {
  if (is_text()) {
    if (v.kind == CellValue::Kind::kText) return text_id(v.text, hash_kind, cells, r);
    std::string buf;
    return text_id(as_text(v, &buf), hash_kind, cells, r);
  }
  double x = 0;
  if (!as_double(v, &x)) {
    throw DataError(fmt::format("{}: value '{}' of feature {} is not a number; its boundaries bucketize numbers (with "
                                "fg_mode FG_BUCKETIZE the column holds feature-generation output before "
                                "bucketization) — fix the data",
                                cells.where(r), display(v), feature_name_));
  }
  return bucket(x);
}

int64_t Bucketizer::bucket(double x) const {
  // Compare in float32 like the float-typed FG value and the float boundaries.
  const auto v = static_cast<float>(x);
  return boundary_bucket(boundaries_, v);
}

}  // namespace tzrec::feature
