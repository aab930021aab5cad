#include "feature/id_feature.h"

#include <algorithm>
#include <map>

#include "config/vocab_file.h"
#include "feature/feature_support.h"
#include "feature/fg_json_entry.h"
#include "feature/multi_input.h"
#include "feature/dynamicemb_settings.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {

IdFeature::IdFeature(const protos::IdFeature& c, const std::string& path, const std::string& type,
                     const BuildContext& ctx, bool sequence)
    : Feature(c.feature_name(), path, type, ctx), config_(c) {
  info_.is_sparse = true;
  info_.weighted = c.weighted();
  // zch and dynamicemb: raw 64-bit ids (zch_settings.h, dynamicemb_settings.h).
  const bool zch = c.has_zch();
  const bool dynamic = !zch && c.has_dynamicemb();
  if (c.has_fg_value_type() && c.fg_value_type() != "string") {
    throw NotSupportedError(path + ".fg_value_type '" + c.fg_value_type() + "'");
  }
  fill_table_info(c, path, &info_);
  if (sequence) {
    sequence_delim_ = sequence_settings(c, ctx, ctx.sequence_name.empty(), &info_);
    if (sequence_delim_.empty()) throw ConfigError(path + ".sequence_delim: must not be empty");
    // TorchEasyRec: one id per item unless value_dim says otherwise (0: any number of ids).
    info_.value_dim = c.has_value_dim() ? c.value_dim() : 1;
    if (info_.value_dim > 1) {
      throw ConfigError(fmt::format("{}.value_dim: {} for a sequence id feature; use 1 (one id per item) or 0 (any "
                                    "number of ids per item)",
                                    path, info_.value_dim));
    }
    if (info_.weighted) throw NotSupportedError(path + ".weighted (weighted sequence features)");
  }
  check_single_input_sequence_fields(c.expression(), path + ".expression", sequence, c.sequence_fields(), path);

  // Effective vocabularies (docs/tzrec-compatibility.md §5.4): without default_bucketize_value, id 0
  // is the default value and id 1 is OOV. Sequences use "0" for an empty default_value.
  const std::string default_value = sequence && c.default_value().empty() ? "0" : c.default_value();
  std::vector<std::string> vocab_list;
  if (c.vocab_list_size() > 0) {
    if (c.has_default_bucketize_value()) {
      vocab_list.assign(c.vocab_list().begin(), c.vocab_list().end());
    } else {
      vocab_list = {default_value, "<OOV>"};
      vocab_list.insert(vocab_list.end(), c.vocab_list().begin(), c.vocab_list().end());
    }
  }
  std::map<std::string, int64_t> vocab_dict(c.vocab_dict().begin(), c.vocab_dict().end());
  if (!vocab_dict.empty() && !c.has_default_bucketize_value()) vocab_dict[default_value] = 0;

  std::optional<config::VocabFile> vocab_file;
  if (!zch && !dynamic && !c.has_hash_bucket_size() && vocab_list.empty() && vocab_dict.empty() && c.has_vocab_file()) {
    vocab_file = config::load_feature_vocab_file(config::vocab_file_path(c.vocab_file(), c.has_asset_dir(), c.asset_dir()), path,
                                         c.has_default_bucketize_value());
  }

  // num_embeddings precedence: zch > dynamicemb > hash_bucket_size > num_buckets > vocab_list >
  // vocab_dict > vocab_file.
  if (zch) {
    fill_zch_info(c.zch(), path + ".zch", &info_);
    table_size_field_ = "zch.zch_size";
  } else if (dynamic) {
    fill_dynamicemb_info(c.dynamicemb(), path + ".dynamicemb", &info_);
    table_size_field_ = "dynamicemb.max_capacity";
  } else if (c.has_hash_bucket_size()) {
    if (c.hash_bucket_size() == 0) throw ConfigError(path + ".hash_bucket_size: must be > 0");
    info_.num_embeddings = static_cast<int64_t>(c.hash_bucket_size());
    table_size_field_ = "hash_bucket_size";
  } else if (c.has_num_buckets()) {
    if (c.num_buckets() == 0) throw ConfigError(path + ".num_buckets: must be > 0");
    info_.num_embeddings = static_cast<int64_t>(c.num_buckets());
    table_size_field_ = "num_buckets";
  } else if (!vocab_list.empty()) {
    info_.num_embeddings = static_cast<int64_t>(vocab_list.size());
    table_size_field_ = "vocab_list";
  } else if (!vocab_dict.empty()) {
    int64_t max_id = 0;
    for (const auto& [k, v] : vocab_dict) max_id = std::max(max_id, v);
    info_.num_embeddings = max_id + 1;
    table_size_field_ = "vocab_dict";
  } else if (vocab_file) {
    info_.num_embeddings = vocab_file->num_embeddings;
    table_size_field_ = "vocab_file";
  } else {
    throw ConfigError(fmt::format(
        "{}: set one of hash_bucket_size, num_buckets, vocab_list, vocab_dict or vocab_file for feature {}", path,
        info_.name));
  }
  table_size_source_ = table_size_field_ + " " + std::to_string(info_.num_embeddings);

  if (reads_encoded_column(fg_mode_)) {
    input_column_ = info_.name;
    fg_encoded_default_ =
        fg_encoded_default(c.has_fg_encoded_default_value(), c.fg_encoded_default_value(), info_, path, multival_sep_);
    if (fg_mode_ == FgMode::kNone) return;  // FG_BUCKETIZE: the values go through the bucketizer below
  } else {
    const FgInputName input = parse_fg_input(c.expression(), path + ".expression");
    input_side_ = input.side;
    input_column_ = fg_input_column(input, ctx, sequence, path + ".expression");
    default_value_ = default_value;
    separator_ = c.separator();
    if (separator_.empty()) throw ConfigError(path + ".separator: must not be empty");
  }
  // Bucketizer precedence of TorchEasyRec's fg_json: zch and dynamicemb (a hash over the whole
  // int64 range: raw ids) > hash > vocab_list > vocab_dict > vocab_file > num_buckets.
  if (zch || dynamic) {
    bucketizer_ = Bucketizer::kHash;
    hash_buckets_ = Modulus(kZchHashBucketSize);
  } else if (c.has_hash_bucket_size()) {
    bucketizer_ = Bucketizer::kHash;
    hash_buckets_ = Modulus(c.hash_bucket_size());
  } else if (!vocab_list.empty() || !vocab_dict.empty() || vocab_file) {
    bucketizer_ = Bucketizer::kVocab;
    // A token listed twice keeps its later position (the default value found in vocab_list maps
    // to its list position).
    for (size_t i = 0; i < vocab_list.size(); ++i) vocab_[vocab_list[i]] = static_cast<int64_t>(i);
    if (vocab_list.empty() && !vocab_dict.empty()) {
      for (const auto& [k, v] : vocab_dict) vocab_[k] = v;
    } else if (vocab_file) {
      for (const auto& [k, v] : vocab_file->tokens) vocab_[k] = v;
    }
    oov_id_ = c.has_default_bucketize_value() ? static_cast<int64_t>(c.default_bucketize_value()) : 1;
    check_vocab_ids();
  } else {
    bucketizer_ = Bucketizer::kNumBuckets;
  }
}

