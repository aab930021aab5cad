#include "feature/bpe_tokenizer.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include "base/error.h"
#include "feature/tokenizer_json.h"

namespace tzrec::feature {
namespace bpe_detail {

using Json = nlohmann::json;

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others for U+0100
// onwards in byte order.
std::array<std::string, 256> gpt2_byte_symbols() {
  std::array<std::string, 256> out;
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    const UChar32 cp = printable ? b : 256 + next++;
    char buf[U8_MAX_LENGTH];
    int32_t len = 0;
    U8_APPEND_UNSAFE(buf, len, cp);
    out[b].assign(buf, static_cast<size_t>(len));
  }
  return out;
}

enum class CharClass : uint8_t { kLetter, kNumber, kSpace, kOther };

// \p{L}, \p{N}, \s (White_Space) or anything else; invalid UTF-8 (c < 0) is "else".
CharClass char_class(UChar32 c) {
  if (c >= 0 && c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return CharClass::kLetter;
    if (c >= '0' && c <= '9') return CharClass::kNumber;
    if (c == ' ' || (c >= 0x09 && c <= 0x0d)) return CharClass::kSpace;
    return CharClass::kOther;
  }
  if (c < 0) return CharClass::kOther;
  if (u_isUWhiteSpace(c)) return CharClass::kSpace;
  switch (u_charType(c)) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return CharClass::kLetter;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return CharClass::kNumber;
    default:
      return CharClass::kOther;
  }
}

// char_class of each ASCII character, read by next_char's common path.
const std::array<CharClass, 128> kAsciiClasses = [] {
  std::array<CharClass, 128> out{};
  for (UChar32 c = 0; c < 128; ++c) out[static_cast<size_t>(c)] = char_class(c);
  return out;
}();

// next_char() of a character that is not ASCII (out of line: titles are mostly ASCII).
__attribute__((noinline)) size_t next_multibyte_char(std::string_view s, size_t pos, CharClass* cls) {
  auto i = static_cast<int32_t>(pos);
  UChar32 c = 0;
  U8_NEXT(s.data(), i, static_cast<int32_t>(s.size()), c);
  *cls = char_class(c);
  return static_cast<size_t>(i);
}

// The character at byte `pos` of `s`: its class, and the byte after it.
inline size_t next_char(std::string_view s, size_t pos, CharClass* cls) {
  const auto b = static_cast<unsigned char>(s[pos]);
  if (b < 0x80) {
    *cls = kAsciiClasses[b];
    return pos + 1;
  }
  return next_multibyte_char(s, pos, cls);
}

// Length of the contraction after an apostrophe ('s 't 're 've 'm 'll 'd), 0 when none.
size_t contraction_length(std::string_view rest) {
  if (rest.empty()) return 0;
  const char c = rest[0];
  if (c == 's' || c == 't' || c == 'm' || c == 'd') return 1;
  if (rest.size() >= 2 && ((c == 'r' && rest[1] == 'e') || (c == 'v' && rest[1] == 'e') || (c == 'l' && rest[1] == 'l'))) {
    return 2;
  }
  return 0;
}

// Calls fn(word) for each match of GPT-2's split pattern in `s`:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
template <typename Fn>
void split_gpt2(std::string_view s, Fn&& fn) {
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    if (s[i] == '\'') {
      if (const size_t len = contraction_length(s.substr(i + 1)); len > 0) {
        fn(s.substr(i, 1 + len));
        i += 1 + len;
        continue;
      }
    }
    CharClass cls;
    const size_t after = next_char(s, i, &cls);
    size_t word = i;  // where the letters / digits / others start (after an optional space)
    CharClass word_class = cls;
    if (s[i] == ' ' && after < n) {
      CharClass following;
      next_char(s, after, &following);
      if (following != CharClass::kSpace) {
        word = after;
        word_class = following;
      }
    }
    if (word_class != CharClass::kSpace) {
      size_t k = word;
      while (k < n) {
        CharClass c;
        const size_t e = next_char(s, k, &c);
        if (c != word_class) break;
        k = e;
      }
      fn(s.substr(i, k - i));
      i = k;
      continue;
    }
    // A whitespace run: before a non-space its last character is left to the next word
    // (\s+(?!\S)); a single one stays alone (\s+).
    size_t k = i, last = i;
    while (k < n) {
      CharClass c;
      const size_t e = next_char(s, k, &c);
      if (c != CharClass::kSpace) break;
      last = k;
      k = e;
    }
    if (k < n && last > i) k = last;
    fn(s.substr(i, k - i));
    i = k;
  }
}

