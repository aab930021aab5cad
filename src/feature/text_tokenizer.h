// The tokenizers of tokenize_feature (docs/tzrec-compatibility.md §5.10, TokenizeFeature) behind
// one small interface: text in, token ids out.
//
// A tokenizer is loaded once per feature from its vocab_file (tokenizer_type "bpe": a Hugging Face
// tokenizer.json, bpe_tokenizer.h; "sentencepiece": a SentencePiece .model,
// sentencepiece_tokenizer.h) and then shared read-only: encode() is const and safe to call from
// several loader threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec::feature {

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  // Appends the token ids of UTF-8 `text` to *ids (no special tokens are added).
  virtual void encode(std::string_view text, std::vector<int64_t>* ids) const = 0;
  // Rows of the embedding table: every id encode() can return is below it.
  virtual int64_t vocab_size() const = 0;
};

// Loads the tokenizer of `tokenizer_type` ("bpe" | "sentencepiece") from `path`. ConfigError at
// `field_path` (the vocab_file field) naming the file when it is missing or malformed;
// NotSupportedError for tokenizer parts this engine does not implement; ConfigError at
// `type_field_path` for another tokenizer_type.
std::shared_ptr<const TextTokenizer> load_text_tokenizer(const std::string& tokenizer_type, const std::string& path,
                                                         const std::string& field_path,
                                                         const std::string& type_field_path);

}  // namespace tzrec::feature