void IdFeature::check_vocab_ids() const {
  for (const auto& [token, id] : vocab_) {
    if (id < 0 || id >= info_.num_embeddings) {
      throw ConfigError(fmt::format("{}: vocab id {} of '{}' is outside the table [0, {}) sized by {}", field_path_, id,
                                    token, info_.num_embeddings, table_size_source_));
    }
  }
  if (oov_id_ < 0 || oov_id_ >= info_.num_embeddings) {
    throw ConfigError(fmt::format("{}.default_bucketize_value: {} is outside the table [0, {}) sized by {}",
                                  field_path_, oov_id_, info_.num_embeddings, table_size_source_));
  }
}

void IdFeature::throw_out_of_range(const std::string& where, int64_t id, const char* what) const {
  throw DataError(fmt::format("{}: {} {} out of range [0, {}) for feature {} ({}); {}", where, what, id,
                              info_.num_embeddings, info_.name, table_size_source_, range_hint(table_size_field_)));
}

template <IdFeature::Bucketizer B>
int64_t IdFeature::fg_id_by(const CellValue& key, HashKind hash_kind, const ColumnCells& cells,
                            int64_t r, std::string* buf) const {
  if constexpr (B == Bucketizer::kHash) {
    NumberText number{};  // an integer id's decimal text, without allocating
    const std::string_view text = as_text(key, &number);
    // A number's text is written at the start of `number`, whose bytes (zeroed) may all be read.
    const char* readable_end =
        key.kind == CellValue::Kind::kText ? text.data() + text.size() : number.bytes + sizeof(number.bytes);
    return hash_bucket_in(text, readable_end, hash_buckets_, hash_kind);
  } else if constexpr (B == Bucketizer::kVocab) {
    const std::string_view k = as_text(key, buf);
    if (k.data() != buf->data()) buf->assign(k.data(), k.size());
    auto it = vocab_.find(*buf);
    return it == vocab_.end() ? oov_id_ : it->second;
  } else {
    int64_t id = 0;
    if (!as_int64(key, &id)) {
      throw DataError(fmt::format(
          "{}: value '{}' of feature {} is not an integer; num_buckets needs integer ids in "
          "[0, {}) (use hash_bucket_size or a vocab for other values)",
          cells.where(r), display(key), info_.name, info_.num_embeddings));
    }
    if (id < 0 || id >= info_.num_embeddings) throw_out_of_range(cells.where(r), id, "value");
    return id;
  }
}

