#include "feature/lookup_feature.h"

#include <algorithm>
#include <cctype>

#include "feature/dense_embedding_settings.h"
#include "feature/fg_json_entry.h"
#include "feature/kv_map.h"
#include "feature/dynamicemb_settings.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {

LookupFeature::LookupFeature(const protos::LookupFeature& c, const std::string& path, const std::string& type,
                             const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // dynamicemb, use_mask: refused when the config is loaded (config/field_registry.cc).
  const int64_t value_dim = c.has_value_dim() ? c.value_dim() : 1;
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  // TorchEasyRec: sequences have no empty default value ("0" instead).
  const std::string default_value = sequence && c.default_value().empty() ? "0" : c.default_value();
  Bucketizer bucketizer(Bucketizer::fields_of(c), default_value, path, info_.name);
  const bool multi_dim = value_dim > 1;
  if (multi_dim && bucketizer.is_text()) {
    throw ConfigError(
        fmt::format("{}.value_dim: {} reads each hit as a vector of numbers (dense, or bucketized by boundaries), as "
                    "TorchEasyRec; {} cannot bucketize it — use value_dim 0 or 1",
                    path, value_dim, bucketizer.table_size_field()));
  }
  info_.is_sparse = bucketizer.kind() != Bucketizer::Kind::kNone;
  const bool numeric = !bucketizer.is_text();
  // Each hit is a value of its own (no combiner): discrete values, need_discrete, value vectors,
  // and combiner "".
  const bool each_hit = !numeric || c.need_discrete() || multi_dim || c.combiner().empty();
  if (info_.is_sparse) {
    fill_table_info(c, path, &info_);
    info_.num_embeddings = bucketizer.num_embeddings();
    fill_zch_info_of(c, path, &info_);  // raw ids (FG_NONE reads them as they are)
    fill_dynamicemb_info_of(c, path, &info_);
    if (!sequence) {
      info_.value_dim = 0;  // the row's ids are pooled
    } else if (multi_dim) {
      info_.value_dim = value_dim;  // value_dim bucket ids per item
    } else {
      // One id per item when the hits are combined into one number; otherwise value_dim 1 keeps
      // an item's first id and 0 all of them.
      info_.value_dim = each_hit ? value_dim : 1;
    }
  } else {
    info_.embedding_dim = c.embedding_dim();
    info_.value_dim = std::max<int64_t>(value_dim, 1);
  }
  fill_dense_embedding(c, value_dim, SequenceDenseEmbedding::kRefused, path, &info_);
  if (c.need_key() && numeric) {
    throw NotSupportedError(path +
                            ".need_key with numeric values (boundaries or a dense output; the key prefix "
                            "makes a text value)");
  }
  need_key_ = c.need_key();
  check_fg_value_type(c.has_fg_value_type(), c.fg_value_type(), bucketizer, path);

  values_.feature = info_.name;
  values_.field_path = path;
  values_.default_value = default_value;
  values_.width = multi_dim ? value_dim : info_.value_dim;
  values_.multi_dim = multi_dim;
  values_.value_separator = c.value_separator();
  if (reads_encoded_column(fg_mode_)) {
    if (c.has_normalizer()) warn_normalizer_not_applied(path);  // the data is FG output
    own_encoded_.init(c, bucketizer, info_.value_dim, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }

  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  if (multi_dim && c.value_separator().empty()) throw ConfigError(path + ".value_separator: must not be empty");
  inputs_.push_back(make_fg_input(c.map(), path + ".map", ctx, sequence, c.sequence_fields(),
                                  std::string(kLookupEntrySep), /*kv_map=*/true));
  // TorchEasyRec writes no separator into the fg.json of a value_dim > 1 lookup: its keys are
  // always split by "\x1d".
  inputs_.push_back(make_fg_input(c.key(), path + ".key", ctx, sequence, c.sequence_fields(),
                                  multi_dim ? std::string("\x1d") : c.separator()));
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
  if (c.has_normalizer()) {
    if (!numeric) {
      throw NotSupportedError(fmt::format("{}.normalizer with a {} bucketizer (the values are discrete)", path,
                                          bucketizer.table_size_field()));
    }
    values_.normalizer = Normalizer::parse(c.normalizer(), path + ".normalizer");
  }
  values_.combiner = each_hit ? Combiner::kNone : parse_combiner(c.combiner(), path + ".combiner");
  values_.bucketizer = bucketizer;
  if (numeric) {
    check_numeric_default(values_);
  } else {
    check_text_default(default_value, bucketizer, path);
  }
}

void LookupFeature::collect(const MultiInputCells& cells, int64_t r, int64_t k, const std::vector<KvEntry>& entries,
                            HashKind hash_kind, LookupValues* values, std::string* buf_a, std::string* buf_b) const {
  const bool text = values_.bucketizer.is_text();
  std::string composed;
  cells.for_each_value(1, r, k, [&](const CellValue& key) {
    if (key.kind == CellValue::Kind::kText && key.text.empty()) return;
    // The last entry of a repeated key wins (a map keeps the last value written).
    const MapKey wanted(key);
    const KvEntry* hit = nullptr;
    for (const KvEntry& e : entries) {
      if (wanted.matches(e.key)) hit = &e;
    }
    if (hit == nullptr) return;
    if (!text) {
      values->add_number(hit->value, cells.cells(0), r);
      return;
    }
    composed.clear();
    if (need_key_) {
      composed.append(as_text(key, buf_a));
      composed.push_back('_');
    }
    composed.append(as_text(hit->value, buf_b));
    values->add_text(composed, hash_kind, cells.cells(0), r);
  });
}

void LookupFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  std::vector<KvEntry> entries;
  std::string buf_a, buf_b;
  emit_lookup_rows(
      info_, values_, &cells, inputs_[0].sequence, out,
      [&](int64_t r, int64_t k) { read_lookup_map(cells, 0, r, k, info_.name, &entries); },
      [&](int64_t r, int64_t k, LookupValues* values) {
        collect(cells, r, k, entries, out.hash_kind, values, &buf_a, &buf_b);
      });
}

