// The flatbuffer reader and builder: what the builder writes reads back, and malformed buffers
// throw FormatError instead of reading out of bounds.
#include <random>

#include <gtest/gtest.h>

#include "arrow/flatbuffer.h"

namespace tzrec::arrow {
namespace flatbuffer_test {

std::string sample() {
  FbBuilder child;
  child.add_scalar<int64_t>(0, -5).add_string(1, "child");
  std::vector<FbBuilder> items(3);
  for (int i = 0; i < 3; ++i) {
    items[static_cast<size_t>(i)].add_scalar<int32_t>(0, i * 10).add_bool(2, i % 2 == 1);
  }
  std::string structs;
  for (int64_t v : {1, 2, 3, 4}) structs.append(reinterpret_cast<const char*>(&v), 8);
  FbBuilder root;
  root.add_scalar<int16_t>(0, 4)
      .add_scalar<uint8_t>(1, 3)
      .add_table(2, child)
      .add_scalar<int64_t>(3, 1234567890123LL)
      .add_string(4, "hello")
      .add_tables(5, std::move(items))
      .add_scalars<int64_t>(6, {7, 8, 9})
      .add_structs(7, structs, 2, 8)
      .add_bool(9, true);
  return root.finish();
}

const uint8_t* bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(FlatbufferTest, BuiltTableReadsBack) {
  const std::string buf = sample();
  const FbTable t = FbTable::root(bytes(buf), buf.size());
  EXPECT_EQ(t.scalar<int16_t>(0, 0), 4);
  EXPECT_EQ(t.scalar<uint8_t>(1, 0), 3);
  EXPECT_EQ(t.scalar<int64_t>(3, 0), 1234567890123LL);
  EXPECT_EQ(*t.string(4), "hello");
  EXPECT_TRUE(t.boolean(9, false));
  // Absent fields: defaults, nullopt, empty vectors; ids past the vtable too.
  EXPECT_FALSE(t.has(8));
  EXPECT_EQ(t.scalar<int32_t>(8, 77), 77);
  EXPECT_EQ(t.scalar<int32_t>(40, -1), -1);
  EXPECT_FALSE(t.table(8).has_value());
  EXPECT_FALSE(t.string(40).has_value());
  EXPECT_TRUE(t.vector(8, 4).empty());

  const FbTable child = *t.table(2);
  EXPECT_EQ(child.scalar<int64_t>(0, 0), -5);
  EXPECT_EQ(*child.string(1), "child");

  const FbVector items = t.vector(5, 4);
  ASSERT_EQ(items.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(items.table(i).scalar<int32_t>(0, -1), static_cast<int32_t>(i * 10));
    EXPECT_EQ(items.table(i).boolean(2, false), i % 2 == 1);
  }
  const FbVector scalars = t.vector(6, 8);
  ASSERT_EQ(scalars.size(), 3u);
  EXPECT_EQ(scalars.scalar<int64_t>(2), 9);

  const FbVector structs = t.vector(7, 16);
  ASSERT_EQ(structs.size(), 2u);
  int64_t v;
  std::memcpy(&v, structs.element(1, 16) + 8, 8);
  EXPECT_EQ(v, 4);
  // Structs of 8-byte members are 8-byte aligned (relative to the buffer start).
  EXPECT_EQ((structs.element(0, 16) - bytes(buf)) % 8, 0);
}

TEST(FlatbufferTest, OutOfRangeAccessesThrow) {
  const std::string buf = sample();
  const FbTable t = FbTable::root(bytes(buf), buf.size());
  EXPECT_THROW(t.vector(5, 4).table(3), FormatError);
  EXPECT_THROW(t.vector(6, 8).scalar<int64_t>(3), FormatError);
  EXPECT_THROW(t.vector(7, 16).element(0, 32), FormatError);
}

TEST(FlatbufferTest, MalformedBuffersThrowFormatError) {
  const std::string good = sample();
  auto expect_error = [](std::string buf, const std::string& what) {
    try {
      const FbTable t = FbTable::root(bytes(buf), buf.size());
      (void)t.string(4);
      (void)t.vector(5, 4).table(0);
      FAIL() << "no error for " << what;
    } catch (const FormatError& e) {
      SUCCEED() << e.what();
    }
  };
  expect_error("", "an empty buffer");
  expect_error(std::string(7, '\0'), "a 7-byte buffer");
  std::string bad = good;
  const uint32_t far = 1u << 30;
  std::memcpy(&bad[0], &far, 4);
  expect_error(bad, "a root offset past the end");

  // A vtable offset that points before the buffer.
  uint32_t root;
  std::memcpy(&root, good.data(), 4);
  bad = good;
  const int32_t soffset = static_cast<int32_t>(root) + 100;
  std::memcpy(&bad[root], &soffset, 4);
  expect_error(bad, "a vtable before the buffer");

  // The string's length past the end.
  const FbTable t = FbTable::root(bytes(good), good.size());
  const std::string_view s = *t.string(4);
  bad = good;
  const size_t len_pos =
      static_cast<size_t>(reinterpret_cast<const uint8_t*>(s.data()) - bytes(good)) - 4;
  const uint32_t huge = 1u << 31;
  std::memcpy(&bad[len_pos], &huge, 4);
  expect_error(bad, "a string longer than the buffer");

  // A vector count larger than the buffer can hold.
  bad = good;
  const size_t count_pos = static_cast<size_t>(t.vector(6, 8).element(0, 8) - bytes(good)) - 4;
  const uint32_t many = 1u << 28;
  std::memcpy(&bad[count_pos], &many, 4);
  const FbTable bt = FbTable::root(bytes(bad), bad.size());
  EXPECT_THROW(bt.vector(6, 8), FormatError);
}

TEST(FlatbufferTest, EveryTruncationAndByteFlipIsCaught) {
  // Every prefix and random corruptions: either the reads succeed within bounds or FormatError.
  const std::string good = sample();
  auto read_all = [](const std::string& buf) {
    const FbTable t = FbTable::root(bytes(buf), buf.size());
    (void)t.scalar<int64_t>(3, 0);
    if (auto c = t.table(2)) (void)c->string(1);
    (void)t.string(4);
    const FbVector items = t.vector(5, 4);
    for (size_t i = 0; i < items.size(); ++i) (void)items.table(i).scalar<int32_t>(0, 0);
    const FbVector structs = t.vector(7, 16);
    for (size_t i = 0; i < structs.size(); ++i) (void)structs.element(i, 16);
  };
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      read_all(good.substr(0, n));
    } catch (const FormatError&) {
    }
  }
  std::mt19937 rng(7);
  for (int iter = 0; iter < 5000; ++iter) {
    std::string buf = good;
    for (int k = 0; k < 3; ++k) buf[rng() % buf.size()] = static_cast<char>(rng());
    try {
      read_all(buf);
    } catch (const FormatError&) {
    }
  }
}

}  // namespace flatbuffer_test
}  // namespace tzrec::arrow