int64_t IdFeature::fg_id(const CellValue& key, HashKind hash_kind, const ColumnCells& cells, int64_t r,
                         std::string* buf) const {
  switch (bucketizer_) {
    case Bucketizer::kHash:
      return fg_id_by<Bucketizer::kHash>(key, hash_kind, cells, r, buf);
    case Bucketizer::kVocab:
      return fg_id_by<Bucketizer::kVocab>(key, hash_kind, cells, r, buf);
    case Bucketizer::kNumBuckets:
      return fg_id_by<Bucketizer::kNumBuckets>(key, hash_kind, cells, r, buf);
  }
  return 0;
}

void IdFeature::parse(const data::RecordBatch& batch, const ParseOutput& out) const {
  const ColumnCells cells(batch, input_column_, "feature " + info_.name, info_.is_sequence);
  if (cells.is_map() && !info_.weighted) {
    throw DataError(fmt::format(
        "column {} is a {} (ids with weights) but feature {} is not weighted; set {}.weighted: true or use a "
        "list column",
        cells.name(), cells.describe_type(), info_.name, field_path_));
  }
  if (reads_encoded_column(fg_mode_)) {
    EncodedIds spec = encoded_ids_spec(&info_, field_path_, multival_sep_, sequence_delim_, fg_encoded_default_,
                                       table_size_source_, table_size_field_);
    if (fg_mode_ == FgMode::kBucketize) {
      spec.bucketize = [this](const CellValue& v, HashKind hash_kind, const ColumnCells& c, int64_t r) {
        std::string buf;
        return fg_id(v, hash_kind, c, r, &buf);
      };
    }
    if (info_.is_sequence) {
      parse_encoded_id_sequence(spec, cells, out);
    } else {
      parse_encoded_ids(spec, cells, out);
    }
  } else if (info_.is_sequence) {
    parse_fg_sequence(cells, out);
  } else {
    parse_fg(cells, out);
  }
}

void IdFeature::parse_fg(const ColumnCells& cells, const ParseOutput& out) const {
  std::string key_buf;
  for (int64_t r = 0; r < out.rows; ++r) {
    int64_t len = 0;
    for_each_value_or_default(cells, r, separator_, &default_value_, [&](const CellValue& v, bool) {
      if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
      if (!info_.weighted) {
        out.sparse->push(fg_id(v, out.hash_kind, cells, r, &key_buf), 1.0f);
        ++len;
        return;
      }
      CellValue key;
      float w = 1.0f;
      if (!weighted_key(v, &key, &w)) {
        throw DataError(fmt::format(
            "{}: '{}' of weighted feature {} is not key:weight; weighted features read 'key:weight' tokens or map "
            "columns; fix the data",
            cells.where(r), display(v), info_.name));
      }
      if (key.kind == CellValue::Kind::kText && key.text.empty()) return;
      out.sparse->push(fg_id(key, out.hash_kind, cells, r, &key_buf), w);
      ++len;
    });
    out.sparse->lengths.push_back(len);
  }
}

void IdFeature::parse_fg_sequence(const ColumnCells& cells, const ParseOutput& out) const {
  switch (bucketizer_) {
    case Bucketizer::kHash:
      return parse_fg_sequence_by<Bucketizer::kHash>(cells, out);
    case Bucketizer::kVocab:
      return parse_fg_sequence_by<Bucketizer::kVocab>(cells, out);
    case Bucketizer::kNumBuckets:
      return parse_fg_sequence_by<Bucketizer::kNumBuckets>(cells, out);
  }
}

