// tokenizer_type "sentencepiece" of tokenize_feature (docs/tzrec-compatibility.md §5.10,
// TokenizeFeature): a SentencePiece unigram model file (`.model`, a serialized
// sentencepiece.ModelProto), read and encoded here as the SentencePiece library does with no extra
// options. (Debian's libsentencepiece carries its own copy of the protobuf runtime, which cannot
// share a process with libprotobuf.)
//
// Read from the model: pieces (text, score, type), trainer_spec.model_type and
// treat_whitespace_as_suffix, normalizer_spec (precompiled_charsmap, add_dummy_prefix,
// remove_extra_whitespaces, escape_whitespaces).
// Encoding:
//   1. normalization: at each position the longest rule of the precompiled character map (a
//      double-array trie of byte strings -> replacement) or the character itself (an invalid byte
//      becomes U+FFFD); user-defined pieces are kept as they are; leading, trailing and repeated
//      spaces are dropped (remove_extra_whitespaces); "▁" (U+2581) is put in front
//      (add_dummy_prefix) and stands for every space (escape_whitespaces);
//   2. the segmentation into pieces with the highest total score (Viterbi over normal,
//      user-defined and unused pieces; unused pieces are never chosen; a user-defined piece scores
//      bytes * max normal score - 0.1; a character no piece covers is the unknown piece, scored
//      min normal score - 10).
// Refused as "not supported yet": model types other than unigram, byte-fallback models (BYTE
// pieces), treat_whitespace_as_suffix.
// vocab_size(): the number of pieces.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "feature/text_tokenizer.h"

namespace tzrec::feature {

class SentencePieceTokenizer : public TextTokenizer {
 public:
  // Reads the model at `path`; ConfigError at `field_path` naming the file when it cannot be read
  // or is not a SentencePiece model.
  SentencePieceTokenizer(const std::string& path, const std::string& field_path);

  void encode(std::string_view text, std::vector<int64_t>* ids) const override;
  int64_t vocab_size() const override { return static_cast<int64_t>(pieces_.size()); }

  // Step 1 alone (for tests).
  void normalize(std::string_view text, std::string* out) const;

 private:
  struct Piece {
    std::string text;
    float score = 0;
    int type = 1;  // NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, UNUSED 5, BYTE 6
  };
  // The longest rule of the character map at the start of `s`: its length (0: none) and replacement.
  size_t charsmap_prefix(std::string_view s, std::string_view* replacement) const;
  // The longest user-defined piece at the start of `s` (0: none).
  size_t user_defined_prefix(std::string_view s) const;

  std::vector<Piece> pieces_;
  std::unordered_map<std::string_view, int32_t> candidates_;  // piece text -> id (normal, user-defined, unused)
  size_t max_piece_bytes_ = 0;
  std::vector<std::string_view> user_defined_;
  int32_t unk_id_ = -1;
  float min_score_ = 0, max_score_ = 0;
  // normalizer_spec
  std::vector<uint32_t> trie_;  // darts-clone double array
  std::string replacements_;    // NUL-terminated replacement strings
  bool add_dummy_prefix_ = true;
  bool remove_extra_whitespaces_ = true;
  bool escape_whitespaces_ = true;
};

}  // namespace tzrec::feature