// TorchEasyRec's LookupFeature._fg_json (docs/tzrec-compatibility.md §5.3). value_dim > 1 is two
// entries: a stub lookup "<name>__lookup" giving each hit's text, and a raw_feature "<name>" that
// splits it into value_dim numbers (expression "feature:<name>__lookup"). Otherwise one entry: a
// text bucketizer makes the values "string" and discrete (combiner ""), and value_dim is written
// whenever combiner is "".
std::vector<nlohmann::ordered_json> LookupFeature::fg_json_entries() const {
  const protos::LookupFeature& c = config_;
  const std::string default_value = fg_default_value(c.default_value(), info_.is_sequence);
  nlohmann::ordered_json e;
  e["feature_type"] = "lookup_feature";
  e["feature_name"] = c.feature_name();
  e["map"] = c.map();
  e["key"] = c.key();
  e["default_value"] = default_value;
  e["value_type"] = "float";
  e["needDiscrete"] = c.need_discrete();
  e["needKey"] = c.need_key();
  std::string combiner = c.combiner();
  for (char& ch : combiner) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  e["combiner"] = combiner;
  if (c.value_dim() > 1) {
    const std::string stub_name = c.feature_name() + "__lookup";
    std::string defaults;
    for (uint32_t i = 0; i < c.value_dim(); ++i) defaults += (i > 0 ? c.value_separator() : "") + default_value;
    e["feature_name"] = stub_name;
    e["default_value"] = defaults;
    e["value_type"] = "string";
    e["value_dim"] = 1;
    e["needDiscrete"] = true;
    e["combiner"] = "";
    e["stub_type"] = true;
    nlohmann::ordered_json raw;
    raw["feature_type"] = "raw_feature";
    raw["feature_name"] = c.feature_name();
    raw["default_value"] = default_value;
    raw["expression"] = "feature:" + stub_name;
    raw["separator"] = c.value_separator();
    raw["value_dim"] = c.value_dim();
    raw["value_type"] = "float";
    if (c.has_normalizer()) raw["normalizer"] = c.normalizer();
    if (c.boundaries_size() > 0) raw["boundaries"] = fg_float_list(c.boundaries(), field_path_ + ".boundaries");
    add_fg_sequence_fields(c.sequence_fields(), info_, &e);
    if (!info_.sequence_name.empty()) raw["sequence_fields"] = nlohmann::ordered_json::array({stub_name});
    return {e, raw};
  }
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_normalizer()) e["normalizer"] = c.normalizer();
  if (add_fg_map_bucketizer(c, default_value, field_path_, &e)) e["value_type"] = "string";
  if (c.has_fg_value_type()) e["value_type"] = c.fg_value_type();
  if (e["value_type"] == "string") e["needDiscrete"] = true;
  if (e["needDiscrete"] == true) e["combiner"] = "";
  // TorchEasyRec's LookupFeature.value_dim: the configured value, else 1.
  if (e["combiner"] == "") e["value_dim"] = c.has_value_dim() ? c.value_dim() : 1u;
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