template <IdFeature::Bucketizer B>
void IdFeature::parse_fg_sequence_by(const ColumnCells& cells, const ParseOutput& out) const {
  std::string key_buf;
  std::vector<int64_t> ids_per_item;
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : INT64_MAX;
  const bool first_value_only = info_.value_dim == 1;
  int64_t r = 0;
  int64_t n = 0;  // ids of the current item
  auto push_value = [&](const CellValue& v) {
    if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
    if (first_value_only && n == 1) return;  // value_dim 1 keeps the item's first value
    out.sparse->push(fg_id_by<B>(v, out.hash_kind, cells, r, &key_buf), 1.0f);
    ++n;
  };
  // Ends the current item; one without a value takes the default value's.
  auto end_item = [&] {
    if (n == 0) {
      CellValue d;
      for_each_token(default_value_, separator_, [&](std::string_view tok) {
        d.text = tok;
        push_value(d);
      });
    }
    ids_per_item.push_back(n);
    n = 0;
  };
  // Hashed text cells with one id per item (the usual sequence): items are hashed straight from
  // the cell, with no per-item bookkeeping, unless a cell holds `separator_` (several values per
  // item) or the default value does not give exactly one id.
  int64_t default_id = -1;
  if constexpr (B == Bucketizer::kHash) {
    if (first_value_only && sequence_delim_.size() == 1 && !separator_.empty() && cells.is_scalar() &&
        cells.leaf_kind() == CellValue::Kind::kText) {
      int64_t defaults = 0;
      for_each_token(default_value_, separator_, [&](std::string_view tok) {
        if (!tok.empty() && defaults++ == 0) default_id = hash_bucket(tok, hash_buckets_, out.hash_kind);
      });
      if (defaults == 0) default_id = -1;
    }
  }
  for (; r < out.rows; ++r) {
    if constexpr (B == Bucketizer::kHash) {
      if (default_id >= 0) {
        const std::string_view text = cells.empty(r) ? std::string_view() : cells.scalar(r).text;
        if (push_hashed_items(text, max_items, default_id, out)) continue;
      }
    }
    ids_per_item.clear();
    if (cells.empty(r)) {
      end_item();
    } else {
      cells.for_each_item(r, sequence_delim_, separator_, [&](const ColumnCells::Item& item) {
        if (static_cast<int64_t>(ids_per_item.size()) >= max_items) return;
        item.for_each(push_value);
        end_item();
      });
    }
    end_sequence_row(ids_per_item, first_value_only, out);
  }
}

bool IdFeature::push_hashed_items(std::string_view text, int64_t max_items, int64_t default_id,
                                  const ParseOutput& out) const {
  std::vector<int64_t>& values = out.sparse->values;
  const size_t begin = values.size();
  // Items are at most the delimiters + 1.
  const auto room = static_cast<size_t>(std::min<int64_t>(max_items, static_cast<int64_t>(text.size()) + 1));
  reserve_room(&values, begin + room);
  const HashKind kind = out.hash_kind;
  const char* text_end = text.data() + text.size();  // a token's hash may read up to the cell's end
  // A cell holding the value separator (a separator byte: several values per item, or part of a
  // longer separator) takes the general path; its bytes are searched for it with the delimiters.
  bool separator_seen = false;
  const size_t items = for_each_leading_token(
      text, sequence_delim_[0], room,
      [&](size_t, std::string_view token) {
        values.push_back(token.empty() ? default_id : hash_bucket_in(token, text_end, hash_buckets_, kind));
        return true;
      },
      separator_[0], &separator_seen);
  if (separator_seen) {
    values.resize(begin);
    return false;
  }
  // (Sequence id features are never weighted: the parser gives their ids weight 1 afterwards.)
  end_sequence_row(static_cast<int64_t>(items), out);
  return true;
}

// TorchEasyRec's IdFeature._fg_json (docs/tzrec-compatibility.md §5.3). The bucketizer, in
// TorchEasyRec's order: zch or dynamicemb (hash_bucket_size 2^63 - 1) > hash_bucket_size >
// vocab_list > vocab_dict > vocab_file > num_buckets.
std::vector<nlohmann::ordered_json> IdFeature::fg_json_entries() const {
  const protos::IdFeature& c = config_;
  const std::string default_value = fg_default_value(c.default_value(), info_.is_sequence);
  nlohmann::ordered_json e;
  e["feature_type"] = "id_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = default_value;
  e["expression"] = c.expression();
  e["value_type"] = "string";
  e["need_prefix"] = false;
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_zch() || c.has_dynamicemb()) {
    e["hash_bucket_size"] = kZchHashBucketSize;
  } else if (c.has_hash_bucket_size()) {
    e["hash_bucket_size"] = c.hash_bucket_size();
  } else if (!add_fg_vocab(c, default_value, &e) && c.has_num_buckets()) {
    e["num_buckets"] = c.num_buckets();
  }
  if (c.weighted()) e["weighted"] = true;
  // TorchEasyRec's IdFeature.value_dim: the configured value, else 1 in sequences and 0 outside.
  e["value_dim"] = c.has_value_dim() ? c.value_dim() : (info_.is_sequence ? 1u : 0u);
  if (c.has_fg_value_type()) e["value_type"] = c.fg_value_type();
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