// Cuts the added tokens out of `text` (leftmost match, the longest first), appending their ids to
// *ids and calling plain(piece) for the text between them.
template <typename Fn>
void split_added(std::string_view text, const BpeTokenizer::AddedTokens& added, std::vector<int64_t>* ids,
                 Fn&& plain) {
  if (added.tokens().empty()) {
    if (!text.empty()) plain(text);
    return;
  }
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const BpeTokenizer::AddedToken* hit = nullptr;
    const std::string_view rest = text.substr(i);
    if (added.may_start(rest)) {
      for (const auto& t : added.tokens()) {
        // Most candidates fail on their second byte (the other runs of spaces at a run of
        // spaces): checked before comparing the whole token.
        const std::string& c = t.content;
        if (c.size() > rest.size() || (c.size() > 1 && rest[1] != c[1])) continue;
        if (rest.compare(0, c.size(), c) == 0) {
          hit = &t;
          break;
        }
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    if (i > start) plain(text.substr(start, i - start));
    ids->push_back(hit->id);
    i += hit->content.size();
    start = i;
  }
  if (start < text.size()) plain(text.substr(start));
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// ---- reading tokenizer.json ------------------------------------------------------------------------

bool bool_member(const Json& obj, const char* key, bool fallback, const std::string& where, const std::string& at) {
  const Json* v = tokenizer_json_member(obj, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) throw ConfigError(fmt::format("{}: {}.{} must be true or false", where, at, key));
  return v->get<bool>();
}

const UNormalizer2* normalizer_of(const std::string& type, const std::string& where) {
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* n = nullptr;
  if (type == "NFC") {
    n = unorm2_getNFCInstance(&err);
  } else if (type == "NFD") {
    n = unorm2_getNFDInstance(&err);
  } else if (type == "NFKC") {
    n = unorm2_getNFKCInstance(&err);
  } else if (type == "NFKD") {
    n = unorm2_getNFKDInstance(&err);
  } else {
    throw NotSupportedError(fmt::format("{}: normalizer '{}' (NFC, NFD, NFKC, NFKD or none are)", where, type));
  }
  if (U_FAILURE(err) || n == nullptr) {
    throw ConfigError(fmt::format("{}: the Unicode {} tables are not available ({})", where, type, u_errorName(err)));
  }
  return n;
}

std::string type_of(const Json& obj, const std::string& where, const std::string& at) {
  if (!obj.is_object()) throw ConfigError(fmt::format("{}: {} must be an object", where, at));
  const Json* t = tokenizer_json_member(obj, "type");
  if (t == nullptr || !t->is_string()) throw ConfigError(fmt::format("{}: {} has no \"type\"", where, at));
  return t->get<std::string>();
}

}  // namespace bpe_detail


std::shared_ptr<const BpeTokenizer> BpeTokenizer::load(const std::string& path, const std::string& field_path) {
  const std::string where = fmt::format("{}: tokenizer '{}'", field_path, path);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(fmt::format("{} cannot be read; vocab_file must name a Hugging Face tokenizer.json (relative "
                                  "paths are read from the working directory, or from asset_dir)",
                                  where));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return from_json(text.str(), where);
}

void BpeTokenizer::AddedTokens::finish() {
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const AddedToken& x, const AddedToken& y) { return x.content.size() > y.content.size(); });
  for (const AddedToken& t : tokens_) {
    const auto b0 = static_cast<unsigned char>(t.content[0]);
    if (t.content.size() == 1) {
      single_[b0] = true;
      continue;
    }
    const unsigned pair = static_cast<unsigned>(b0) << 8 | static_cast<unsigned char>(t.content[1]);
    pairs_[pair >> 6] |= uint64_t{1} << (pair & 63);
  }
}

