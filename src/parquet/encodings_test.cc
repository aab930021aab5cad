// Low-level codecs against hand-computed bytes: the thrift compact protocol, the RLE/bit-packed
// hybrid, BIT_PACKED levels, the delta encodings (the examples of the Parquet Encodings.md),
// BYTE_STREAM_SPLIT, PLAIN booleans, compression codecs and CRC-32.
#include <brotli/encode.h>
#include <lz4.h>

#include <climits>
#include <limits>
#include <cstring>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "parquet/codecs.h"
#include "parquet/encodings.h"
#include "parquet/errors.h"
#include "parquet/json_rows.h"
#include "parquet/metadata.h"
#include "parquet/rle.h"
#include "parquet/thrift_compact.h"

namespace tzrec::parquet {
namespace encodings_test {

const uint8_t* u8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// ---- thrift ----

TEST(Thrift, WriterBytesAreTheCompactProtocol) {
  std::string out;
  thrift::CompactWriter w(&out);
  w.struct_begin();
  w.field_i32(1, 3);    // delta 1, type i32 (5), zigzag(3) = 6
  w.field_i64(2, -1);   // delta 1, type i64 (6), zigzag(-1) = 1
  w.field_bool(3, true);  // delta 1, type BOOLEAN_TRUE (1)
  w.field_binary(20, "ab");  // delta 17 > 15: long form: type 8, zigzag(20) = 40, len 2
  w.struct_end();
  EXPECT_EQ(out, std::string("\x15\x06\x16\x01\x11\x08\x28\x02" "ab" "\x00", 11));
}

TEST(Thrift, DecoderSkipsUnknownFields) {
  // A page header with fields this reader does not know (ids 50, 60, 61) after the known ones.
  std::string out;
  thrift::CompactWriter w(&out);
  w.struct_begin();
  w.field_i32(1, 0);  // DATA_PAGE
  w.field_i32(2, 80);
  w.field_i32(3, 40);
  w.field_struct_begin(5);  // DataPageHeader
  w.field_i32(1, 7);
  w.field_i32(2, 8);  // RLE_DICTIONARY
  w.field_i32(3, 3);
  w.field_i32(4, 3);
  w.field_binary(9, "unknown inside a known struct");
  w.struct_end();
  w.field_binary(50, "junk");
  w.field_struct_begin(60);
  w.field_i64(1, 5);
  w.field_list_begin(2, thrift::kI32, 20);
  for (int i = 0; i < 20; ++i) w.write_i32(-i);
  w.field_struct_begin(3);
  w.field_bool(1, false);
  w.struct_end();
  w.struct_end();
  w.field_struct_begin(61);
  w.struct_end();
  w.struct_end();
  out += "trailing page bytes";
  size_t header_size = 0;
  PageHeader got = decode_page_header(u8(out), out.size(), &header_size);
  EXPECT_EQ(header_size, out.size() - std::string("trailing page bytes").size());
  EXPECT_EQ(got.type, PageType::kDataPage);
  EXPECT_EQ(got.uncompressed_page_size, 80);
  EXPECT_EQ(got.compressed_page_size, 40);
  ASSERT_TRUE(got.data_page_header.has_value());
  EXPECT_EQ(got.data_page_header->num_values, 7);
  EXPECT_EQ(got.data_page_header->encoding, Encoding::kRleDictionary);
  // The same header through our encoder decodes to the same values.
  std::string again;
  encode_page_header(got, &again);
  PageHeader got2 = decode_page_header(u8(again), again.size(), &header_size);
  EXPECT_EQ(header_size, again.size());
  EXPECT_EQ(got2.data_page_header->num_values, 7);
}

TEST(Thrift, FileMetaDataRoundTrip) {
  FileMetaData md;
  md.version = 2;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  SchemaElement leaf;
  leaf.name = "ts";
  leaf.type = PhysicalType::kInt64;
  leaf.repetition = Repetition::kOptional;
  leaf.logical_type.kind = LogicalType::Kind::kTimestamp;
  leaf.logical_type.unit = TimeUnit::kMicros;
  leaf.logical_type.adjusted_to_utc = true;
  md.schema = {root, leaf};
  md.num_rows = 1234567890123;
  RowGroup rg;
  rg.num_rows = 1234567890123;
  ColumnChunk cc;
  cc.has_meta_data = true;
  cc.meta_data.type = PhysicalType::kInt64;
  cc.meta_data.path_in_schema = {"ts"};
  cc.meta_data.codec = Compression::kZstd;
  cc.meta_data.encodings = {Encoding::kPlain, Encoding::kDeltaBinaryPacked};
  cc.meta_data.data_page_offset = 4;
  cc.meta_data.total_compressed_size = 99;
  cc.offset_index_offset = 1000;
  cc.offset_index_length = 20;
  rg.columns = {cc};
  md.row_groups = {rg};
  md.key_value_metadata = {{"k", std::string("v")}, {"novalue", std::nullopt}};
  md.created_by = "me";
  std::string bytes;
  encode_file_metadata(md, &bytes);
  FileMetaData got = decode_file_metadata(u8(bytes), bytes.size());
  EXPECT_EQ(got.version, 2);
  EXPECT_EQ(got.num_rows, 1234567890123);
  ASSERT_EQ(got.schema.size(), 2u);
  EXPECT_EQ(got.schema[1].logical_type.kind, LogicalType::Kind::kTimestamp);
  EXPECT_EQ(got.schema[1].logical_type.unit, TimeUnit::kMicros);
  EXPECT_TRUE(got.schema[1].logical_type.adjusted_to_utc);
  EXPECT_EQ(got.row_groups[0].columns[0].meta_data.codec, Compression::kZstd);
  EXPECT_EQ(got.row_groups[0].columns[0].meta_data.encodings.size(), 2u);
  EXPECT_EQ(*got.row_groups[0].columns[0].offset_index_offset, 1000);
  EXPECT_EQ(got.key_value_metadata.size(), 2u);
  EXPECT_FALSE(got.key_value_metadata[1].value.has_value());
  EXPECT_EQ(*got.created_by, "me");
  // Every strict prefix is an error, never a crash.
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(decode_file_metadata(u8(bytes), n), DecodeError) << n;
  }
}

// ---- RLE / bit-packed hybrid ----

TEST(Rle, SpecExampleBitPacked) {
  // Encodings.md: 0..7 at bit width 3 bit-packed = 10001000 11000110 11111010.
  std::string data("\x03\x88\xC6\xFA", 4);
  uint32_t out[8];
  RleDecoder(u8(data), data.size(), 3).decode(out, 8);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], i);
}

