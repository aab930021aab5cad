// tokenizer_type "bpe" of tokenize_feature (docs/tzrec-compatibility.md §5.10, TokenizeFeature): a
// Hugging Face tokenizers `tokenizer.json` with a byte-level BPE model (GPT-2, GPT-NeoX, RoBERTa,
// Llama 3 style), encoded as the tokenizers library does without special tokens.
//
// Pipeline, in the library's order:
//   1. added tokens that are not `normalized` are cut out of the raw text (leftmost, longest first);
//   2. the rest is normalized: `normalizer` null, NFC, NFD, NFKC, NFKD, or a Sequence of these;
//   3. added tokens that are `normalized` are cut out of the normalized text;
//   4. each remaining piece is pre-tokenized by ByteLevel: optionally a space in front
//      (add_prefix_space), then GPT-2's split pattern (use_regex, the default)
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      and each word's UTF-8 bytes are mapped to GPT-2's printable byte symbols;
//   5. each word is merged by BPE: the adjacent pair with the lowest merge rank (position in
//      model.merges) is merged first, leftmost on ties, until no listed pair is left (ignore_merges:
//      a word that is a vocab entry as a whole is that entry); symbols map to model.vocab ids
//      (unk_token for a symbol outside it, nothing without one);
//   6. `truncation` and `padding`, when set, cut and pad the text's ids (tokenizer_post_process.h).
// The ids of repeated words come from a bounded per-thread cache (as the library's BPE caches words).
//
// Refused as "not supported yet" (naming the file and the part): other model types, normalizers and
// pre-tokenizers, BPE dropout, continuing_subword_prefix / end_of_word_suffix, byte_fallback, added
// tokens with single_word / lstrip / rstrip.
// vocab_size(): the largest id of model.vocab and added_tokens, plus one (a padding pad_id at or
// above it is a config error naming the file).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "feature/text_tokenizer.h"
#include "feature/tokenizer_post_process.h"
#include "feature/word_cache.h"

struct UNormalizer2;

namespace tzrec::feature {

class BpeTokenizer : public TextTokenizer {
 public:
  // Reads the tokenizer.json at `path`; ConfigError at `field_path` naming the file when it cannot
  // be read or is not a BPE tokenizer.json (NotSupportedError for the refused parts above).
  static std::shared_ptr<const BpeTokenizer> load(const std::string& path, const std::string& field_path);
  // From the JSON text itself; `where` starts every error message ("<field_path>: tokenizer '<file>'").
  static std::shared_ptr<const BpeTokenizer> from_json(std::string_view json_text, const std::string& where);

  void encode(std::string_view text, std::vector<int64_t>* ids) const override;
  int64_t vocab_size() const override { return vocab_size_; }

  struct AddedToken {
    std::string content;
    int64_t id = 0;
  };
  // The added tokens matched in one form of the text (raw or normalized), longest first, indexed
  // by the bytes they start with: most positions of a text are passed over at one lookup.
  class AddedTokens {
   public:
    void add(AddedToken token) { tokens_.push_back(std::move(token)); }
    // After the last add(): sorts the tokens longest first (stable) and indexes their starts.
    void finish();
    const std::vector<AddedToken>& tokens() const { return tokens_; }
    // False when no token starts at rest[0] (rest not empty).
    bool may_start(std::string_view rest) const {
      const auto b0 = static_cast<unsigned char>(rest[0]);
      if (single_[b0]) return true;
      if (rest.size() < 2) return false;
      const unsigned pair = static_cast<unsigned>(b0) << 8 | static_cast<unsigned char>(rest[1]);
      return ((pairs_[pair >> 6] >> (pair & 63)) & 1) != 0;
    }

   private:
    std::vector<AddedToken> tokens_;
    std::array<bool, 256> single_{};      // byte b is a token of its own
    std::array<uint64_t, 1024> pairs_{};  // bit (b0 << 8 | b1): a longer token starts with b0 b1
  };

 private:
  BpeTokenizer() = default;

  // Steps 2-5 on text between the raw added tokens.
  void encode_normalized(std::string_view text, std::vector<int64_t>* ids) const;
  // Steps 4-5 on one piece without added tokens.
  void encode_piece(std::string_view piece, std::vector<int64_t>* ids) const;
  void encode_word(std::string_view word, std::vector<int64_t>* ids) const;
  // BPE of one word's bytes into *out (no cache).
  void merge_word(std::string_view word, std::vector<int32_t>* out) const;

  const UNormalizer2* normalizer_ = nullptr;  // nullptr: no normalizer
  bool add_prefix_space_ = false;
  bool use_regex_ = true;
  bool ignore_merges_ = false;
  bool fuse_unk_ = false;
  int32_t unk_id_ = -1;
  std::unordered_map<std::string, int32_t> vocab_;
  std::array<int32_t, 256> byte_ids_{};      // the vocab id of each byte's symbol (-1: not in the vocab)
  std::array<std::string, 256> byte_symbol_;  // GPT-2's printable symbol of each byte (UTF-8)
  // (left id << 32 | right id) -> (rank, merged id)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
  AddedTokens raw_added_;         // not normalized
  AddedTokens normalized_added_;  // normalized
  int64_t vocab_size_ = 0;
  TokenizerPostProcess post_process_;

  // Ids of words already merged (raw bytes of the pre-token -> ids), one cache per thread and
  // tokenizer so that loader threads never wait for each other: at most kMaxCache words each
  // (further words are merged every time). A thread keeps the caches of its kMaxCaches most
  // recently created tokenizers; instance_id_ (never reused) names this one's.
  static constexpr size_t kMaxCache = 1 << 16;
  static constexpr size_t kMaxCaches = 8;
  WordCache& thread_cache() const;
  uint64_t instance_id_ = 0;
};

}  // namespace tzrec::feature
