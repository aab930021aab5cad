#include "datagen/value_generator.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace tzrec::datagen {
namespace value_generator_test {

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) return out;
    start = pos + sep.size();
  }
}

TEST(ZipfRank, StaysInRangeAndFavoursSmallRanks) {
  for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{10}, int64_t{1000}, int64_t{1} << 62}) {
    Rng rng(n);
    int64_t small = 0;
    for (int i = 0; i < 2000; ++i) {
      const int64_t k = zipf_rank(n, rng.unit());
      ASSERT_GE(k, 0);
      ASSERT_LT(k, n);
      small += k < std::max<int64_t>(n / 10, 1) ? 1 : 0;
    }
    // Far more than the 10% a uniform draw would give.
    if (n >= 10) EXPECT_GT(small, 500) << n;
  }
}

TEST(ValueGenerator, ScalarsAndListsStayInTheirDomains) {
  ColumnSpec ids;
  ids.name = "ids";
  ids.domain = Domain::ids(7);
  ids.layout = Layout::kList;
  ColumnSpec vocab;
  vocab.name = "v";
  vocab.domain = Domain::vocabulary({"a", "b"});
  ColumnSpec floats;
  floats.name = "f";
  floats.domain = Domain::floats(-2.0, 3.0);
  const ValueGenerator gi(ids, 1), gv(vocab, 1), gf(floats, 1);
  Rng rng(5);
  Cell cell;
  Contribution acc{};
  for (int i = 0; i < 500; ++i) {
    gi.generate(rng, 3, &cell, &acc);
    ASSERT_EQ(cell.ints.size(), 3u);
    for (int64_t v : cell.ints) ASSERT_TRUE(v >= 0 && v < 7);
    gv.generate(rng, 1, &cell, &acc);
    ASSERT_EQ(cell.strings.size(), 1u);
    ASSERT_TRUE(cell.strings[0] == "a" || cell.strings[0] == "b");
    gf.generate(rng, 1, &cell, &acc);
    ASSERT_EQ(cell.floats.size(), 1u);
    ASSERT_TRUE(cell.floats[0] >= -2.0f && cell.floats[0] <= 3.0f);
  }
}

TEST(ValueGenerator, SequencesJoinElementsWithTheDelimiter) {
  ColumnSpec seq;
  seq.name = "s";
  seq.domain = Domain::floats(0, 1);
  seq.sequence = true;
  seq.sequence_length = 4;
  seq.sequence_delim = ";";
  seq.layout = Layout::kJoined;
  seq.delim = "\x03";
  seq.min_values = seq.max_values = 2;
  const ValueGenerator g(seq, 3);
  Rng rng(9);
  Cell cell;
  Contribution acc{};
  g.generate(rng, 3, &cell, &acc);
  ASSERT_EQ(cell.strings.size(), 1u);
  const auto elements = split(cell.strings[0], ";");
  ASSERT_EQ(elements.size(), 3u);
  for (const auto& e : elements) EXPECT_EQ(split(e, "\x03").size(), 2u) << e;
}

TEST(ValueGenerator, TextLayouts) {
  ColumnSpec weighted;
  weighted.name = "w";
  weighted.domain = Domain::ids(10, true);
  weighted.layout = Layout::kWeighted;
  weighted.delim = "\x1d";
  ColumnSpec lookup;
  lookup.name = "m";
  lookup.domain = Domain::ids(20);
  lookup.layout = Layout::kLookupMap;
  lookup.delim = "\x1d";
  lookup.value_domain = Domain::floats(0, 1);
  lookup.map_value_count = 3;
  ColumnSpec nested;
  nested.name = "n";
  nested.domain = Domain::ids(20);
  nested.layout = Layout::kNestedMap;
  nested.value_domain = Domain::floats(0, 1);
  Rng rng(1);
  Cell cell;
  Contribution acc{};
  ValueGenerator(weighted, 1).generate(rng, 2, &cell, &acc);
  const auto pairs = split(cell.strings.at(0), "\x1d");
  ASSERT_EQ(pairs.size(), 2u);
  for (const auto& p : pairs) EXPECT_EQ(split(p, ":").size(), 2u) << p;
  ValueGenerator(lookup, 1).generate(rng, 2, &cell, &acc);
  // Keys are distinct within a map: up to 2 entries.
  EXPECT_LE(split(cell.strings.at(0), "\x1d").size(), 2u);
  for (const auto& entry : split(cell.strings.at(0), "\x1d")) {
    const auto kv = split(entry, ":");
    ASSERT_EQ(kv.size(), 2u) << entry;
    EXPECT_EQ(split(kv[1], ",").size(), 3u) << entry;
  }
  ValueGenerator(nested, 1).generate(rng, 2, &cell, &acc);
  const auto primaries = split(cell.strings.at(0), "|");
  ASSERT_LE(primaries.size(), 2u);
  for (const auto& p : primaries) {
    const auto pk = split(p, "^");
    ASSERT_EQ(pk.size(), 2u) << p;
    for (const auto& sk : split(pk[1], ",")) EXPECT_EQ(split(sk, ":").size(), 2u) << sk;
  }
}

TEST(ValueGenerator, DeterministicForOneSeed) {
  ColumnSpec s;
  s.name = "x";
  s.domain = Domain::words(50);
  s.layout = Layout::kJoined;
  s.delim = " ";
  Cell a, b;
  Contribution ca{}, cb{};
  Rng r1(42), r2(42);
  ValueGenerator(s, 7).generate(r1, 5, &a, &ca);
  ValueGenerator(s, 7).generate(r2, 5, &b, &cb);
  EXPECT_EQ(a.strings, b.strings);
  EXPECT_EQ(ca, cb);
}

}  // namespace value_generator_test
}  // namespace tzrec::datagen
