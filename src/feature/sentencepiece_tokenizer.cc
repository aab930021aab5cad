#include "feature/sentencepiece_tokenizer.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <unicode/utf8.h>

#include "base/error.h"

namespace tzrec::feature {
namespace sentencepiece_detail {

// A cursor over protobuf wire-format bytes; `ok` turns false on malformed input.
struct WireReader {
  std::string_view data;
  size_t pos = 0;
  bool ok = true;

  bool done() const { return !ok || pos >= data.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos < data.size(); shift += 7) {
      const auto b = static_cast<unsigned char>(data[pos++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    ok = false;
    return 0;
  }
  // The next field: its number and wire type; length-delimited payloads in *bytes, fixed32 in *fixed.
  bool next(uint32_t* field, uint32_t* wire, uint64_t* value, std::string_view* bytes) {
    const uint64_t tag = varint();
    *field = static_cast<uint32_t>(tag >> 3);
    *wire = static_cast<uint32_t>(tag & 7);
    switch (*wire) {
      case 0:
        *value = varint();
        break;
      case 1:
        if (data.size() - pos < 8) return ok = false;
        std::memcpy(value, data.data() + pos, 8);
        pos += 8;
        break;
      case 2: {
        const uint64_t len = varint();
        if (!ok || len > data.size() - pos) return ok = false;
        *bytes = data.substr(pos, len);
        pos += len;
        break;
      }
      case 5: {
        if (data.size() - pos < 4) return ok = false;
        uint32_t v32 = 0;
        std::memcpy(&v32, data.data() + pos, 4);
        *value = v32;
        pos += 4;
        break;
      }
      default:
        return ok = false;
    }
    return ok;
  }
};

// darts-clone's unit layout.
inline bool unit_has_leaf(uint32_t u) { return ((u >> 8) & 1) == 1; }
inline uint32_t unit_value(uint32_t u) { return u & ((1U << 31) - 1); }
inline uint32_t unit_label(uint32_t u) { return u & ((1U << 31) | 0xFF); }
inline uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1U << 9)) >> 6); }

constexpr const char* kSpaceSymbol = "\xe2\x96\x81";  // U+2581
constexpr float kUnkPenalty = 10.0f;

}  // namespace sentencepiece_detail

