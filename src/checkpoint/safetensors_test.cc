#include "checkpoint/safetensors.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::checkpointing {
namespace safetensors_test {

namespace fs = std::filesystem;

using data::testing::read_file;
using data::testing::TempDir;
using data::testing::write_file;



std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file assembled by hand: length prefix + header (unpadded unless given) + data.
std::string assemble(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

std::string hex_bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s += static_cast<char>(b);
  return s;
}

// Expects load_safetensors(path) to throw a CheckpointError whose message contains every
// fragment (the file path is always required).
void expect_corrupt(const std::string& path, std::initializer_list<std::string> fragments) {
  try {
    load_safetensors(path);
    ADD_FAILURE() << "expected CheckpointError for " << path;
  } catch (const CheckpointError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    for (const auto& f : fragments)
      EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

std::map<std::string, torch::Tensor> all_dtype_tensors() {
  torch::manual_seed(7);
  std::map<std::string, torch::Tensor> t;
  t["f64"] = torch::randn({3, 2}, torch::kFloat64);
  t["f32"] = torch::randn({4, 5});
  t["f16"] = torch::randn({7}).to(torch::kFloat16);
  t["bf16"] = torch::randn({2, 3}).to(torch::kBFloat16);
  t["i64"] = torch::randint(-(int64_t(1) << 40), int64_t(1) << 40, {6}, torch::kInt64);
  t["i32"] = torch::randint(-100000, 100000, {2, 2}, torch::kInt32);
  t["i16"] = torch::randint(-30000, 30000, {5}, torch::kInt16);
  t["i8"] = torch::randint(-128, 128, {9}, torch::kInt8);
  t["u8"] = torch::randint(0, 256, {3}, torch::kUInt8);
  t["bool"] = torch::randint(0, 2, {4}, torch::kInt64).to(torch::kBool);
  t["scalar"] = torch::tensor(3.25);                                      // shape []
  t["empty"] = torch::zeros({0, 3});                                      // no bytes
  t["strided"] = torch::arange(12, torch::kFloat32).reshape({3, 4}).t();  // non-contiguous
  t["a.b.weight"] = torch::ones({1, 1}, torch::kFloat64);                 // dotted state-dict name
  return t;
}

TEST(Safetensors, RoundTripAllDtypes) {
  TempDir dir;
  const auto tensors = all_dtype_tensors();
  ASSERT_FALSE(tensors.at("strided").is_contiguous());
  const std::map<std::string, std::string> meta = {{"format", "pt"}, {"note", "ünïcode ok"}};
  save_safetensors(dir.file("x.safetensors"), tensors, meta);
  EXPECT_FALSE(fs::exists(dir.file("x.safetensors.tmp")));
  const auto loaded = load_safetensors(dir.file("x.safetensors"));
  EXPECT_EQ(loaded.metadata, meta);
  ASSERT_EQ(loaded.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    const auto& l = loaded.tensors.at(name);
    EXPECT_EQ(l.scalar_type(), t.scalar_type()) << name;
    EXPECT_EQ(l.sizes(), t.sizes()) << name;
    EXPECT_TRUE(torch::equal(l, t)) << name;
    EXPECT_TRUE(l.is_contiguous()) << name;
  }
  // Header is padded with spaces to a multiple of 8 and data starts right after it.
  const std::string bytes = read_file(dir.file("x.safetensors"));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
}

TEST(Safetensors, WriterProducesExactBytes) {
  // Pins the writer: keys in sorted order, compact JSON, space padding, raw little-endian data.
  TempDir dir;
  save_safetensors(dir.file("x.safetensors"), {{"x", torch::tensor({1.5f, -2.0f})}});
  const std::string header = R"({"x":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  ASSERT_EQ(header.size(), 54u);
  const std::string expected =
      assemble(header + "  ", hex_bytes({0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0xC0}));
  EXPECT_EQ(read_file(dir.file("x.safetensors")), expected);
}

TEST(Safetensors, ReadsHandWrittenFile) {
  // Laid out as the Python library does: largest alignment first (I64 before F32), metadata
  // first in the header, no padding needed here; values written byte by byte.
  TempDir dir;
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,1],"data_offsets":[16,24]},)"
      R"("ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
      R"("h":{"dtype":"BF16","shape":[],"data_offsets":[24,26]},"e":{"dtype":"F16","shape":[0],"data_offsets":[26,26]}})";
  const std::string data = hex_bytes({0x07, 0, 0, 0, 0, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                      0xFF, 0xFF})                                        // 7, -2
                           + hex_bytes({0x00, 0x00, 0xC0, 0x3F, 0x00, 0x00, 0x00, 0xC0})  // 1.5, -2
                           + hex_bytes({0x40, 0x40});  // bf16 3.0
  write_file(dir.file("py.safetensors"), assemble(header, data));
  const auto f = load_safetensors(dir.file("py.safetensors"));
  EXPECT_EQ(f.metadata.at("format"), "pt");
  ASSERT_EQ(f.tensors.size(), 4u);
  EXPECT_TRUE(torch::equal(f.tensors.at("ids"), torch::tensor({int64_t{7}, int64_t{-2}})));
  EXPECT_TRUE(torch::equal(f.tensors.at("w"), torch::tensor({1.5f, -2.0f}).reshape({2, 1})));
  EXPECT_EQ(f.tensors.at("h").scalar_type(), torch::kBFloat16);
  EXPECT_EQ(f.tensors.at("h").dim(), 0);
  EXPECT_EQ(f.tensors.at("h").item<float>(), 3.0f);
  EXPECT_EQ(f.tensors.at("e").numel(), 0);
  EXPECT_EQ(f.tensors.at("e").scalar_type(), torch::kFloat16);
}

