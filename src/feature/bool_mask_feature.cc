#include "feature/bool_mask_feature.h"

#include <cctype>

#include "feature/fg_json_entry.h"
#include "feature/text_values.h"
#include "feature/dynamicemb_settings.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {
namespace {

// A mask entry: true / false in any case, or a number (non-zero is true); false when it is neither.
bool parse_mask_entry(const CellValue& v, bool* on) {
  switch (v.kind) {
    case CellValue::Kind::kInt:
      *on = v.i != 0;
      return true;
    case CellValue::Kind::kFloat:
      *on = v.d != 0;
      return true;
    case CellValue::Kind::kText:
      break;
  }
  const std::string_view t = trim_spaces(v.text);
  auto equals = [&](std::string_view word) {
    if (t.size() != word.size()) return false;
    for (size_t i = 0; i < t.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(t[i])) != word[i]) return false;
    }
    return true;
  };
  if (equals("true")) {
    *on = true;
    return true;
  }
  if (equals("false")) {
    *on = false;
    return true;
  }
  double d = 0;
  if (!parse_double(t, &d)) return false;
  *on = d != 0;
  return true;
}

}  // namespace

struct BoolMaskFeature::Scratch {
  std::vector<CellValue> values;
  std::vector<bool> mask;
  std::vector<int64_t> ids;
  std::string buf;
};

BoolMaskFeature::BoolMaskFeature(const protos::BoolMaskFeature& c, const std::string& path, const std::string& type,
                                 const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // dynamicemb, use_mask: refused when the config is loaded (config/field_registry.cc).
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  default_value_ = sequence && c.default_value().empty() ? "0" : c.default_value();
  const Bucketizer::Fields f = Bucketizer::text_fields_of(c);
  const bool vocab = !f.vocab_list.empty() || !f.vocab_dict.empty() || !f.vocab_file.empty();
  if (!c.has_zch() && !c.has_dynamicemb() && !c.has_hash_bucket_size() && c.has_num_buckets() && vocab) {
    throw ConfigError(fmt::format(
        "{}.num_buckets: set either num_buckets or a vocabulary (vocab_list, vocab_dict, vocab_file) for feature {}, "
        "not both",
        path, info_.name));
  }
  bucketizer_ = Bucketizer(f, default_value_, path, info_.name);
  if (bucketizer_.kind() == Bucketizer::Kind::kNone) {
    throw ConfigError(fmt::format(
        "{}: set one of hash_bucket_size, num_buckets, vocab_list, vocab_dict or vocab_file for feature {}", path,
        info_.name));
  }
  info_.is_sparse = true;
  fill_table_info(c, path, &info_);
  info_.num_embeddings = bucketizer_.num_embeddings();
  fill_zch_info_of(c, path, &info_);  // raw ids (FG_NONE reads them as they are)
  fill_dynamicemb_info_of(c, path, &info_);
  if (!sequence) {
    info_.value_dim = 0;  // the row's ids are pooled
    max_ids_ = c.value_dim();
  } else {
    max_ids_ = c.has_value_dim() ? c.value_dim() : 1;
    if (max_ids_ > 1) {
      throw ConfigError(fmt::format(
          "{}.value_dim: {} for a sequence bool_mask_feature; use 1 (one id per item) or 0 (every id of an item)", path,
          max_ids_));
    }
    info_.value_dim = max_ids_;
  }
  check_fg_value_type(c.has_fg_value_type(), c.fg_value_type(), bucketizer_, path);
  check_text_default(default_value_, bucketizer_, path);
  if (reads_encoded_column(fg_mode_)) {
    own_encoded_.init(c, bucketizer_, 0, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }
  if (c.expression_size() != 2) {
    throw ConfigError(fmt::format(
        "{}.expression: has {} inputs; a bool_mask_feature reads two, [values, mask], e.g. [\"user:click_items\", "
        "\"item:is_valid\"]",
        path, c.expression_size()));
  }
  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  separator_ = c.separator();
  for (int i = 0; i < 2; ++i) {
    inputs_.push_back(make_fg_input(c.expression(i), fmt::format("{}.expression[{}]", path, i), ctx, sequence,
                                    c.sequence_fields(), c.separator()));
  }
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
}

void BoolMaskFeature::ids_of(const MultiInputCells& cells, int64_t r, int64_t k, HashKind hash_kind,
                             Scratch* s) const {
  s->ids.clear();
  s->values.clear();
  s->mask.clear();
  cells.for_each_value(0, r, k, [&](const CellValue& v) { s->values.push_back(v); });
  if (!s->values.empty()) mask_values(cells, r, k, hash_kind, s);
  if (!s->ids.empty() || default_value_.empty()) return;
  // Nothing kept (no value, or the mask drops them all): the default value, unmasked.
  for_each_token(default_value_, separator_, [&](std::string_view tok) {
    if (!tok.empty()) s->ids.push_back(bucketizer_.text_id(tok, hash_kind, cells.cells(0), r));
  });
}

void BoolMaskFeature::mask_values(const MultiInputCells& cells, int64_t r, int64_t k, HashKind hash_kind,
                                  Scratch* s) const {
  cells.for_each_value(1, r, k, [&](const CellValue& v) {
    bool on = false;
    if (!parse_mask_entry(v, &on)) {
      throw DataError(fmt::format(
          "{}: mask entry '{}' of bool_mask_feature {} is not a boolean; use true / false or 1 / 0 — fix the data",
          cells.where(1, r), display(v), info_.name));
    }
    s->mask.push_back(on);
  });
  if (s->mask.size() != s->values.size()) {
    throw DataError(fmt::format(
        "{}: bool_mask_feature {} has {} values in column {} but {} mask entries in column {}; the mask needs one "
        "entry per value — fix the data",
        cells.where(0, r), info_.name, s->values.size(), cells.cells(0).name(), s->mask.size(),
        cells.cells(1).name()));
  }
  for (size_t j = 0; j < s->values.size(); ++j) {
    const CellValue& v = s->values[j];
    if (!s->mask[j] || (v.kind == CellValue::Kind::kText && v.text.empty())) continue;
    s->ids.push_back(bucketizer_.text_id(as_text(v, &s->buf), hash_kind, cells.cells(0), r));
  }
}

void BoolMaskFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (cells.cells(i).is_map()) {
      throw DataError(fmt::format("column {} is a {}; bool_mask_feature {} reads values and a mask (text or lists)",
                                  cells.cells(i).name(), cells.cells(i).describe_type(), info_.name));
    }
  }
  Scratch s;
  auto push = [&]() {
    size_t n = s.ids.size();
    if (max_ids_ > 0 && n > static_cast<size_t>(max_ids_)) n = static_cast<size_t>(max_ids_);
    for (size_t j = 0; j < n; ++j) out.sparse->push(s.ids[j], 1.0f);
    return static_cast<int64_t>(n);
  };
  if (!info_.is_sequence) {
    for (int64_t r = 0; r < out.rows; ++r) {
      ids_of(cells, r, 0, out.hash_kind, &s);
      out.sparse->lengths.push_back(push());
    }
    return;
  }
  std::vector<int64_t> ids_per_item;
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t items = cells.begin_row(r);
    ids_per_item.clear();
    for (int64_t k = 0; k < items; ++k) {
      ids_of(cells, r, k, out.hash_kind, &s);
      ids_per_item.push_back(push());
    }
    end_sequence_row(ids_per_item, max_ids_ == 1, out);
  }
}