TEST(Rle, RepeatedRunAndMixedRuns) {
  // 10 x 5 (header 10 << 1 = 0x14), then one bit-packed group of 1,2,3,0,0,0,0,0 at width 3.
  std::string data("\x14\x05\x03\xD1\x00\x00", 6);
  int16_t out[13];
  RleDecoder(u8(data), data.size(), 3).decode(out, 13);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[i], 5);
  EXPECT_EQ(out[10], 1);
  EXPECT_EQ(out[11], 2);
  EXPECT_EQ(out[12], 3);
}

TEST(Rle, RoundTripRandomInOddChunks) {
  std::mt19937 rng(3);
  for (int width : {0, 1, 2, 3, 7, 8, 13, 20, 32}) {
    std::vector<uint32_t> v(3001);
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t x = width == 0 ? 0 : static_cast<uint32_t>(rng()) & static_cast<uint32_t>((uint64_t{1} << width) - 1);
      // Long runs, short runs and noise.
      v[i] = (i / 50) % 3 == 0 ? static_cast<uint32_t>(i / 50) & static_cast<uint32_t>((uint64_t{1} << width) - 1) : x;
    }
    std::string enc;
    rle_encode(v.data(), static_cast<int64_t>(v.size()), width, &enc);
    std::vector<uint32_t> out(v.size());
    RleDecoder dec(u8(enc), enc.size(), width);
    size_t pos = 0;
    for (size_t chunk = 1; pos < out.size(); chunk = chunk * 3 % 17 + 1) {
      size_t k = std::min(chunk, out.size() - pos);
      dec.decode(out.data() + pos, static_cast<int64_t>(k));
      pos += k;
    }
    EXPECT_EQ(out, v) << "width " << width;
  }
}

TEST(Rle, TruncatedDataIsAnError) {
  std::string data("\x14\x05", 2);  // 10 values only
  int16_t out[11];
  EXPECT_THROW(RleDecoder(u8(data), data.size(), 3).decode(out, 11), DecodeError);
  std::string bad_value("\x14\x09", 2);  // value 9 does not fit in 3 bits
  EXPECT_THROW(RleDecoder(u8(bad_value), bad_value.size(), 3).decode(out, 1), DecodeError);
}