// An independent parser (json + struct only) run by Debian's python3 reads what we wrote.
constexpr const char* kPythonParser = R"PY(
import json, struct, sys
data = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', data[:8])[0]
assert n % 8 == 0, 'header not padded'
header = json.loads(data[8:8 + n].decode('utf-8'))
buf = data[8 + n:]
fmt = {'F64': 'd', 'F32': 'f', 'F16': 'e', 'I64': 'q', 'I32': 'i', 'I16': 'h', 'I8': 'b', 'U8': 'B', 'BOOL': '?'}
size = {'F64': 8, 'F32': 4, 'F16': 2, 'BF16': 2, 'I64': 8, 'I32': 4, 'I16': 2, 'I8': 1, 'U8': 1, 'BOOL': 1}
out = {'__metadata__': header.pop('__metadata__', None), 'tensors': {}}
end = 0
for name, info in sorted(header.items(), key=lambda kv: kv[1]['data_offsets']):
    b, e = info['data_offsets']
    assert b == end, 'gap or overlap at ' + name
    count = 1
    for d in info['shape']:
        count *= d
    assert e - b == count * size[info['dtype']], 'size of ' + name
    raw = buf[b:e]
    if info['dtype'] == 'BF16':
        vals = [struct.unpack('<f', struct.pack('<I', struct.unpack('<H', raw[2*i:2*i+2])[0] << 16))[0] for i in range(count)]
    else:
        vals = list(struct.unpack('<%d%s' % (count, fmt[info['dtype']]), raw))
    out['tensors'][name] = {'dtype': info['dtype'], 'shape': info['shape'], 'values': [float(v) for v in vals]}
    end = e
assert end == len(buf), 'trailing bytes'
json.dump(out, open(sys.argv[2], 'w'))
)PY";