namespace sp = sentencepiece_detail;

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& path, const std::string& field_path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(fmt::format("{}: SentencePiece model '{}' cannot be read; vocab_file must name a .model file "
                                  "(relative paths are read from the working directory, or from asset_dir)",
                                  field_path, path));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  const std::string bad = fmt::format("{}: '{}' is not a SentencePiece model", field_path, path);
  const std::string hint = "; tokenizer_type \"sentencepiece\" reads a .model file (use tokenizer_type \"bpe\" for a "
                           "tokenizer.json)";

  int64_t model_type = 1;
  bool suffix = false;
  sp::WireReader model{bytes};
  uint32_t field = 0, wire = 0;
  uint64_t value = 0;
  std::string_view payload;
  while (!model.done() && model.next(&field, &wire, &value, &payload)) {
    if (field == 1 && wire == 2) {  // pieces
      Piece p;
      sp::WireReader r{payload};
      while (!r.done() && r.next(&field, &wire, &value, &payload)) {
        if (field == 1 && wire == 2) p.text.assign(payload);
        if (field == 2 && wire == 5) {
          const auto v32 = static_cast<uint32_t>(value);
          std::memcpy(&p.score, &v32, 4);
        }
        if (field == 3 && wire == 0) p.type = static_cast<int>(value);
      }
      if (!r.ok) throw ConfigError(bad + " (a malformed piece)" + hint);
      pieces_.push_back(std::move(p));
    } else if (field == 2 && wire == 2) {  // trainer_spec
      sp::WireReader r{payload};
      while (!r.done() && r.next(&field, &wire, &value, &payload)) {
        if (field == 3 && wire == 0) model_type = static_cast<int64_t>(value);
        if (field == 24 && wire == 0) suffix = value != 0;
      }
    } else if (field == 3 && wire == 2) {  // normalizer_spec
      sp::WireReader r{payload};
      while (!r.done() && r.next(&field, &wire, &value, &payload)) {
        if (field == 2 && wire == 2) {
          // <trie bytes, uint32 little-endian><double array><NUL-terminated replacements>
          uint32_t trie_bytes = 0;
          if (payload.size() < 4) throw ConfigError(bad + " (a truncated precompiled_charsmap)" + hint);
          std::memcpy(&trie_bytes, payload.data(), 4);
          if (trie_bytes % 4 != 0 || trie_bytes > payload.size() - 4) {
            throw ConfigError(bad + " (a malformed precompiled_charsmap)" + hint);
          }
          trie_.resize(trie_bytes / 4);
          std::memcpy(trie_.data(), payload.data() + 4, trie_bytes);
          replacements_.assign(payload.substr(4 + trie_bytes));
        }
        if (field == 3 && wire == 0) add_dummy_prefix_ = value != 0;
        if (field == 4 && wire == 0) remove_extra_whitespaces_ = value != 0;
        if (field == 5 && wire == 0) escape_whitespaces_ = value != 0;
      }
    }
  }
  if (!model.ok || pieces_.empty()) throw ConfigError(bad + hint);
  if (model_type != 1) {
    throw NotSupportedError(fmt::format("{}: SentencePiece model '{}' of model_type {} (unigram models are)",
                                        field_path, path, model_type));
  }
  if (suffix) throw NotSupportedError(fmt::format("{}: SentencePiece model '{}' with treat_whitespace_as_suffix", field_path, path));

  min_score_ = FLT_MAX;
  max_score_ = FLT_MIN;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const Piece& p = pieces_[i];
    switch (p.type) {
      case 1:
        min_score_ = std::min(min_score_, p.score);
        max_score_ = std::max(max_score_, p.score);
        [[fallthrough]];
      case 4:
      case 5:
        if (p.text.empty()) throw ConfigError(fmt::format("{} (piece {} is empty){}", bad, i, hint));
        candidates_.emplace(p.text, static_cast<int32_t>(i));
        max_piece_bytes_ = std::max(max_piece_bytes_, p.text.size());
        if (p.type == 4) user_defined_.push_back(p.text);
        break;
      case 2:
        if (unk_id_ < 0) unk_id_ = static_cast<int32_t>(i);
        break;
      case 6:
        throw NotSupportedError(fmt::format("{}: SentencePiece model '{}' with byte fallback", field_path, path));
      default:
        break;
    }
  }
  if (unk_id_ < 0) throw ConfigError(fmt::format("{} (it has no unknown piece){}", bad, hint));
}

size_t SentencePieceTokenizer::charsmap_prefix(std::string_view s, std::string_view* replacement) const {
  if (trie_.empty()) return 0;
  size_t longest = 0;
  uint32_t longest_value = 0;
  uint32_t node = sp::unit_offset(trie_[0]);
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    node ^= c;
    if (node >= trie_.size()) break;
    const uint32_t unit = trie_[node];
    if (sp::unit_label(unit) != c) break;
    node ^= sp::unit_offset(unit);
    if (node >= trie_.size()) break;
    if (sp::unit_has_leaf(unit)) {
      longest = i + 1;
      longest_value = sp::unit_value(trie_[node]);
    }
  }
  if (longest == 0 || longest_value >= replacements_.size()) return 0;
  *replacement = std::string_view(replacements_.c_str() + longest_value);
  return longest;
}

size_t SentencePieceTokenizer::user_defined_prefix(std::string_view s) const {
  size_t longest = 0;
  for (std::string_view u : user_defined_) {
    if (u.size() > longest && s.substr(0, u.size()) == u) longest = u.size();
  }
  return longest;
}