TEST(BitPacked, SpecExample) {
  // Encodings.md BIT_PACKED: 0..7 at width 3 = 00000101 00111001 01110111 (MSB first).
  std::string data("\x05\x39\x77", 3);
  int16_t out[8];
  EXPECT_EQ(decode_bit_packed_levels(u8(data), data.size(), 3, out, 8), 3u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], i);
}

// ---- delta encodings (Encodings.md examples) ----

TEST(Delta, BinaryPackedSpecExample1) {
  // 1 2 3 4 5: block 128, 4 miniblocks, 5 values, first 1; min delta 1, widths 0 0 0 0.
  std::string data("\x80\x01\x04\x05\x02\x02\x00\x00\x00\x00", 10);
  int64_t out[5];
  EXPECT_EQ(decode_delta_binary_packed<int64_t>(u8(data), data.size(), 5, out), data.size());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out[i], i + 1);
}

TEST(Delta, BinaryPackedSpecExample2) {
  // 7 5 3 1 2 3 4 5: deltas -2 -2 -2 1 1 1 1, min delta -2, relative 0 0 0 3 3 3 3 at width 2.
  std::string data("\x80\x01\x04\x08\x0e\x03\x02\x00\x00\x00\xC0\x3F\x00\x00\x00\x00\x00\x00", 18);
  int32_t out[8];
  EXPECT_EQ(decode_delta_binary_packed<int32_t>(u8(data), data.size(), 8, out), data.size());
  const int32_t want[] = {7, 5, 3, 1, 2, 3, 4, 5};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], want[i]);
  EXPECT_THROW(decode_delta_binary_packed<int32_t>(u8(data), data.size(), 9, out), DecodeError);
  EXPECT_THROW(decode_delta_binary_packed<int32_t>(u8(data), 11, 8, out), DecodeError);  // 7 deltas x 2 bits need 2 bytes
}

TEST(Delta, LengthByteArray) {
  // Hello World Foobar ABCDEF: lengths 5 5 6 6 (first 5, deltas 0 1 0, min 0, width 1).
  std::string data("\x80\x01\x04\x04\x0a\x00\x01\x00\x00\x00\x02\x00\x00\x00" "HelloWorldFoobarABCDEF", 36);
  std::string_view out[4];
  EXPECT_EQ(decode_delta_length_byte_array(u8(data), data.size(), 4, out), data.size());
  EXPECT_EQ(out[0], "Hello");
  EXPECT_EQ(out[1], "World");
  EXPECT_EQ(out[2], "Foobar");
  EXPECT_EQ(out[3], "ABCDEF");
}

TEST(Delta, ByteArray) {
  // axis axle babble babyhood: prefixes 0 2 0 3, suffixes axis le babble yhood.
  std::string prefixes("\x80\x01\x04\x04\x00\x03\x03\x00\x00\x00\x44\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                       22);
  std::string suffixes("\x80\x01\x04\x04\x08\x03\x03\x00\x00\x00\x70\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                       22);
  std::string data = prefixes + suffixes + "axislebabbleyhood";
  std::string arena;
  std::string_view out[4];
  decode_delta_byte_array(u8(data), data.size(), 4, 1 << 20, &arena, out);
  EXPECT_EQ(out[0], "axis");
  EXPECT_EQ(out[1], "axle");
  EXPECT_EQ(out[2], "babble");
  EXPECT_EQ(out[3], "babyhood");
  EXPECT_THROW(decode_delta_byte_array(u8(data), data.size(), 4, 10, &arena, out), DecodeError);  // output cap
}

TEST(ByteStreamSplit, Floats) {
  std::string data("\x00\x00\x00\x00\x80\x00\x3F\x40", 8);  // 1.0f = 0000803F, 2.0f = 00000040
  float out[2];
  decode_byte_stream_split(u8(data), data.size(), 2, 4, reinterpret_cast<uint8_t*>(out));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 2.0f);
}

TEST(Plain, BooleansAndByteArrays) {
  std::string bits("\x0d", 1);  // 1 0 1 1 0 0 0 0
  uint8_t b[4];
  decode_plain_boolean(u8(bits), bits.size(), 4, b);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 4), (std::vector<uint8_t>{1, 0, 1, 1}));
  std::string enc;
  std::string_view in[2] = {"ab", ""};
  encode_plain_byte_array(in, 2, &enc);
  EXPECT_EQ(enc, std::string("\x02\x00\x00\x00" "ab" "\x00\x00\x00\x00", 10));
  std::string_view out[2];
  EXPECT_EQ(decode_plain_byte_array(u8(enc), enc.size(), 2, out), enc.size());
  EXPECT_EQ(out[0], "ab");
  EXPECT_EQ(out[1], "");
  EXPECT_THROW(decode_plain_byte_array(u8(enc), enc.size() - 1, 2, out), DecodeError);
}