TEST(Safetensors, IndependentPythonParserReadsOurFile) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 not available";
  TempDir dir;
  // Exactly representable values in every dtype, so the comparison can be exact.
  std::map<std::string, torch::Tensor> tensors = {
      {"f64", torch::tensor({0.5, -1.25, 1e10}, torch::kFloat64)},
      {"f32", torch::tensor({0.25f, -3.0f, 1024.0f, 6.0f}).reshape({2, 2})},
      {"f16", torch::tensor({0.5f, -2.0f, 65504.0f}).to(torch::kFloat16)},
      {"bf16", torch::tensor({1.0f, -0.5f, 256.0f}).to(torch::kBFloat16)},
      {"i64", torch::tensor({int64_t{-5}, int64_t{1} << 40})},
      {"i32", torch::tensor({-7, 9}, torch::kInt32)},
      {"i16", torch::tensor({-300, 300}, torch::kInt16)},
      {"i8", torch::tensor({-128, 127}, torch::kInt8)},
      {"u8", torch::tensor({0, 255}, torch::kUInt8)},
      {"bool", torch::tensor({true, false, true})},
      {"odd", torch::tensor({1, 2, 3}, torch::kInt8)},  // 3 bytes: later offsets are unaligned
  };
  save_safetensors(dir.file("x.safetensors"), tensors, {{"format", "pt"}});
  write_file(dir.file("parse.py"), kPythonParser);
  const std::string cmd = "/usr/bin/python3 " + dir.file("parse.py") + " " +
                          dir.file("x.safetensors") + " " + dir.file("out.json") + " 2>" +
                          dir.file("err.txt");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(dir.file("err.txt"));
  const auto out = nlohmann::json::parse(read_file(dir.file("out.json")));
  EXPECT_EQ(out["__metadata__"]["format"], "pt");
  ASSERT_EQ(out["tensors"].size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    const auto& py = out["tensors"][name];
    EXPECT_EQ(py["dtype"], safetensors_dtype_name(t.scalar_type())) << name;
    EXPECT_EQ(py["shape"].get<std::vector<int64_t>>(), t.sizes().vec()) << name;
    const auto expected = t.to(torch::kFloat64).flatten();
    const auto values = py["values"].get<std::vector<double>>();
    ASSERT_EQ(static_cast<int64_t>(values.size()), expected.numel()) << name;
    for (int64_t i = 0; i < expected.numel(); ++i) {
      EXPECT_EQ(values[i], expected[i].item<double>()) << name << "[" << i << "]";
    }
  }
}