std::shared_ptr<const BpeTokenizer> BpeTokenizer::from_json(std::string_view json_text, const std::string& where) {
  bpe_detail::Json doc;
  try {
    doc = bpe_detail::Json::parse(json_text.begin(), json_text.end());
  } catch (const bpe_detail::Json::exception& e) {
    throw ConfigError(fmt::format("{} is not valid JSON ({}); tokenizer_type \"bpe\" reads a Hugging Face "
                                  "tokenizer.json (use tokenizer_type \"sentencepiece\" for a .model file)",
                                  where, e.what()));
  }
  if (!doc.is_object()) throw ConfigError(where + " is not a tokenizer.json object");
  std::shared_ptr<BpeTokenizer> tok(new BpeTokenizer());
  static std::atomic<uint64_t> next_instance{1};
  tok->instance_id_ = next_instance++;

  tok->post_process_ = TokenizerPostProcess::from_json(doc, where);

  // normalizer
  if (const bpe_detail::Json* norm = tokenizer_json_member(doc, "normalizer")) {
    const std::string type = bpe_detail::type_of(*norm, where, "normalizer");
    if (type == "Sequence") {
      const bpe_detail::Json* list = tokenizer_json_member(*norm, "normalizers");
      if (list == nullptr || !list->is_array()) throw ConfigError(where + ": normalizer.normalizers must be a list");
      if (list->size() > 1) throw NotSupportedError(where + ": a Sequence of several normalizers");
      if (list->size() == 1) tok->normalizer_ = bpe_detail::normalizer_of(bpe_detail::type_of((*list)[0], where, "normalizer.normalizers[0]"), where);
    } else {
      tok->normalizer_ = bpe_detail::normalizer_of(type, where);
    }
  }

  // pre_tokenizer
  const bpe_detail::Json* pre = tokenizer_json_member(doc, "pre_tokenizer");
  if (pre == nullptr) throw NotSupportedError(where + ": a BPE tokenizer without the ByteLevel pre_tokenizer");
  const std::string pre_type = bpe_detail::type_of(*pre, where, "pre_tokenizer");
  if (pre_type != "ByteLevel") {
    throw NotSupportedError(fmt::format("{}: pre_tokenizer '{}' (ByteLevel is)", where, pre_type));
  }
  tok->add_prefix_space_ = bpe_detail::bool_member(*pre, "add_prefix_space", true, where, "pre_tokenizer");
  tok->use_regex_ = bpe_detail::bool_member(*pre, "use_regex", true, where, "pre_tokenizer");

  // model
  const bpe_detail::Json* model = tokenizer_json_member(doc, "model");
  if (model == nullptr || !model->is_object()) throw ConfigError(where + " has no \"model\" object");
  const bpe_detail::Json* model_type = tokenizer_json_member(*model, "type");
  if (model_type != nullptr && (!model_type->is_string() || model_type->get<std::string>() != "BPE")) {
    throw NotSupportedError(fmt::format("{}: model type {} (tokenizer_type \"bpe\" reads BPE models)", where,
                                        model_type->dump()));
  }
  if (const bpe_detail::Json* dropout = tokenizer_json_member(*model, "dropout"); dropout != nullptr && !(dropout->is_number() && dropout->get<double>() == 0)) {
    throw NotSupportedError(where + ": BPE dropout");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const bpe_detail::Json* v = tokenizer_json_member(*model, key);
    if (v != nullptr && !(v->is_string() && v->get<std::string>().empty())) {
      throw NotSupportedError(fmt::format("{}: model.{}", where, key));
    }
  }
  if (bpe_detail::bool_member(*model, "byte_fallback", false, where, "model")) throw NotSupportedError(where + ": model.byte_fallback");
  tok->fuse_unk_ = bpe_detail::bool_member(*model, "fuse_unk", false, where, "model");
  tok->ignore_merges_ = bpe_detail::bool_member(*model, "ignore_merges", false, where, "model");

  const bpe_detail::Json* vocab = tokenizer_json_member(*model, "vocab");
  if (vocab == nullptr || !vocab->is_object() || vocab->empty()) {
    throw ConfigError(where + ": model.vocab must be a non-empty object of token: id");
  }
  int64_t max_id = -1;
  tok->vocab_.reserve(vocab->size());
  for (const auto& [token, id] : vocab->items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      throw ConfigError(fmt::format("{}: model.vocab[\"{}\"] must be an id >= 0", where, token));
    }
    tok->vocab_[token] = static_cast<int32_t>(id.get<int64_t>());
    max_id = std::max(max_id, id.get<int64_t>());
  }
  if (const bpe_detail::Json* unk = tokenizer_json_member(*model, "unk_token")) {
    if (!unk->is_string()) throw ConfigError(where + ": model.unk_token must be a string");
    auto it = tok->vocab_.find(unk->get<std::string>());
    if (it == tok->vocab_.end()) {
      throw ConfigError(fmt::format("{}: model.unk_token '{}' is not in model.vocab", where, unk->get<std::string>()));
    }
    tok->unk_id_ = it->second;
  }
  tok->byte_symbol_ = bpe_detail::gpt2_byte_symbols();
  for (int b = 0; b < 256; ++b) {
    auto it = tok->vocab_.find(tok->byte_symbol_[b]);
    tok->byte_ids_[b] = it == tok->vocab_.end() ? -1 : it->second;
  }

  const bpe_detail::Json* merges = tokenizer_json_member(*model, "merges");
  if (merges == nullptr || !merges->is_array()) throw ConfigError(where + ": model.merges must be a list");
  tok->merges_.reserve(merges->size());
  for (size_t r = 0; r < merges->size(); ++r) {
    const bpe_detail::Json& m = (*merges)[r];
    std::string left, right;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        throw ConfigError(fmt::format("{}: model.merges[{}] '{}' is not two symbols separated by one space", where, r, s));
      }
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      throw ConfigError(fmt::format("{}: model.merges[{}] must be \"a b\" or [\"a\", \"b\"]", where, r));
    }
    auto find = [&](const std::string& symbol) {
      auto it = tok->vocab_.find(symbol);
      if (it == tok->vocab_.end()) {
        throw ConfigError(fmt::format("{}: model.merges[{}] uses '{}', which is not in model.vocab", where, r, symbol));
      }
      return it->second;
    };
    const int32_t a = find(left), b = find(right), merged = find(left + right);
    const uint64_t key = (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
    tok->merges_.emplace(key, std::make_pair(static_cast<int32_t>(r), merged));  // a repeated pair keeps its first rank
  }

  // added_tokens
  if (const bpe_detail::Json* added = tokenizer_json_member(doc, "added_tokens")) {
    if (!added->is_array()) throw ConfigError(where + ": added_tokens must be a list");
    for (size_t i = 0; i < added->size(); ++i) {
      const bpe_detail::Json& t = (*added)[i];
      const std::string at = fmt::format("added_tokens[{}]", i);
      const bpe_detail::Json* id = t.is_object() ? tokenizer_json_member(t, "id") : nullptr;
      const bpe_detail::Json* content = t.is_object() ? tokenizer_json_member(t, "content") : nullptr;
      if (id == nullptr || !id->is_number_integer() || id->get<int64_t>() < 0 || content == nullptr ||
          !content->is_string() || content->get_ref<const std::string&>().empty()) {
        throw ConfigError(fmt::format("{}: {} needs an \"id\" >= 0 and a non-empty \"content\"", where, at));
      }
      for (const char* flag : {"single_word", "lstrip", "rstrip"}) {
        if (bpe_detail::bool_member(t, flag, false, where, at)) {
          throw NotSupportedError(fmt::format("{}: {} ('{}') with {}", where, at, content->get<std::string>(), flag));
        }
      }
      // The library's default: special tokens are matched in the raw text, others after normalization.
      const bool special = bpe_detail::bool_member(t, "special", false, where, at);
      const bool normalized = bpe_detail::bool_member(t, "normalized", !special, where, at);
      AddedToken a{content->get<std::string>(), id->get<int64_t>()};
      max_id = std::max(max_id, a.id);
      (normalized ? tok->normalized_added_ : tok->raw_added_).add(std::move(a));
    }
    tok->raw_added_.finish();
    tok->normalized_added_.finish();
  }
  tok->vocab_size_ = max_id + 1;
  if (tok->post_process_.pad && tok->post_process_.pad_id >= tok->vocab_size_) {
    throw ConfigError(fmt::format("{}: padding.pad_id {} is outside the vocabulary (ids 0 to {}); give the id of the "
                                  "pad token",
                                  where, tok->post_process_.pad_id, tok->vocab_size_ - 1));
  }
  return tok;
}

