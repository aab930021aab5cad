#include "feature/combo_feature.h"

#include "feature/fg_json_entry.h"
#include "feature/dynamicemb_settings.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {

struct ComboFeature::Scratch {
  std::vector<std::vector<CellValue>> values;  // per input
  std::vector<size_t> at;                      // the current combination
  std::string text, buf;
};

ComboFeature::ComboFeature(const protos::ComboFeature& c, const std::string& path, const std::string& type,
                           const BuildContext& ctx, bool sequence)
    : Feature(c.feature_name(), path, type, ctx), config_(c) {
  // dynamicemb, use_mask: refused when the config is loaded (config/field_registry.cc).
  info_.is_sparse = true;
  fill_table_info(c, path, &info_);
  // TorchEasyRec's IdFeature.value_dim (ComboFeature derives from it): the configured value, else
  // 1 in sequences and 0 outside.
  value_dim_ = c.has_value_dim() ? c.value_dim() : (sequence ? 1 : 0);
  if (sequence) {
    sequence_delim_ = sequence_settings(c, ctx, ctx.sequence_name.empty(), &info_);
    if (sequence_delim_.empty()) throw ConfigError(path + ".sequence_delim: must not be empty");
    if (value_dim_ > 1) {
      throw ConfigError(
          fmt::format("{}.value_dim: {} for a sequence combo feature; use 1 (one id per item) or 0 "
                      "(any number of ids per item)",
                      path, value_dim_));
    }
    info_.value_dim = value_dim_;
  }
  default_value_ = sequence && c.default_value().empty() ? "0" : c.default_value();
  bucketizer_ = Bucketizer(Bucketizer::hash_vocab_fields_of(c), default_value_, path, info_.name);
  if (bucketizer_.kind() == Bucketizer::Kind::kNone) {
    throw ConfigError(fmt::format(
        "{}: set one of hash_bucket_size, vocab_list, vocab_dict or vocab_file for feature {}", path,
        info_.name));
  }
  info_.num_embeddings = bucketizer_.num_embeddings();
  fill_zch_info_of(c, path, &info_);  // raw ids (FG_NONE reads them as they are)
  fill_dynamicemb_info_of(c, path, &info_);
  check_sequence_fields_need_sequence(sequence, c.sequence_fields(), path);

  if (reads_encoded_column(fg_mode_)) {
    fg_encoded_default_ =
        fg_encoded_default(c.has_fg_encoded_default_value(), c.fg_encoded_default_value(), info_, path, multival_sep_);
    encoded_ids_ = encoded_ids_spec(&info_, path, multival_sep_, sequence_delim_, fg_encoded_default_,
                                    bucketizer_.table_size_source(), bucketizer_.table_size_field());
    if (fg_mode_ == FgMode::kBucketize) {  // the crossed texts before bucketization
      encoded_ids_.bucketize = [this](const CellValue& v, HashKind hash_kind, const ColumnCells& cells, int64_t r) {
        return bucketizer_.value_id(v, hash_kind, cells, r);
      };
    }
    return;
  }
  if (c.expression_size() < 2) {
    throw ConfigError(
        fmt::format("{}.expression: a combo feature crosses two or more inputs, got {} (one input is "
                    "an id_feature)",
                    path, c.expression_size()));
  }
  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  for (int i = 0; i < c.expression_size(); ++i) {
    inputs_.push_back(make_fg_input(c.expression(i), fmt::format("{}.expression[{}]", path, i), ctx, sequence,
                                    c.sequence_fields(), c.separator()));
  }
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
}

std::vector<std::string> ComboFeature::input_columns() const {
  return multi_input_columns(fg_mode_, info_.name, inputs_);
}

void ComboFeature::parse(const data::RecordBatch& batch, const ParseOutput& out) const {
  if (!reads_encoded_column(fg_mode_)) {
    parse_fg(batch, out);
    return;
  }
  parse_own_encoded_ids(encoded_ids_, info_, batch, out);
}

int64_t ComboFeature::push_ids(const MultiInputCells& cells, int64_t r, int64_t k, int64_t limit,
                               const ParseOutput& out, Scratch* s) const {
  const size_t n = inputs_.size();
  bool any_empty = false;
  for (size_t i = 0; i < n; ++i) {
    auto& vals = s->values[i];
    vals.clear();
    cells.for_each_value(i, r, k, [&](const CellValue& v) {
      if (v.kind != CellValue::Kind::kText || !v.text.empty()) vals.push_back(v);
    });
    any_empty = any_empty || vals.empty();
  }
  // The column named in messages about a value (num_buckets does not apply: vocab or hash).
  const ColumnCells& where = cells.cells(0);
  if (any_empty) {
    if (default_value_.empty()) return 0;
    out.sparse->push(bucketizer_.text_id(default_value_, out.hash_kind, where, r), 1.0f);
    return 1;
  }
  int64_t pushed = 0;
  s->at.assign(n, 0);
  while (limit <= 0 || pushed < limit) {
    s->text.clear();
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) s->text.push_back('_');
      s->text.append(as_text(s->values[i][s->at[i]], &s->buf));
    }
    out.sparse->push(bucketizer_.text_id(s->text, out.hash_kind, where, r), 1.0f);
    ++pushed;
    // Next combination: the last input varies fastest.
    size_t i = n;
    while (i > 0 && ++s->at[i - 1] == s->values[i - 1].size()) {
      s->at[i - 1] = 0;
      --i;
    }
    if (i == 0) break;
  }
  return pushed;
}

void ComboFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  Scratch s;
  s.values.resize(inputs_.size());
  if (!info_.is_sequence) {
    for (int64_t r = 0; r < out.rows; ++r) out.sparse->lengths.push_back(push_ids(cells, r, 0, value_dim_, out, &s));
    return;
  }
  std::vector<int64_t> ids_per_item;
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t items = cells.begin_row(r);
    ids_per_item.clear();
    for (int64_t k = 0; k < items; ++k) ids_per_item.push_back(push_ids(cells, r, k, value_dim_, out, &s));
    end_sequence_row(ids_per_item, value_dim_ == 1, out);
  }
}

// TorchEasyRec's ComboFeature._fg_json (docs/tzrec-compatibility.md §5.3): value_dim is the
// configured field (0 unless set, also in sequences); bucketizer zch (hash_bucket_size 2^63 - 1) >
// hash_bucket_size > vocab_list > vocab_dict > vocab_file (dynamicemb is refused when the config is
// loaded).
std::vector<nlohmann::ordered_json> ComboFeature::fg_json_entries() const {
  const protos::ComboFeature& c = config_;
  const std::string default_value = fg_default_value(c.default_value(), info_.is_sequence);
  nlohmann::ordered_json e;
  e["feature_type"] = "combo_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = default_value;
  nlohmann::ordered_json expressions = nlohmann::ordered_json::array();
  for (const std::string& x : c.expression()) expressions.push_back(x);
  e["expression"] = std::move(expressions);
  e["value_type"] = "string";
  e["need_prefix"] = false;
  e["value_dim"] = c.value_dim();
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_zch() || c.has_dynamicemb()) {
    e["hash_bucket_size"] = kZchHashBucketSize;
  } else if (c.has_hash_bucket_size()) {
    e["hash_bucket_size"] = c.hash_bucket_size();
  } else {
    add_fg_vocab(c, default_value, &e);
  }
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
