#include "feature/text_tokenizer.h"

#include <fmt/format.h>

#include "base/error.h"
#include "feature/bpe_tokenizer.h"
#include "feature/sentencepiece_tokenizer.h"

namespace tzrec::feature {

std::shared_ptr<const TextTokenizer> load_text_tokenizer(const std::string& tokenizer_type, const std::string& path,
                                                         const std::string& field_path,
                                                         const std::string& type_field_path) {
  if (tokenizer_type == "bpe") return BpeTokenizer::load(path, field_path);
  if (tokenizer_type == "sentencepiece") return std::make_shared<const SentencePieceTokenizer>(path, field_path);
  throw ConfigError(fmt::format("{}: '{}' is not a tokenizer type; use \"bpe\" (a tokenizer.json) or "
                                "\"sentencepiece\" (a .model file)",
                                type_field_path, tokenizer_type));
}

}  // namespace tzrec::feature
