// The bucketizer of a sparse combo_feature, lookup_feature, match_feature, custom_feature or
// bool_mask_feature in FG modes (docs/tzrec-compatibility.md §5.4): how the feature-generation
// output of a row (text or a number) becomes an embedding row.
//
//   zch                raw ids (§5.12): hash(text) % 2^63 - 1 (kZchHashBucketSize, zch_settings.h),
//                      remapped to zch.zch_size rows by the table's managed-collision module
//   hash_bucket_size   hash(text) % hash_bucket_size (hash.h: std::hash or farmhash)
//   num_buckets        the text as an integer in [0, num_buckets) (out of range: DataError)
//   vocab_list         effective list [default_value, "<OOV>", ...vocab_list] (as is with
//                      default_bucketize_value): a listed token maps to its last position,
//                      anything else to 1 (or default_bucketize_value)
//   vocab_dict         the dict's ids, plus default_value -> 0 when default_value is not empty and
//                      default_bucketize_value is not set; anything else -> 1 (or
//                      default_bucketize_value)
//   vocab_file         the file's ids as they are (vocab_file.h), anything else ->
//                      default_bucketize_value (required with vocab_file)
//   boundaries         a number -> the number of boundaries <= it, compared in float32 (a value
//                      equal to a boundary goes to the upper bucket, as raw_feature)
//
// dynamicemb: raw ids as zch, max_capacity rows (§5.13).
// The first one set is used, in TorchEasyRec's order for these types: zch > dynamicemb > hash_bucket_size >
// num_buckets > vocab_list > vocab_dict > vocab_file > boundaries; the table size follows the
// same order (zch_size, hash_bucket_size, num_buckets, len(effective vocab_list) +
// vocab_list_extra_rows, max(vocab_dict) + 1, the vocab file's rows, len(boundaries) + 1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "feature/column_cells.h"
#include "feature/hash.h"
#include "config/vocab_file.h"

namespace tzrec::feature {

class Bucketizer {
 public:
  enum class Kind { kNone, kHash, kNumBuckets, kVocab, kBoundaries };

  // The bucketizer fields a message sets (combo_feature has no num_buckets and no boundaries).
  struct Fields {
    bool has_zch = false;   // zch set: raw ids, zch_size rows (the rest of zch: zch_settings.h)
    uint64_t zch_size = 0;
    // dynamicemb set (and no zch): raw ids, max_capacity rows (dynamicemb_settings.h).
    bool has_dynamicemb = false;
    uint64_t dynamicemb_max_capacity = 0;
    bool has_hash_bucket_size = false;
    uint64_t hash_bucket_size = 0;
    bool has_num_buckets = false;
    uint64_t num_buckets = 0;
    std::vector<std::string> vocab_list;
    std::vector<std::pair<std::string, uint64_t>> vocab_dict;
    std::string vocab_file;  // the path to read (config::vocab_file_path()); empty: none
    bool has_default_bucketize_value = false;
    uint64_t default_bucketize_value = 0;
    std::vector<float> boundaries;
  };

  Bucketizer() = default;
  // `path`: the feature's config path and `feature_name` its name (messages); `default_value`: the
  // feature's effective default value (id 0 of the effective vocabularies). kind() is kNone when
  // no field is set (the caller decides whether that is an error or a dense feature).
  // `vocab_list_extra_rows`: rows the table has beyond the effective vocab_list (match_feature: 1,
  // as TorchEasyRec's MatchFeature.num_embeddings). ConfigError for sizes of 0, boundaries not
  // strictly increasing, and vocabulary ids outside the table.
  Bucketizer(const Fields& f, const std::string& default_value, const std::string& path,
             const std::string& feature_name, int64_t vocab_list_extra_rows = 0);

  Kind kind() const { return kind_; }
  // zch: the ids are raw 64-bit ids (a hash over [0, 2^63 - 1)), not rows of the table.
  bool raw_ids() const { return raw_ids_; }
  // A bucketizer of text values (zch, hash, num_buckets, vocabulary): the feature's output is discrete.
  bool is_text() const { return kind_ == Kind::kHash || kind_ == Kind::kNumBuckets || kind_ == Kind::kVocab; }
  int64_t num_embeddings() const { return num_embeddings_; }
  // "zch.zch_size 1000", "hash_bucket_size 1000", "vocab_list -> 5 rows", ... and the field, for
  // messages.
  const std::string& table_size_source() const { return table_size_source_; }
  const std::string& table_size_field() const { return table_size_field_; }

  // The id of text value `text` (is_text()); a num_buckets value that is not an integer in
  // [0, num_buckets) is a DataError at cells.where(r).
  int64_t text_id(std::string_view text, HashKind hash_kind, const ColumnCells& cells, int64_t r) const;
  // The bucket of number x (kBoundaries).
  int64_t bucket(double x) const;
  // The id of one value as feature generation hands it to the bucketizer (FG_BUCKETIZE columns): a
  // text bucketizer takes the text (a number as its decimal text), boundaries the number. DataError
  // at cells.where(r) for a value that is not a number (boundaries) or not an id (num_buckets).
  int64_t value_id(const CellValue& v, HashKind hash_kind, const ColumnCells& cells, int64_t r) const;

  // The bucketizer fields of a feature message with zch, hash_bucket_size, num_buckets,
  // vocab_list, vocab_dict, vocab_file / asset_dir, default_bucketize_value and boundaries.
  template <typename Msg>
  static Fields fields_of(const Msg& c) {
    Fields f = text_fields_of(c);
    f.boundaries.assign(c.boundaries().begin(), c.boundaries().end());
    return f;
  }
  // The same without boundaries (messages that have none: bool_mask_feature).
  template <typename Msg>
  static Fields text_fields_of(const Msg& c) {
    Fields f = hash_vocab_fields_of(c);
    f.has_num_buckets = c.has_num_buckets();
    f.num_buckets = c.num_buckets();
    return f;
  }
  // The same without num_buckets (combo_feature).
  template <typename Msg>
  static Fields hash_vocab_fields_of(const Msg& c) {
    Fields f;
    f.has_zch = c.has_zch();
    f.zch_size = c.zch().zch_size();
    f.has_dynamicemb = c.has_dynamicemb();
    f.dynamicemb_max_capacity = c.dynamicemb().max_capacity();
    f.has_hash_bucket_size = c.has_hash_bucket_size();
    f.hash_bucket_size = c.hash_bucket_size();
    f.vocab_list.assign(c.vocab_list().begin(), c.vocab_list().end());
    f.vocab_dict.assign(c.vocab_dict().begin(), c.vocab_dict().end());
    if (c.has_vocab_file()) f.vocab_file = config::vocab_file_path(c.vocab_file(), c.has_asset_dir(), c.asset_dir());
    f.has_default_bucketize_value = c.has_default_bucketize_value();
    f.default_bucketize_value = c.default_bucketize_value();
    return f;
  }

 private:
  Kind kind_ = Kind::kNone;
  bool raw_ids_ = false;
  int64_t num_embeddings_ = 0;
  std::string table_size_source_;
  std::string table_size_field_;
  std::string feature_name_;
  Modulus hash_buckets_;  // hash_bucket_size (zch / dynamicemb: the int64 range)
  std::unordered_map<std::string, int64_t> vocab_;  // token -> id
  int64_t oov_id_ = 1;
  std::vector<float> boundaries_;
};

}  // namespace tzrec::feature