TEST(Safetensors, CorruptFiles) {
  TempDir dir;
  const std::string ok_entry = R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string eight(8, '\x01');
  auto make = [&](const std::string& name, const std::string& bytes) {
    write_file(dir.file(name), bytes);
    return dir.file(name);
  };
  // Sanity: the well-formed variant loads.
  EXPECT_EQ(load_safetensors(make("ok", assemble("{" + ok_entry + "}", eight))).tensors.size(), 1u);

  expect_corrupt(dir.file("missing"), {"cannot open"});
  expect_corrupt(make("short", "abc"), {"3 bytes", "truncated"});
  expect_corrupt(make("long_header", le64(1000) + "{}"),
                 {"header length 1000 exceeds the file size"});
  expect_corrupt(make("huge_header", le64(~uint64_t{0})), {"exceeds the file size"});
  expect_corrupt(make("bad_json", assemble("{\"t\": [1, ", "")), {"not valid JSON"});
  expect_corrupt(make("not_brace", assemble(" {}", "")), {"does not start with '{'"});
  expect_corrupt(make("not_object_entry", assemble(R"({"t": 5})", "")),
                 {"tensor 't'", "dtype, shape and data_offsets"});
  expect_corrupt(
      make("dtype", assemble(R"({"t":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})", eight)),
      {"tensor 't'", "unknown or unsupported dtype \"C64\""});
  expect_corrupt(
      make("neg_shape",
           assemble(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight)),
      {"tensor 't'", "non-negative"});
  expect_corrupt(
      make("size", assemble(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight)),
      {"tensor 't'", "do not match shape [3] of F32 (12 bytes)"});
  expect_corrupt(make("reversed",
                      assemble(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", eight)),
                 {"tensor 't'", "[8, 0]"});
  expect_corrupt(
      make("range", assemble(R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight)),
      {"tensor 't'", "beyond the 8 byte data buffer"});
  expect_corrupt(
      make("overlap", assemble(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                               eight + "1234")),
      {"tensor 'b'", "overlap"});
  expect_corrupt(
      make("gap", assemble(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight)),
      {"tensor 't'", "gap"});
  expect_corrupt(make("trailing", assemble("{" + ok_entry + "}", eight + "xx")),
                 {"trailing bytes"});
  expect_corrupt(make("dup", assemble("{" + ok_entry + "," + ok_entry + "}", eight)),
                 {"duplicate key 't'"});
  expect_corrupt(make("bool", assemble(R"({"t":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})",
                                       hex_bytes({1, 2}))),
                 {"tensor 't'", "byte value 2"});
  expect_corrupt(make("meta", assemble(R"({"__metadata__":{"k":1}})", "")),
                 {"__metadata__", "'k'"});
}

TEST(Safetensors, WriterErrors) {
  TempDir dir;
  EXPECT_THROW(save_safetensors(dir.file("a"), {{"u", torch::Tensor()}}), CheckpointError);
  EXPECT_THROW(save_safetensors(dir.file("a"), {{"__metadata__", torch::ones({1})}}),
               CheckpointError);
  try {
    save_safetensors(dir.file("a"), {{"c", torch::ones({2}, torch::kComplexFloat)}});
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'c'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(save_safetensors(dir.file("no/such/dir/a"), {{"x", torch::ones({1})}}), IoError);
  EXPECT_FALSE(fs::exists(dir.file("a")));
  // An empty file (no tensors) is valid.
  save_safetensors(dir.file("empty"), {});
  EXPECT_TRUE(load_safetensors(dir.file("empty")).tensors.empty());
}

TEST(Safetensors, FailedWriteLeavesNoFile) {
  // A file size limit makes the data write fail half way (EFBIG instead of SIGXFSZ).
  TempDir dir;
  save_safetensors(dir.file("x"), {{"old", torch::ones({1})}});
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw_io_error = false;
  try {
    save_safetensors(dir.file("x"), {{"big", torch::ones({1 << 20})}});
  } catch (const IoError& e) {
    threw_io_error = std::string(e.what()).find(dir.file("x.tmp")) != std::string::npos;
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw_io_error);
  EXPECT_FALSE(fs::exists(dir.file("x.tmp")));
  // The previous file is intact.
  EXPECT_EQ(load_safetensors(dir.file("x")).tensors.count("old"), 1u);
}

TEST(Safetensors, ZeroStretchesRoundTripAsHoles) {
  // The writer skips all-zero 64 KiB stretches of the file (holes): values next to, inside and
  // across stretch boundaries, a tensor that is zero but for its last byte, a trailing zero tensor
  // (the file ends in a hole) and a small tensor between two zero ones read back exactly.
  TempDir dir;
  auto mostly_zero = torch::zeros({3 << 16}, torch::kFloat32);  // 768 KiB
  auto acc = mostly_zero.accessor<float, 1>();
  for (int64_t i : {int64_t{0}, int64_t{16383}, int64_t{16384}, int64_t{40000}, int64_t{(3 << 16) - 1}}) {
    acc[i] = static_cast<float>(i + 1);
  }
  auto last_byte = torch::zeros({1 << 17}, torch::kUInt8);
  last_byte[(1 << 17) - 1] = 7;
  const std::map<std::string, torch::Tensor> tensors = {
      {"a_mostly_zero", mostly_zero},
      {"b_last_byte", last_byte},
      {"c_zero", torch::zeros({1 << 16}, torch::kFloat64)},
      {"d_small", torch::arange(5, torch::kInt64)},
      {"e_zero", torch::zeros({1 << 18}, torch::kFloat32)},
  };
  const std::string path = dir.file("holes.safetensors");
  save_safetensors(path, tensors);
  const auto loaded = load_safetensors(path).tensors;
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    ASSERT_EQ(loaded.count(name), 1u) << name;
    EXPECT_TRUE(torch::equal(loaded.at(name), t)) << name;
  }
  // Where the file system makes holes, most of the 3.5 MiB of data takes no blocks.
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const off_t first_hole = ::lseek(fd, 0, SEEK_HOLE);
  ::close(fd);
  if (first_hole < 0 || first_hole >= st.st_size) {
    GTEST_SKIP() << "the file system of " << path << " reports no holes";
  }
  EXPECT_LT(static_cast<int64_t>(st.st_blocks) * 512, st.st_size / 2);
}

// ---- partial reads ------------------------------------------------------------------------------

TEST(SafetensorsPartial, HeaderOnly) {
  TempDir dir;
  const std::string path = dir.file("x.safetensors");
  // Hand-written: I64 first, then F32; the header is not padded (any length is valid).
  const std::string header =
      R"({"__metadata__":{"k":"v"},"b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},)"
      R"("a":{"dtype":"I64","shape":[2,1],"data_offsets":[0,16]}})";
  write_file(path, assemble(header, std::string(24, '\0')));
  const SafetensorsHeader h = read_safetensors_header(path);
  EXPECT_EQ(h.path, path);
  EXPECT_EQ(h.data_start, 8 + header.size());
  EXPECT_EQ(h.metadata, (std::map<std::string, std::string>{{"k", "v"}}));
  ASSERT_EQ(h.tensors.size(), 2u);
  EXPECT_EQ(h.tensors.at("a").dtype, torch::kInt64);
  EXPECT_EQ(h.tensors.at("a").shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(h.tensors.at("a").begin, 0u);
  EXPECT_EQ(h.tensors.at("a").end, 16u);
  EXPECT_EQ(h.tensors.at("b").dtype, torch::kFloat32);
  EXPECT_EQ(h.tensors.at("b").begin, 16u);
  // Validated like load_safetensors.
  write_file(dir.file("short"), "abc");
  EXPECT_THROW(read_safetensors_header(dir.file("short")), CheckpointError);
  write_file(dir.file("gap"), assemble(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                        std::string(8, '\0')));
  try {
    read_safetensors_header(dir.file("gap"));
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("gap"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_safetensors_header(dir.file("missing")), CheckpointError);
}

TEST(SafetensorsPartial, RowsAndBlocks) {
  TempDir dir;
  const std::string path = dir.file("x.safetensors");
  // narrow: 4-byte rows gaps (chunked reads, several chunks); wide: 32 KiB rows (row by row).
  const torch::Tensor narrow = torch::arange(3000 * 1024, torch::kInt32).reshape({3000, 1024});
  const torch::Tensor wide = torch::arange(5 * 8192, torch::kFloat32).reshape({5, 8192});
  const torch::Tensor vec = torch::arange(10, torch::kInt64);
  const torch::Tensor cube = torch::arange(24, torch::kInt16).reshape({4, 3, 2});
  const torch::Tensor scalar = torch::tensor(2.5);
  save_safetensors(
      path, {{"narrow", narrow}, {"wide", wide}, {"vec", vec}, {"cube", cube}, {"scalar", scalar}});
  const SafetensorsHeader h = read_safetensors_header(path);

  EXPECT_TRUE(torch::equal(read_safetensors_tensor(h, "narrow"), narrow));
  EXPECT_TRUE(torch::equal(read_safetensors_tensor(h, "scalar"), scalar));
  EXPECT_TRUE(torch::equal(read_safetensors_rows(h, "vec", 3, 4),
                           torch::tensor({3, 4, 5, 6}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(read_safetensors_rows(h, "cube", 1, 2), cube.slice(0, 1, 3)));
  EXPECT_EQ(read_safetensors_rows(h, "vec", 10, 0).numel(), 0);
  // Full-width rows (one pread), a column range over several chunks, row by row.
  EXPECT_TRUE(
      torch::equal(read_safetensors_block(h, "narrow", 7, 100, 0, 1024), narrow.slice(0, 7, 107)));
  const torch::Tensor n = read_safetensors_block(h, "narrow", 0, 3000, 1, 1000);
  EXPECT_EQ(n[2999][0].item<int32_t>(), 2999 * 1024 + 1);  // hand-checked corner
  EXPECT_TRUE(torch::equal(n, narrow.slice(1, 1, 1001)));
  const torch::Tensor w = read_safetensors_block(h, "wide", 1, 3, 100, 50);
  EXPECT_EQ(w[0][0].item<float>(), 8192.0f + 100.0f);
  EXPECT_TRUE(torch::equal(w, wide.slice(0, 1, 4).slice(1, 100, 150)));
  // Into a slice of a larger tensor (rows 2 apart in memory).
  torch::Tensor big = torch::full({4, 6}, -1, torch::kInt32);
  read_safetensors_block_into(h, "narrow", 10, 20, big.slice(0, 1, 3).slice(1, 2, 5));
  EXPECT_TRUE(
      torch::equal(big.slice(0, 1, 3).slice(1, 2, 5), narrow.slice(0, 10, 12).slice(1, 20, 23)));
  EXPECT_EQ(big[0][0].item<int32_t>(), -1);
  EXPECT_EQ(big[1][5].item<int32_t>(), -1);
  // 1-D tensors as a column: into an [n, 1] view.
  torch::Tensor v = torch::zeros({3}, torch::kInt64);
  read_safetensors_block_into(h, "vec", 7, 0, v.unsqueeze(1));
  EXPECT_TRUE(torch::equal(v, torch::tensor({7, 8, 9}, torch::kInt64)));

  auto expect = [&](const std::function<void()>& fn, const std::string& fragment) {
    try {
      fn();
      ADD_FAILURE() << "expected CheckpointError with " << fragment;
    } catch (const CheckpointError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    }
  };
  expect([&] { read_safetensors_tensor(h, "nope"); }, "no tensor 'nope'");
  expect([&] { read_safetensors_rows(h, "vec", 8, 3); }, "rows [8, 11) lie outside [0, 10)");
  expect([&] { read_safetensors_rows(h, "vec", -1, 1); }, "rows [-1, 0)");
  expect([&] { read_safetensors_rows(h, "scalar", 0, 1); }, "0-D");
  expect([&] { read_safetensors_block(h, "vec", 0, 1, 0, 1); }, "needs a 2-D tensor");
  expect([&] { read_safetensors_block(h, "wide", 0, 1, 8000, 200); },
         "columns [8000, 8200) lie outside [0, 8192)");
  // The file shrank after the header was read.
  fs::resize_file(path, fs::file_size(path) - 8);
  expect([&] { read_safetensors_tensor(h, "wide"); }, "file changed while reading");
}

TEST(SafetensorsPartial, BoolBytesCheckedOnlyWhereRead) {
  TempDir dir;
  const std::string path = dir.file("b.safetensors");
  write_file(path, assemble(R"({"t":{"dtype":"BOOL","shape":[3,2],"data_offsets":[0,6]}})",
                             hex_bytes({1, 0, 0, 1, 5, 1})));
  const SafetensorsHeader h = read_safetensors_header(path);
  EXPECT_TRUE(torch::equal(read_safetensors_rows(h, "t", 0, 2),
                           torch::tensor({1, 0, 0, 1}, torch::kBool).reshape({2, 2})));
  EXPECT_TRUE(
      torch::equal(read_safetensors_block(h, "t", 2, 1, 1, 1), torch::ones({1, 1}, torch::kBool)));
  try {
    read_safetensors_block(h, "t", 1, 2, 0, 1);
    FAIL() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("element 4 has byte value 5"), std::string::npos)
        << e.what();
  }
}

}  // namespace safetensors_test
}  // namespace tzrec::checkpointing
