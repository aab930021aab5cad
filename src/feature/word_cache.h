// A bounded map from short texts (a tokenizer's words) to their token ids, in one flat
// open-addressing table: a lookup hashes the word once, probes adjacent slots of one array and
// compares bytes kept in one arena — no node per entry, no division by a prime bucket count.
// Entries are never removed; once `max_words` are held, further words are not kept (their
// callers compute them every time). Not thread-safe: one per thread. No torch.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "feature/hash.h"

namespace tzrec::feature {

// The hash a WordCache keys its words by (std::hash's, never 0).
struct WordHash {
  uint64_t operator()(std::string_view word) const {
    const uint64_t h = std_string_hash(word);
    return h == 0 ? 1 : h;  // 0 marks an empty slot
  }
};

// Hash: a functor of the word giving a nonzero uint64_t (one other than WordHash only in tests).
template <class Hash = WordHash>
class BasicWordCache {
 public:
  explicit BasicWordCache(size_t max_words) : max_words_(max_words), slots_(16) {}

  size_t size() const { return words_; }

  // The ids of `word`, or nullptr (*hash then holds the word's hash for insert()).
  const int32_t* find(std::string_view word, size_t* count, uint64_t* hash) const {
    const uint64_t h = Hash()(word);
    *hash = h;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return nullptr;
      if (s.hash == h && s.word_size == word.size() &&
          std::memcmp(bytes_.data() + s.word_at, word.data(), word.size()) == 0) {
        *count = s.ids_size;
        return ids_.data() + s.ids_at;
      }
    }
  }

  // Keeps `ids` for `word` (not found before, `hash` from find()) unless the cache is full.
  void insert(std::string_view word, uint64_t hash, const std::vector<int32_t>& ids) {
    if (words_ >= max_words_) return;
    if (2 * (words_ + 1) > slots_.size()) grow();  // at most half full
    Slot& s = slots_[free_slot(hash)];
    s.hash = hash;
    s.word_at = bytes_.size();
    s.word_size = static_cast<uint32_t>(word.size());
    s.ids_at = ids_.size();
    s.ids_size = static_cast<uint32_t>(ids.size());
    bytes_.append(word.data(), word.size());
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    ++words_;
  }

 private:
  struct Slot {
    uint64_t hash = 0;  // 0: empty
    size_t word_at = 0;
    size_t ids_at = 0;
    uint32_t word_size = 0;
    uint32_t ids_size = 0;
  };
  size_t mask() const { return slots_.size() - 1; }
  size_t free_slot(uint64_t hash) const {
    size_t i = hash & mask();
    while (slots_[i].hash != 0) i = (i + 1) & mask();
    return i;
  }
  // Twice the slots, the entries placed again by their hashes (words and ids stay where they are).
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.hash != 0) slots_[free_slot(s.hash)] = s;
    }
  }

  size_t max_words_;
  size_t words_ = 0;
  std::vector<Slot> slots_;
  std::string bytes_;          // the words, back to back
  std::vector<int32_t> ids_;   // their ids, back to back
};

using WordCache = BasicWordCache<>;

}  // namespace tzrec::feature