void BpeTokenizer::encode(std::string_view text, std::vector<int64_t>* ids) const {
  const size_t start = ids->size();
  bpe_detail::split_added(text, raw_added_, ids, [&](std::string_view piece) { encode_normalized(piece, ids); });
  post_process_.apply(ids, start);
}

void BpeTokenizer::encode_normalized(std::string_view text, std::vector<int64_t>* ids) const {
  thread_local std::string normalized;
  std::string_view s = text;
  // ASCII text is its own normal form in every form.
  if (normalizer_ != nullptr && !bpe_detail::is_ascii(text)) {
    thread_local std::vector<UChar> utf16, norm16;
    UErrorCode err = U_ZERO_ERROR;
    utf16.resize(text.size() + 1);
    int32_t len16 = 0;
    u_strFromUTF8WithSub(utf16.data(), static_cast<int32_t>(utf16.size()), &len16, text.data(),
                         static_cast<int32_t>(text.size()), 0xFFFD, nullptr, &err);
    norm16.resize(static_cast<size_t>(len16) * 3 + 16);
    int32_t nlen = 0;
    if (U_SUCCESS(err)) {
      nlen = unorm2_normalize(normalizer_, utf16.data(), len16, norm16.data(), static_cast<int32_t>(norm16.size()), &err);
      if (err == U_BUFFER_OVERFLOW_ERROR) {
        err = U_ZERO_ERROR;
        norm16.resize(static_cast<size_t>(nlen) + 1);
        nlen = unorm2_normalize(normalizer_, utf16.data(), len16, norm16.data(), static_cast<int32_t>(norm16.size()), &err);
      }
    }
    int32_t len8 = 0;
    if (U_SUCCESS(err)) {
      normalized.resize(static_cast<size_t>(nlen) * 3 + 1);
      u_strToUTF8(normalized.data(), static_cast<int32_t>(normalized.size()), &len8, norm16.data(), nlen, &err);
    }
    if (U_FAILURE(err)) throw DataError(fmt::format("cannot normalize text for the tokenizer: {}", u_errorName(err)));
    normalized.resize(static_cast<size_t>(len8));
    s = normalized;
  }
  bpe_detail::split_added(s, normalized_added_, ids, [&](std::string_view piece) { encode_piece(piece, ids); });
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<int64_t>* ids) const {
  thread_local std::string prefixed;
  if (add_prefix_space_ && piece.front() != ' ') {
    prefixed.assign(1, ' ');
    prefixed.append(piece);
    piece = prefixed;
  }
  if (!use_regex_) {
    encode_word(piece, ids);
    return;
  }
  bpe_detail::split_gpt2(piece, [&](std::string_view word) { encode_word(word, ids); });
}