std::vector<nlohmann::ordered_json> BoolMaskFeature::fg_json() const {
  const protos::BoolMaskFeature& c = config_;
  nlohmann::ordered_json e;
  e["feature_type"] = "bool_mask_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = default_value_;
  nlohmann::ordered_json expression = nlohmann::ordered_json::array();
  for (const std::string& x : c.expression()) expression.push_back(x);
  e["expression"] = std::move(expression);
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  // TorchEasyRec's order (as IdFeature): zch (hash_bucket_size 2^63 - 1, no value_type) >
  // hash_bucket_size > vocabularies > num_buckets (dynamicemb is refused when the config is loaded).
  if (c.has_zch() || c.has_dynamicemb()) {
    e["hash_bucket_size"] = kZchHashBucketSize;
  } else if (c.has_hash_bucket_size()) {
    e["hash_bucket_size"] = c.hash_bucket_size();
  } else if (!add_fg_vocab(c, default_value_, &e) && c.has_num_buckets()) {
    e["num_buckets"] = c.num_buckets();
  }
  e["value_dim"] = c.has_value_dim() ? c.value_dim() : 0u;
  if (c.has_fg_value_type()) e["value_type"] = c.fg_value_type();
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  if (info_.is_sequence) {
    if (!info_.sequence_name.empty()) {
      add_fg_sequence_fields(c.sequence_fields(), info_, &e);
    } else {
      e["sequence_delim"] = info_.sequence_delim;
      e["sequence_length"] = info_.sequence_length;
    }
  }
  return {e};
}

}  // namespace tzrec::feature
