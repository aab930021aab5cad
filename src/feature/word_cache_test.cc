// WordCache against a std::map of the same insertions: every word kept is found with its ids
// (also across the table's growth and with colliding slots, and with every word of one hash),
// words never inserted are not found, and nothing is kept past max_words.
#include "feature/word_cache.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace tzrec::feature {
namespace word_cache_test {

// Every word of one hash: lookups follow one long probe chain and only the words' bytes tell them
// apart.
struct OneHash {
  uint64_t operator()(std::string_view) const { return 42; }
};

template <class Cache>
void finds_what_was_kept(Cache& cache) {
  std::map<std::string, std::vector<int32_t>> kept;
  std::mt19937 rng(3);
  for (int i = 0; i < 10000; ++i) {
    std::string word(rng() % 12, 'a');
    for (char& c : word) c = static_cast<char>('a' + rng() % 6);  // short words: many repeats
    if (rng() % 3 == 0) word = "abcdefgh" + word.substr(0, 3);  // words differing in their last bytes
    size_t count = 0;
    uint64_t hash = 0;
    const int32_t* ids = cache.find(word, &count, &hash);
    auto it = kept.find(word);
    if (it != kept.end()) {
      ASSERT_NE(ids, nullptr) << "'" << word << "'";
      ASSERT_EQ(std::vector<int32_t>(ids, ids + count), it->second) << "'" << word << "'";
      continue;
    }
    ASSERT_EQ(ids, nullptr) << "'" << word << "'";
    std::vector<int32_t> value(rng() % 4);  // no ids at all for some words
    for (auto& v : value) v = static_cast<int32_t>(rng() % 1000);
    cache.insert(word, hash, value);
    if (kept.size() < 3000) kept[word] = value;
  }
  EXPECT_EQ(cache.size(), 3000u);  // full: later words were not kept
  for (const auto& [word, value] : kept) {
    size_t count = 0;
    uint64_t hash = 0;
    const int32_t* ids = cache.find(word, &count, &hash);
    ASSERT_NE(ids, nullptr) << "'" << word << "'";
    EXPECT_EQ(std::vector<int32_t>(ids, ids + count), value);
  }
}

TEST(WordCache, FindsWhatWasKeptAcrossGrowth) {
  WordCache cache(3000);
  finds_what_was_kept(cache);
}

TEST(WordCache, WordsOfOneHashAreToldApartByTheirBytes) {
  BasicWordCache<OneHash> cache(3000);
  finds_what_was_kept(cache);
}

}  // namespace word_cache_test
}  // namespace tzrec::feature