void SentencePieceTokenizer::normalize(std::string_view input, std::string* out) const {
  out->clear();
  // One normalization step at the start of `s`: the replacement and the bytes consumed.
  auto step = [&](std::string_view s, std::string_view* rep) -> size_t {
    if (const size_t n = user_defined_prefix(s); n > 0) {
      *rep = s.substr(0, n);
      return n;
    }
    if (const size_t n = charsmap_prefix(s, rep); n > 0) return n;
    int32_t i = 0;
    UChar32 c = 0;
    U8_NEXT(s.data(), i, static_cast<int32_t>(s.size()), c);
    if (c < 0) {
      *rep = "\xef\xbf\xbd";
      return 1;
    }
    *rep = s.substr(0, static_cast<size_t>(i));
    return static_cast<size_t>(i);
  };
  std::string_view rep;
  if (remove_extra_whitespaces_) {
    while (!input.empty()) {
      const size_t n = step(input, &rep);
      if (rep != " ") break;
      input.remove_prefix(n);
    }
  }
  if (input.empty()) return;
  const std::string_view space = escape_whitespaces_ ? sp::kSpaceSymbol : " ";
  if (add_dummy_prefix_) out->append(space);
  bool prev_space = remove_extra_whitespaces_;
  while (!input.empty()) {
    const size_t n = step(input, &rep);
    if (prev_space) {
      while (!rep.empty() && rep.front() == ' ') rep.remove_prefix(1);
    }
    if (!rep.empty()) {
      for (char ch : rep) {
        if (ch == ' ' && escape_whitespaces_) {
          out->append(sp::kSpaceSymbol);
        } else {
          out->push_back(ch);
        }
      }
      prev_space = rep.back() == ' ';
    }
    input.remove_prefix(n);
    prev_space = prev_space && remove_extra_whitespaces_;
  }
  if (remove_extra_whitespaces_) {
    while (out->size() >= space.size() && std::string_view(*out).substr(out->size() - space.size()) == space) {
      out->resize(out->size() - space.size());
    }
  }
}

void SentencePieceTokenizer::encode(std::string_view text, std::vector<int64_t>* ids) const {
  struct Node {
    int32_t id = -1;
    float score = 0;
    int64_t starts_at = -1;
  };
  thread_local std::string normalized;
  thread_local std::vector<Node> nodes;
  normalize(text, &normalized);
  const std::string_view s = normalized;
  const size_t size = s.size();
  if (size == 0) return;
  nodes.assign(size + 1, Node{});
  nodes[0].starts_at = 0;
  const float unk_score = min_score_ - sp::kUnkPenalty;
  for (size_t start = 0; start < size;) {
    const float here = nodes[start].score;
    int32_t i = static_cast<int32_t>(start);
    UChar32 c = 0;
    U8_NEXT(s.data(), i, static_cast<int32_t>(size), c);
    const size_t char_len = static_cast<size_t>(i) - start;
    bool single = false;
    const size_t limit = std::min(size - start, max_piece_bytes_);
    for (size_t len = 1; len <= limit; ++len) {
      auto it = candidates_.find(s.substr(start, len));
      if (it == candidates_.end()) continue;
      const Piece& p = pieces_[static_cast<size_t>(it->second)];
      if (p.type == 5) continue;  // unused
      const float score = p.type == 4 ? static_cast<float>(len) * max_score_ - 0.1f : p.score;
      Node& target = nodes[start + len];
      if (target.starts_at == -1 || score + here > target.score) {
        target.score = score + here;
        target.starts_at = static_cast<int64_t>(start);
        target.id = it->second;
      }
      if (len == char_len) single = true;
    }
    if (!single) {
      Node& target = nodes[start + char_len];
      if (target.starts_at == -1 || unk_score + here > target.score) {
        target.score = unk_score + here;
        target.starts_at = static_cast<int64_t>(start);
        target.id = unk_id_;
      }
    }
    start += char_len;
  }
  const size_t first = ids->size();
  for (size_t end = size; end > 0;) {
    const Node& n = nodes[end];
    ids->push_back(n.id);
    end = static_cast<size_t>(n.starts_at);
  }
  std::reverse(ids->begin() + static_cast<std::ptrdiff_t>(first), ids->end());
  // Consecutive unknown characters are one unknown piece.
  size_t kept = first;
  for (size_t i = first; i < ids->size(); ++i) {
    if ((*ids)[i] == unk_id_ && kept > first && (*ids)[kept - 1] == unk_id_) continue;
    (*ids)[kept++] = (*ids)[i];
  }
  ids->resize(kept);
}

}  // namespace tzrec::feature
