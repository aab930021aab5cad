#include "feature/tokenize_feature.h"

#include <nlohmann/json.hpp>

#include "config/vocab_file.h"
#include "feature/fg_json_entry.h"
#include "feature/multi_input.h"

namespace tzrec::feature {

TokenizeFeature::TokenizeFeature(const protos::TokenizeFeature& c, const std::string& path, const std::string& type,
                                 const BuildContext& ctx, bool sequence)
    : Feature(c.feature_name(), path, type, ctx), config_(c) {
  // use_mask: refused when the config is loaded (config/field_registry.cc).
  info_.is_sparse = true;
  fill_table_info(c, path, &info_);
  tokens_as_sequence_ = c.tokens_as_sequence();
  if (tokens_as_sequence_) {
    if (sequence) {
      throw ConfigError(fmt::format("{}.tokens_as_sequence: only a tokenize_feature makes its tokens a sequence; "
                                    "remove it here (a sequence tokenize feature already has a sequence of texts)",
                                    path));
    }
    // A stand-alone sequence of one-token items (TorchEasyRec's value_dim 1).
    sequence_delim_ = sequence_settings(c, ctx, /*stand_alone=*/true, &info_);
    if (c.sequence_length() == 0) {
      throw ConfigError(path + ".sequence_length: set the most tokens the model takes with tokens_as_sequence");
    }
    info_.value_dim = 1;
  } else if (sequence) {
    sequence_delim_ = sequence_settings(c, ctx, ctx.sequence_name.empty(), &info_);
    if (sequence_delim_.empty()) throw ConfigError(path + ".sequence_delim: must not be empty");
    info_.value_dim = 0;  // any number of tokens per item
  } else {
    info_.value_dim = 0;
  }
  check_single_input_sequence_fields(c.expression(), path + ".expression", sequence, c.sequence_fields(), path);

  if (!c.has_vocab_file() || c.vocab_file().empty()) {
    throw ConfigError(path + ".vocab_file: set the tokenizer file (a tokenizer.json for tokenizer_type \"bpe\", a "
                             "SentencePiece .model for \"sentencepiece\")");
  }
  vocab_file_ = config::vocab_file_path(c.vocab_file(), c.has_asset_dir(), c.asset_dir());
  tokenizer_ = load_text_tokenizer(c.tokenizer_type(), vocab_file_, path + ".vocab_file", path + ".tokenizer_type");
  info_.num_embeddings = tokenizer_->vocab_size();
  table_size_source_ = fmt::format("the tokenizer's vocabulary of {} tokens", info_.num_embeddings);
  if (c.has_text_normalizer()) {
    const protos::TextNormalizer& n = c.text_normalizer();
    if (n.has_stop_char_file()) {
      stop_char_file_ = config::vocab_file_path(n.stop_char_file(), c.has_asset_dir(), c.asset_dir());
    }
    normalizer_.emplace(n, path + ".text_normalizer", stop_char_file_);
  }

  if (reads_encoded_column(fg_mode_)) {
    // FG_BUCKETIZE too: the tokenizer's ids are the FG output (there is no bucketizer).
    input_column_ = info_.name;
    fg_encoded_default_ =
        fg_encoded_default(c.has_fg_encoded_default_value(), c.fg_encoded_default_value(), info_, path, multival_sep_);
    return;
  }
  const FgInputName input = parse_fg_input(c.expression(), path + ".expression");
  input_side_ = input.side;
  input_column_ = fg_input_column(input, ctx, sequence && !tokens_as_sequence_, path + ".expression");
  default_value_ = fg_default_value(c.default_value(), info_.is_sequence);
  tokenizer_->encode(default_value_, &default_ids_);
}

// TorchEasyRec's TokenizeFeature.assets(): the tokenizer file and the normalizer's stop characters.
std::vector<FeatureAsset> TokenizeFeature::assets() const {
  std::vector<FeatureAsset> assets{{"vocab_file", vocab_file_}};
  if (!stop_char_file_.empty()) assets.push_back({"text_normalizer.stop_char_file", stop_char_file_});
  return assets;
}

bool TokenizeFeature::tokenize(std::string_view text, std::string* norm_buf, std::vector<int64_t>* ids) const {
  if (normalizer_) {
    normalizer_->normalize(text, norm_buf);
    text = *norm_buf;
  }
  if (text.empty()) return false;
  tokenizer_->encode(text, ids);
  return true;
}

template <typename ForEachValue>
void TokenizeFeature::tokenize_values(ForEachValue&& for_each_value, std::vector<int64_t>* ids) const {
  thread_local std::string text_buf, norm_buf;
  bool any = false;
  for_each_value([&](const CellValue& v) { any |= tokenize(as_text(v, &text_buf), &norm_buf, ids); });
  if (!any) ids->insert(ids->end(), default_ids_.begin(), default_ids_.end());
}

void TokenizeFeature::parse(const data::RecordBatch& batch, const ParseOutput& out) const {
  const ColumnCells cells(batch, input_column_, "feature " + info_.name, info_.is_sequence && !tokens_as_sequence_);
  if (cells.is_map()) {
    throw DataError(fmt::format("column {} is a {} but feature {} reads text; use a string column", cells.name(),
                                cells.describe_type(), info_.name));
  }
  if (!reads_encoded_column(fg_mode_)) {
    if (info_.is_sequence && !tokens_as_sequence_) {
      parse_fg_sequence(cells, out);
    } else {
      parse_fg(cells, out);
    }
    return;
  }
  const EncodedIds spec = encoded_ids_spec(&info_, field_path_, multival_sep_, sequence_delim_, fg_encoded_default_,
                                           table_size_source_, "vocab_file");
  if (tokens_as_sequence_) {
    parse_encoded_tokens_as_sequence(cells, out);
  } else if (info_.is_sequence) {
    parse_encoded_id_sequence(spec, cells, out);
  } else {
    parse_encoded_ids(spec, cells, out);
  }
}

void TokenizeFeature::parse_fg(const ColumnCells& cells, const ParseOutput& out) const {
  thread_local std::vector<int64_t> ids;
  std::vector<int64_t> ones;
  for (int64_t r = 0; r < out.rows; ++r) {
    ids.clear();
    tokenize_values(
        [&](auto&& fn) {
          if (cells.empty(r)) return;
          if (cells.is_scalar()) {
            fn(cells.scalar(r));  // the whole text, unsplit
          } else {
            cells.for_each(r, kFgDefaultSeparator, fn);  // list elements, one text each
          }
        },
        &ids);
    for (int64_t id : ids) out.sparse->push(id, 1.0f);
    if (tokens_as_sequence_) {
      ones.assign(ids.size(), 1);
      end_sequence_row(ones, /*one_id_per_item=*/true, out);
    } else {
      out.sparse->lengths.push_back(static_cast<int64_t>(ids.size()));
    }
  }
}

void TokenizeFeature::parse_fg_sequence(const ColumnCells& cells, const ParseOutput& out) const {
  thread_local std::vector<int64_t> ids;
  std::vector<int64_t> ids_per_item;
  const int64_t max_items = info_.sequence_length > 0 ? info_.sequence_length : INT64_MAX;
  for (int64_t r = 0; r < out.rows; ++r) {
    ids_per_item.clear();
    auto push_item = [&](const auto& for_each_value) {
      if (static_cast<int64_t>(ids_per_item.size()) >= max_items) return;
      ids.clear();
      tokenize_values(for_each_value, &ids);
      for (int64_t id : ids) out.sparse->push(id, 1.0f);
      ids_per_item.push_back(static_cast<int64_t>(ids.size()));
    };
    if (cells.empty(r)) {
      push_item([](auto&&) {});
    } else {
      // An item's text is split by sequence_delim again, which it does not contain: it stays whole.
      cells.for_each_item(r, sequence_delim_, sequence_delim_, [&](const ColumnCells::Item& item) {
        push_item([&](auto&& fn) { item.for_each(fn); });
      });
    }
    end_sequence_row(ids_per_item, /*one_id_per_item=*/false, out);
  }
}

void TokenizeFeature::parse_encoded_tokens_as_sequence(const ColumnCells& cells, const ParseOutput& out) const {
  const EncodedIds spec = encoded_ids_spec(&info_, field_path_, multival_sep_, sequence_delim_, fg_encoded_default_,
                                           table_size_source_, "vocab_file");
  std::vector<int64_t> ones;
  for (int64_t r = 0; r < out.rows; ++r) {
    int64_t n = 0;
    for_each_value_or_default(cells, r, multival_sep_, spec.default_value, [&](const CellValue& v, bool) {
      out.sparse->push(encoded_id(spec, v, out.hash_kind, cells, r), 1.0f);
      ++n;
    });
    ones.assign(static_cast<size_t>(n), 1);
    end_sequence_row(ones, /*one_id_per_item=*/true, out);
  }
}

// TorchEasyRec's TokenizeFeature._fg_json (docs/tzrec-compatibility.md §5.3): with text_normalizer a
// stub "<feature_name>__text_norm" text_normalizer entry first, which the tokenize entry reads.
std::vector<nlohmann::ordered_json> TokenizeFeature::fg_json_entries() const {
  const protos::TokenizeFeature& c = config_;
  const bool grouped = !info_.sequence_name.empty();
  std::vector<nlohmann::ordered_json> entries;
  std::string expression = c.expression();
  const std::string norm_name = c.feature_name() + "__text_norm";
  if (c.has_text_normalizer()) {
    const protos::TextNormalizer& n = c.text_normalizer();
    expression = "feature:" + norm_name;
    nlohmann::ordered_json e;
    e["feature_type"] = "text_normalizer";
    e["feature_name"] = norm_name;
    e["expression"] = c.expression();
    e["is_gbk_input"] = false;
    e["is_gbk_output"] = false;
    e["stub_type"] = true;
    if (n.has_max_length()) e["max_length"] = n.max_length();
    if (n.has_stop_char_file()) {
      e["stop_char_file"] = stop_char_file_;
    }
    if (n.norm_options_size() > 0) {
      // The feature generator's bit flags of the options; TEXT_REMOVE_SPACE is a key of its own.
      int64_t parameter = 0;
      for (int option : n.norm_options()) {
        switch (option) {
          case protos::TEXT_LOWER2UPPER: parameter += 2; break;
          case protos::TEXT_UPPER2LOWER: parameter += 4; break;
          case protos::TEXT_SBC2DBC: parameter += 8; break;
          case protos::TEXT_CHT2CHS: parameter += 16; break;
          case protos::TEXT_FILTER: parameter += 32; break;
          case protos::TEXT_SPLITCHRS: parameter += 512; break;
          case protos::TEXT_REMOVE_SPACE: e["remove_space"] = true; break;
          default: break;
        }
      }
      e["parameter"] = parameter;
    }
    if (grouped && c.sequence_fields_size() > 0) {
      e["sequence_fields"] = std::vector<std::string>(c.sequence_fields().begin(), c.sequence_fields().end());
    }
    entries.push_back(std::move(e));
  }
  nlohmann::ordered_json e;
  e["feature_type"] = "tokenize_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = fg_default_value(c.default_value(), info_.is_sequence);
  e["vocab_file"] = vocab_file_;
  e["expression"] = expression;
  e["tokenizer_type"] = c.tokenizer_type();
  e["output_type"] = "word_id";
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  if (grouped) {
    if (!c.has_text_normalizer()) {
      add_fg_sequence_fields(c.sequence_fields(), info_, &e);
    } else {
      e["sequence_fields"] = std::vector<std::string>{norm_name};
    }
  }
  entries.push_back(std::move(e));
  return entries;
}

// tokens_as_sequence: TorchEasyRec's TokenizeFeature.fg_json writes the plain entries (no
// "sequence_" type, no sequence settings) with default_value "0" on the tokenize entry when empty.
std::vector<nlohmann::ordered_json> TokenizeFeature::fg_json() const {
  if (!tokens_as_sequence_) return Feature::fg_json();
  std::vector<nlohmann::ordered_json> entries = fg_json_entries();
  for (nlohmann::ordered_json& e : entries) {
    if (e["feature_type"] == "tokenize_feature" && e["default_value"].get<std::string>().empty()) {
      e["default_value"] = "0";
    }
  }
  return entries;
}

}  // namespace tzrec::feature