// ---- codecs ----

TEST(Codecs, RoundTripAndSizeChecks) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "value_" + std::to_string(i % 97) + ";";
  for (Compression c : {Compression::kUncompressed, Compression::kSnappy, Compression::kGzip, Compression::kZstd}) {
    std::string packed;
    compress(c, u8(text), text.size(), &packed);
    std::string back(text.size(), '\0');
    decompress(c, u8(packed), packed.size(), reinterpret_cast<uint8_t*>(back.data()), back.size());
    EXPECT_EQ(back, text) << to_string(c);
    std::string wrong(text.size() + 1, '\0');
    EXPECT_THROW(decompress(c, u8(packed), packed.size(), reinterpret_cast<uint8_t*>(wrong.data()), wrong.size()),
                 DecodeError)
        << to_string(c);
  }
  std::string garbage = "this is not compressed data at all";
  std::string out(1000, '\0');
  for (Compression c : {Compression::kSnappy, Compression::kGzip, Compression::kZstd, Compression::kLz4Raw,
                        Compression::kBrotli}) {
    EXPECT_THROW(decompress(c, u8(garbage), garbage.size(), reinterpret_cast<uint8_t*>(out.data()), out.size()),
                 DecodeError)
        << to_string(c);
  }
  try {
    decompress(Compression::kLzo, u8(garbage), garbage.size(), reinterpret_cast<uint8_t*>(out.data()), out.size());
    FAIL();
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported codec LZO"), std::string::npos);
  }
}

TEST(Codecs, GzipConcatenatedMembers) {
  std::string a(3000, 'a'), b = "bbbbbbbbbbcccc";
  std::string packed;
  compress(Compression::kGzip, u8(a), a.size(), &packed);
  compress(Compression::kGzip, u8(b), b.size(), &packed);
  std::string back(a.size() + b.size(), '\0');
  decompress(Compression::kGzip, u8(packed), packed.size(), reinterpret_cast<uint8_t*>(back.data()), back.size());
  EXPECT_EQ(back, a + b);
}

TEST(Codecs, Lz4RawAndBrotliFromTheirReferenceEncoders) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::to_string(i * 31 % 101) + ",";
  std::string lz4(static_cast<size_t>(LZ4_compressBound(static_cast<int>(text.size()))), '\0');
  int n = LZ4_compress_default(text.data(), lz4.data(), static_cast<int>(text.size()), static_cast<int>(lz4.size()));
  ASSERT_GT(n, 0);
  std::string back(text.size(), '\0');
  decompress(Compression::kLz4Raw, u8(lz4), static_cast<size_t>(n), reinterpret_cast<uint8_t*>(back.data()), back.size());
  EXPECT_EQ(back, text);
  std::string br(BrotliEncoderMaxCompressedSize(text.size()), '\0');
  size_t br_size = br.size();
  ASSERT_TRUE(BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, text.size(), u8(text), &br_size,
                                    reinterpret_cast<uint8_t*>(br.data())));
  std::string back2(text.size(), '\0');
  decompress(Compression::kBrotli, u8(br), br_size, reinterpret_cast<uint8_t*>(back2.data()), back2.size());
  EXPECT_EQ(back2, text);
}

// The deprecated LZ4 codec id: Hadoop framing ([BE32 uncompressed][BE32 compressed][LZ4 block],
// repeated) first, then a bare LZ4 block. Compressed by liblz4's reference encoder.
TEST(Codecs, Lz4HadoopFramingThenRawBlock) {
  std::string a, b;
  for (int i = 0; i < 700; ++i) a += std::to_string(i % 97) + ";";
  for (int i = 0; i < 300; ++i) b += std::to_string(i * 7 % 13) + "|";
  auto block = [](const std::string& text) {
    std::string out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(text.size()))), '\0');
    int n = LZ4_compress_default(text.data(), out.data(), static_cast<int>(text.size()), static_cast<int>(out.size()));
    out.resize(static_cast<size_t>(n));
    return out;
  };
  auto be32 = [](size_t v) {
    std::string s(4, '\0');
    for (int i = 0; i < 4; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
    return s;
  };
  const std::string ca = block(a), cb = block(b);
  // Two Hadoop blocks in one page.
  const std::string hadoop = be32(a.size()) + be32(ca.size()) + ca + be32(b.size()) + be32(cb.size()) + cb;
  std::string back(a.size() + b.size(), '\0');
  decompress(Compression::kLz4, u8(hadoop), hadoop.size(), reinterpret_cast<uint8_t*>(back.data()), back.size());
  EXPECT_EQ(back, a + b);
  // A bare block under the same codec id.
  const std::string raw = block(a + b);
  std::string back2(a.size() + b.size(), '\0');
  decompress(Compression::kLz4, u8(raw), raw.size(), reinterpret_cast<uint8_t*>(back2.data()), back2.size());
  EXPECT_EQ(back2, a + b);
  // Neither: truncated.
  EXPECT_THROW(decompress(Compression::kLz4, u8(hadoop), hadoop.size() - 3, reinterpret_cast<uint8_t*>(back.data()),
                          back.size()),
               DecodeError);
}

