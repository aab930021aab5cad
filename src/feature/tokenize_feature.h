// tokenize_feature, sequence_tokenize_feature and the tokenize_feature sub-features of a grouped
// sequence_feature (docs/tzrec-compatibility.md §5.10, TokenizeFeature): the token ids of a text.
//
// Always sparse; the table has the tokenizer's vocabulary size (text_tokenizer.h). vocab_file (joined
// to asset_dir) is the tokenizer: a Hugging Face tokenizer.json for tokenizer_type "bpe"
// (bpe_tokenizer.h), a SentencePiece .model for "sentencepiece" (sentencepiece_tokenizer.h); it is
// loaded once when the feature is built and is the feature's asset, as is text_normalizer's
// stop_char_file (joined to asset_dir too).
//
// FG_NONE (the column named after the feature holds FG output): token ids as an id_feature's
// column (fg_encoded_multival_sep, fg_encoded_default_value; sequences: items by sequence_delim).
// FG_NORMAL / FG_DAG (the expression's input column):
//   each text value (a list column: each element) goes through text_normalizer (text_normalizer.h)
//   and the tokenizer; a row whose text is empty (after normalization) takes default_value,
//   tokenized ("" gives no ids). A row's ids are pooled (value_dim 0).
//   Sequences: items split by sequence_delim, each item's text tokenized into the item's ids (any
//   number per item); an empty cell or item is default_value ("0" when empty); at most
//   sequence_length items.
//   tokens_as_sequence (tokenize_feature only): the row's tokens are a sequence of one-id items
//   (default_value "0" when empty), not truncated, as TorchEasyRec; FG_NONE reads the row's ids as
//   its items.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feature/feature.h"
#include "feature/feature_support.h"
#include "feature/text_normalizer.h"
#include "feature/text_tokenizer.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class TokenizeFeature : public Feature {
 public:
  TokenizeFeature(const protos::TokenizeFeature& c, const std::string& path, const std::string& type,
                  const BuildContext& ctx, bool sequence);

  std::vector<std::string> input_columns() const override { return {input_column_}; }
  std::vector<SideInput> side_inputs() const override {
    if (reads_encoded_column(fg_mode_)) return {};
    return {{input_side_, input_column_}};
  }
  void parse(const data::RecordBatch& batch, const ParseOutput& out) const override;
  std::vector<FeatureAsset> assets() const override;
  std::vector<nlohmann::ordered_json> fg_json() const override;

 protected:
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  // The ids of one text (normalized first); false when the normalized text is empty.
  bool tokenize(std::string_view text, std::string* norm_buf, std::vector<int64_t>* ids) const;
  // The ids of a row or item from its values, else of default_value.
  template <typename ForEachValue>
  void tokenize_values(ForEachValue&& for_each_value, std::vector<int64_t>* ids) const;
  void parse_fg(const ColumnCells& cells, const ParseOutput& out) const;
  void parse_fg_sequence(const ColumnCells& cells, const ParseOutput& out) const;
  void parse_encoded_tokens_as_sequence(const ColumnCells& cells, const ParseOutput& out) const;

  protos::TokenizeFeature config_;  // for fg_json_entries()
  std::string vocab_file_;          // joined to asset_dir
  std::string stop_char_file_;      // text_normalizer.stop_char_file joined to asset_dir; "" when unset
  std::shared_ptr<const TextTokenizer> tokenizer_;
  std::optional<TextNormalizer> normalizer_;
  bool tokens_as_sequence_ = false;
  std::string input_column_;
  std::string input_side_;  // FG modes: the side of the expression
  std::string sequence_delim_;
  std::string default_value_;                      // FG modes
  std::vector<int64_t> default_ids_;               // FG modes: default_value tokenized
  std::optional<std::string> fg_encoded_default_;  // FG_NONE
  std::string table_size_source_;
};

}  // namespace tzrec::feature
