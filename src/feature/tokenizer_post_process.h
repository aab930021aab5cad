// What a Hugging Face tokenizer.json's "truncation" and "padding" settings do to the ids of one
// encoded text: the tokenizers library's encode() applies them after the model
// (Tokenizer::post_process, here without special tokens, which a tokenize feature never adds), so
// pyfg's tokenize_feature gives the truncated / padded ids (docs/tzrec-compatibility.md §5.10):
//
// - truncation { max_length, direction "Right" (default) | "Left", strategy "LongestFirst" |
//   "OnlyFirst", stride }: a text of more than max_length ids keeps its first (Right) or last
//   (Left) max_length. stride only shapes the overflowing pieces, which a feature never reads.
//   Strategy "OnlySecond" truncates the second text of a pair; on one text the library fails
//   whenever it is too long, so it is a config error here.
// - padding { strategy "BatchLongest" | {"Fixed": n}, pad_to_multiple_of, pad_id, direction
//   "Right" (default) | "Left" }: the target length is n (Fixed) or the text's own (BatchLongest,
//   one text being its batch), rounded up to a multiple of pad_to_multiple_of; shorter texts get
//   pad_id appended (Right) or prepended (Left) up to it. pad_token and pad_type_id do not change
//   the ids.
// No torch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tzrec::feature {

struct TokenizerPostProcess {
  bool truncate = false;
  size_t max_length = 0;
  bool truncate_left = false;
  bool pad = false;
  bool pad_fixed = false;  // Fixed(pad_length); else BatchLongest (the text's own length)
  size_t pad_length = 0;
  size_t pad_to_multiple_of = 0;
  int64_t pad_id = 0;
  bool pad_left = false;

  // The "truncation" and "padding" members of a tokenizer.json (absent or null: off).
  // ConfigError starting with `where` for malformed settings, a negative pad_id and strategy
  // OnlySecond.
  static TokenizerPostProcess from_json(const nlohmann::json& doc, const std::string& where);

  // Truncates, then pads, the ids (*ids)[start, end) of one text.
  void apply(std::vector<int64_t>* ids, size_t start) const;
};

}  // namespace tzrec::feature