// FLOAT16 bit patterns; expected values from hyparquet 1.33.0's parseFloat16 (an independent
// decoder), which agree with the IEEE 754 binary16 definition.
TEST(Values, Float16) {
  struct Case {
    uint16_t bits;
    double value;
  };
  const Case cases[] = {{0x0000, 0.0},          {0x0001, 5.960464477539063e-8}, {0x8001, -5.960464477539063e-8},
                        {0x03ff, 0.00006097555160522461}, {0x0400, 0.00006103515625}, {0x3c00, 1.0},
                        {0xc000, -2.0},         {0x7bff, 65504.0},              {0xfbff, -65504.0},
                        {0x3555, 0.333251953125}};
  for (const Case& c : cases) EXPECT_EQ(static_cast<double>(float16_to_float(c.bits)), c.value) << std::hex << c.bits;
  EXPECT_TRUE(std::signbit(float16_to_float(0x8000)));  // -0 keeps its sign
  EXPECT_EQ(float16_to_float(0x8000), 0.0f);
  EXPECT_FALSE(std::signbit(float16_to_float(0x0000)));
  EXPECT_EQ(float16_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float16_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(float16_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(float16_to_float(0x7c01)));
}

// INT96 as Spark / parquet-mr convert it (64-bit microseconds, wrapping). The values are those
// of tests/data/parquet-testing/int96_from_spark.md, written by Spark 3.4.3; the stored
// (nanos, julian day) pairs are the file's.
TEST(Values, Int96LikeSpark) {
  auto int96 = [](int64_t nanos, int32_t julian) {
    std::string s(12, '\0');
    std::memcpy(s.data(), &nanos, 8);
    std::memcpy(s.data() + 8, &julian, 4);
    return s;
  };
  EXPECT_EQ(int96_to_micros(u8(int96(74096123456000, 2460311))), 1704141296123456);
  EXPECT_EQ(int96_to_micros(u8(int96(10800000000000, 5373484))), 253402225200000000);
  // Spark overflowed writing 290000-12-31T01:00:00+02:00 and stored negative nanoseconds; its
  // reader wraps back to the original value.
  EXPECT_EQ(int96_to_micros(u8(int96(-32509551616000, -105862232))), 9089380393200000000);
  EXPECT_EQ(iso8601_millis(9089380393200000), "+290000-12-30T23:00:00.000Z");
  EXPECT_EQ(iso8601_millis(-62198755200000), "-000001-01-01T00:00:00.000Z");  // 2 BC (year -1)
  EXPECT_EQ(iso8601_millis(253402300799999), "9999-12-31T23:59:59.999Z");
}

// Decimals of any width print exactly; expected digits from Python's integers
// (int.from_bytes(b, 'big', signed=True), then the point placed by the scale).
TEST(Values, DecimalsWiderThan128Bits) {
  auto hex = [](const std::string& h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return out;
  };
  EXPECT_EQ(decimal_from_be_bytes(hex("ff0000000000000000000000000027e41b3246bec9b16e398115"), 7),
            "-160693804425899027554196209234115025684330175921490271.1844587");
  EXPECT_EQ(decimal_from_be_bytes(hex("008000000000000000000000000000000007"), 40),
            "4.3556142965880123323311949751266331066375");
  EXPECT_EQ(decimal_from_be_bytes(hex("ffffffffffffffffffffffffffffffffffff"), 2), "-0.01");
  EXPECT_EQ(decimal_from_be_bytes(hex("000000000000000000000000000000000000"), 3), "0.000");
  EXPECT_EQ(decimal_from_be_bytes(hex("ff6a"), 2), "-1.50");
  EXPECT_EQ(decimal_from_be_bytes("", 0), "0");
}

}  // namespace encodings_test
}  // namespace tzrec::parquet
