// MapKey: a lookup / match key against map entry keys. Expected values by hand from the rule in
// feature/kv_map.h (texts equal; integers as decimal text, floats in their shortest round-trip
// form, two integers as integers), the rule TorchEasyRec's pyfg applies by looking every key up
// as a string (docs/source/feature/feature.md, "LookupFeature" / "MatchFeature").
#include <gtest/gtest.h>

#include "feature/kv_map.h"

namespace tzrec::feature {
namespace kv_map_test {

CellValue text(std::string_view t) {
  CellValue v;
  v.text = t;
  return v;
}

CellValue integer(int64_t i) {
  CellValue v;
  v.kind = CellValue::Kind::kInt;
  v.i = i;
  return v;
}

CellValue real(double d) {
  CellValue v;
  v.kind = CellValue::Kind::kFloat;
  v.d = d;
  return v;
}

TEST(MapKey, TextKeysMatchEqualTextsOnly) {
  const MapKey key(text("ab"));
  EXPECT_TRUE(key.matches(text("ab")));
  EXPECT_FALSE(key.matches(text("a")));     // a prefix
  EXPECT_FALSE(key.matches(text("abc")));   // longer
  EXPECT_FALSE(key.matches(text("ac")));    // same size, last byte differs
  EXPECT_FALSE(key.matches(text("bb")));    // first byte differs
  EXPECT_FALSE(key.matches(text("")));
  const MapKey empty(text(""));
  EXPECT_TRUE(empty.matches(text("")));
  EXPECT_FALSE(empty.matches(text("a")));
  // Bytes past a key's size are not compared: the same bytes in a longer text.
  const std::string row = "12:0.5\x1d" "123:0.7";
  EXPECT_TRUE(MapKey(text(std::string_view(row).substr(7, 3))).matches(text("123")));
  EXPECT_FALSE(MapKey(text(std::string_view(row).substr(0, 2))).matches(text(std::string_view(row).substr(7, 3))));
}

TEST(MapKey, NumbersMatchByTheirText) {
  // An integer key (a Parquet INT64 column) against the text keys of a map "12:0.5".
  const MapKey twelve(integer(12));
  EXPECT_TRUE(twelve.matches(text("12")));
  EXPECT_FALSE(twelve.matches(text("012")));  // texts differ
  EXPECT_FALSE(twelve.matches(text("12.0")));
  EXPECT_TRUE(MapKey(integer(-7)).matches(text("-7")));
  // Two integers (a typed map<int64, V> column) compare as integers.
  EXPECT_TRUE(twelve.matches(integer(12)));
  EXPECT_FALSE(twelve.matches(integer(13)));
  // Floats in their shortest round-trip form.
  EXPECT_TRUE(MapKey(real(0.5)).matches(text("0.5")));
  EXPECT_FALSE(MapKey(real(0.5)).matches(text("0.50")));
  EXPECT_TRUE(MapKey(real(2.0)).matches(text("2")));
  EXPECT_TRUE(MapKey(real(2.0)).matches(integer(2)));   // "2" == "2"
  EXPECT_TRUE(MapKey(text("2")).matches(real(2.0)));
  EXPECT_TRUE(MapKey(text("12")).matches(integer(12)));
  EXPECT_FALSE(MapKey(text("12")).matches(integer(120)));
}

}  // namespace kv_map_test
}  // namespace tzrec::feature