WordCache& BpeTokenizer::thread_cache() const {
  // Per thread: the caches of the tokenizers it used, by instance id (ascending = oldest first).
  thread_local std::map<uint64_t, WordCache> caches;
  thread_local uint64_t last_id = 0;
  thread_local WordCache* last = nullptr;
  if (last != nullptr && last_id == instance_id_) return *last;
  auto it = caches.find(instance_id_);
  if (it == caches.end()) {
    if (caches.size() >= kMaxCaches) caches.erase(caches.begin());
    it = caches.emplace(instance_id_, WordCache(kMaxCache)).first;
  }
  last_id = instance_id_;
  last = &it->second;
  return *last;
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int64_t>* ids) const {
  WordCache& cache = thread_cache();
  size_t count = 0;
  uint64_t hash = 0;
  if (const int32_t* cached = cache.find(word, &count, &hash)) {
    ids->insert(ids->end(), cached, cached + count);
    return;
  }
  thread_local std::vector<int32_t> merged;
  merge_word(word, &merged);
  cache.insert(word, hash, merged);
  ids->insert(ids->end(), merged.begin(), merged.end());
}

void BpeTokenizer::merge_word(std::string_view word, std::vector<int32_t>* out) const {
  out->clear();
  if (ignore_merges_) {
    std::string symbols;
    for (char c : word) symbols += byte_symbol_[static_cast<unsigned char>(c)];
    if (auto it = vocab_.find(symbols); it != vocab_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  for (char c : word) {
    int32_t id = byte_ids_[static_cast<unsigned char>(c)];
    if (id < 0) {
      if (unk_id_ < 0) continue;  // no unk_token: the symbol is dropped
      if (fuse_unk_ && !out->empty() && out->back() == unk_id_) continue;
      id = unk_id_;
    }
    out->push_back(id);
  }
  // One merge at a time: the lowest rank, leftmost on ties.
  while (out->size() > 1) {
    int32_t best_rank = INT32_MAX, best_id = -1;
    size_t best = 0;
    for (size_t i = 0; i + 1 < out->size(); ++i) {
      const uint64_t key = (static_cast<uint64_t>((*out)[i]) << 32) | static_cast<uint32_t>((*out)[i + 1]);
      auto it = merges_.find(key);
      if (it != merges_.end() && it->second.first < best_rank) {
        best_rank = it->second.first;
        best_id = it->second.second;
        best = i;
      }
    }
    if (best_id < 0) break;
    (*out)[best] = best_id;
    out->erase(out->begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

}  // namespace tzrec::feature
