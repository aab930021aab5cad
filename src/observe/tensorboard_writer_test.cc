#include "observe/tensorboard_writer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::observe {
namespace tensorboard_writer_test {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

using data::testing::read_file;
using data::testing::TempDir;
using data::testing::write_file;



std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

uint64_t bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

// Runs tests/tools/read_tfevents.py; returns its exit status and stdout lines.
int run_python_tool(const std::string& mode, const std::string& input, const fs::path& out_dir,
                    std::vector<std::string>* lines) {
  const std::string script = std::string(TZREC_SOURCE_DIR) + "/tests/tools/read_tfevents.py";
  const fs::path out = out_dir / "python_out.txt";
  const fs::path err = out_dir / "python_err.txt";
  const std::string cmd = fmt::format("{} '{}' {} '{}' > '{}' 2> '{}'", kPython, script, mode, input, out.string(),
                                      err.string());
  const int status = std::system(cmd.c_str());
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) lines->push_back(line);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) std::cerr << "python stderr: " << read_file(err.string()) << "\n";
  return code;
}

double json_double(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    ADD_FAILURE() << "unexpected string " << s;
    return 0;
  }
  return j.get<double>();
}

std::vector<double> json_doubles(const nlohmann::json& j) {
  std::vector<double> out;
  for (const auto& v : j) out.push_back(json_double(v));
  return out;
}

// NaN-aware exact equality.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_same_histogram(const TensorBoardHistogram& a, const TensorBoardHistogram& b) {
  EXPECT_TRUE(same(a.min, b.min)) << a.min << " vs " << b.min;
  EXPECT_TRUE(same(a.max, b.max)) << a.max << " vs " << b.max;
  EXPECT_EQ(a.num, b.num);
  EXPECT_TRUE(same(a.sum, b.sum)) << a.sum << " vs " << b.sum;
  EXPECT_TRUE(same(a.sum_squares, b.sum_squares));
  EXPECT_EQ(a.bucket_limit, b.bucket_limit);
  EXPECT_EQ(a.bucket, b.bucket);
}

// The events most tests write: scalars (including a zero value, a NaN, a negative step and an
// explicit wall time) and histograms from float and double inputs.
struct Sample {
  std::vector<float> weights = {0.5f, -0.25f, 0.0f, 3.0f, 1e-13f, -7.5f, 0.5f};
  std::vector<double> grads = {1e-3, 2e-3, -1e-3, 1e6};
};

void write_sample(TensorBoardWriter& writer, const Sample& s) {
  writer.add_scalar("loss/total", 0.6931471805599453, 1, 1700000000.25);
  writer.add_scalar("lr/g0", 0.0, 1, 1700000000.5);  // zero must still be written (oneof member)
  writer.add_scalar("metric/auc", std::nan(""), 2, 1700000001.0);
  writer.add_scalar("loss/neg_step", -3.5, -7, 1700000002.0);
  writer.add_histogram("param/w", s.weights.data(), s.weights.size(), 3, 1700000003.0);
  writer.add_histogram("grad/w", s.grads, 3, 1700000004.0);
}

void expect_sample_events(const std::vector<TensorBoardEvent>& events, const Sample& s) {
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_TRUE(events[0].values.empty());
  EXPECT_EQ(events[0].step, 0);
  struct Scalar {
    const char* tag;
    float value;
    int64_t step;
    double wall_time;
  };
  const Scalar scalars[] = {{"loss/total", 0.6931471805599453f, 1, 1700000000.25},
                            {"lr/g0", 0.0f, 1, 1700000000.5},
                            {"metric/auc", std::nanf(""), 2, 1700000001.0},
                            {"loss/neg_step", -3.5f, -7, 1700000002.0}};
  for (size_t i = 0; i < 4; ++i) {
    const TensorBoardEvent& e = events[i + 1];
    SCOPED_TRACE(scalars[i].tag);
    EXPECT_EQ(e.wall_time, scalars[i].wall_time);
    EXPECT_EQ(e.step, scalars[i].step);
    EXPECT_TRUE(e.file_version.empty());
    ASSERT_EQ(e.values.size(), 1u);
    EXPECT_EQ(e.values[0].tag, scalars[i].tag);
    ASSERT_TRUE(e.values[0].simple_value.has_value());
    EXPECT_TRUE(same(*e.values[0].simple_value, scalars[i].value));
    EXPECT_FALSE(e.values[0].histo.has_value());
  }
  ASSERT_EQ(events[5].values.size(), 1u);
  EXPECT_EQ(events[5].values[0].tag, "param/w");
  EXPECT_EQ(events[5].step, 3);
  ASSERT_TRUE(events[5].values[0].histo.has_value());
  expect_same_histogram(*events[5].values[0].histo, make_histogram(s.weights.data(), s.weights.size()));
  ASSERT_EQ(events[6].values.size(), 1u);
  EXPECT_EQ(events[6].values[0].tag, "grad/w");
  EXPECT_EQ(events[6].wall_time, 1700000004.0);
  ASSERT_TRUE(events[6].values[0].histo.has_value());
  expect_same_histogram(*events[6].values[0].histo, make_histogram(s.grads.data(), s.grads.size()));
}

TEST(TensorBoardWriter, WritesAndReadsBackScalarsAndHistograms) {
  TempDir dir;
  Sample s;
  std::string path;
  const double before = std::floor(static_cast<double>(time(nullptr)));
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    write_sample(writer, s);
  }  // destructor closes
  const auto events = read_tensorboard_events(path);
  expect_sample_events(events, s);
  EXPECT_GE(events[0].wall_time, before);
  EXPECT_LE(events[0].wall_time, static_cast<double>(time(nullptr)) + 1);
}

TEST(TensorBoardWriter, FileNameFollowsTensorBoard) {
  EXPECT_EQ(tensorboard_event_file_name(1700000000.9, "host-a", 4321, 2, ""),
            "events.out.tfevents.1700000000.host-a.4321.2");
  EXPECT_EQ(tensorboard_event_file_name(42.0, "h", 1, 0, ".eval"), "events.out.tfevents.0000000042.h.1.0.eval");

  TempDir dir;
  TensorBoardWriter a(dir.path());
  TensorBoardWriter b(dir.path(), TensorBoardWriter::Options{".sfx", 120});
  EXPECT_NE(a.path(), b.path());  // same second, same process: the uid keeps them apart
  char host[256] = {0};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  const std::string name = fs::path(a.path()).filename().string();
  const std::string prefix = "events.out.tfevents.";
  ASSERT_EQ(name.rfind(prefix, 0), 0u) << name;
  const std::string rest = name.substr(prefix.size());  // "<10 digits>.<host>.<pid>.<uid>"
  ASSERT_GE(rest.size(), 11u);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(rest[i]))) << name;
  EXPECT_EQ(rest.substr(10, std::string(host).size() + 2), "." + std::string(host) + ".") << name;
  EXPECT_NE(name.find(fmt::format(".{}.{}", host, getpid())), std::string::npos) << name;
  EXPECT_EQ(fs::path(a.path()).parent_path(), dir.path());
  const std::string name_b = fs::path(b.path()).filename().string();
  EXPECT_EQ(name_b.substr(name_b.size() - 4), ".sfx");
}

TEST(TensorBoardWriter, CreatesMissingDirectories) {
  TempDir dir;
  const fs::path nested = fs::path(dir.path()) / "model_dir" / "eval_val";
  TensorBoardWriter writer(nested.string());
  EXPECT_TRUE(fs::is_directory(nested));
  EXPECT_TRUE(fs::is_regular_file(writer.path()));
}

TEST(TensorBoardWriter, UnwritableDirectoryThrowsIoErrorNamingIt) {
  TempDir dir;
  const fs::path not_a_dir = fs::path(dir.path()) / "plain_file";
  write_file(not_a_dir.string(), "x");
  try {
    TensorBoardWriter writer((not_a_dir / "sub").string());
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(not_a_dir.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_tensorboard_events((fs::path(dir.path()) / "missing").string()), IoError);
}

// Hand-encoded bytes: Event{wall_time=1.5 (fixed64), step=3 (varint), summary{value{tag "a",
// simple_value 2.0f (fixed32)}}}.
TEST(TensorBoardWriter, EncodesProtobufWireFormat) {
  TensorBoardEvent e;
  e.wall_time = 1.5;
  e.step = 3;
  e.values.push_back(TensorBoardValue{"a", 2.0f, std::nullopt});
  EXPECT_EQ(hex(encode_tensorboard_event(e)),
            "09000000000000f83f"  // field 1, wire 1: 1.5
            "1003"                // field 2, wire 0: 3
            "2a0a"                // field 5, 10 bytes: Summary
            "0a08"                // Summary.value, 8 bytes
            "0a0161"              // tag "a"
            "1500000040");        // simple_value 2.0f

  // proto3: zero wall_time/step omitted; a zero simple_value (oneof) kept; negative step takes
  // 10 varint bytes.
  TensorBoardEvent z;
  z.step = -1;
  z.values.push_back(TensorBoardValue{"z", 0.0f, std::nullopt});
  EXPECT_EQ(hex(encode_tensorboard_event(z)), "10ffffffffffffffffff01" "2a0a" "0a08" "0a017a" "1500000000");

  TensorBoardEvent first;
  first.wall_time = 1.5;
  first.file_version = "brain.Event:2";
  EXPECT_EQ(hex(encode_tensorboard_event(first)), "09000000000000f83f" "1a0d" + hex("brain.Event:2"));

  // HistogramProto: doubles 1..5 as fixed64, then packed bucket_limit (6) and bucket (7).
  TensorBoardEvent h;
  TensorBoardHistogram histo;
  histo.min = -1.5;
  histo.num = 1.5;  // max, sum, sum_squares stay 0 and are omitted
  histo.bucket_limit = {1.5};
  histo.bucket = {2.0};
  h.values.push_back(TensorBoardValue{"h", std::nullopt, histo});
  EXPECT_EQ(hex(encode_tensorboard_event(h)),
            "2a2d"  // summary, 45 bytes
            "0a2b"  // value, 43 bytes
            "0a0168"
            "2a26"                  // histo, 38 bytes
            "09000000000000f8bf"    // min -1.5
            "19000000000000f83f"    // num 1.5
            "3208000000000000f83f"  // bucket_limit [1.5]
            "3a080000000000000040"  // bucket [2.0]
  );
}

// Framing of "123456789": masked CRCs computed independently (tests/tools/read_tfevents.py).
TEST(TensorBoardWriter, FramesTfRecord) {
  EXPECT_EQ(hex(frame_tfrecord("123456789")),
            "0900000000000000" "37f97139" + hex("123456789") + "e5b08ac7");
}

// read_tensorboard_events(path) must throw a DataError whose message contains every part.
void expect_data_error(const std::string& path, const std::vector<std::string>& parts) {
  try {
    read_tensorboard_events(path);
    ADD_FAILURE() << "expected DataError";
  } catch (const DataError& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(TensorBoardWriter, CorruptByteIsReportedWithRecordIndex) {
  TempDir dir;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    writer.add_scalar("a", 1.0, 1);
    writer.add_scalar("b", 2.0, 2);
  }
  const std::string good = read_file(path);
  // Record layout: [8 length][4 crc][data][4 crc]; find where records 1 and 2 start.
  auto record_length = [&](size_t start) {
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(good[start + i])) << (8 * i);
    return static_cast<size_t>(n);
  };
  const size_t rec1 = 16 + record_length(0);
  const size_t rec2 = rec1 + 16 + record_length(rec1);
  ASSERT_EQ(rec2 + 16 + record_length(rec2), good.size());
  // Flip one data byte of record 1.
  std::string bad = good;
  bad[rec1 + 12 + 3] ^= 0x01;
  write_file(path, bad);
  expect_data_error(path, {"record 1 ", "data CRC", path});
  // Flip a length byte of record 2.
  bad = good;
  bad[rec2 + 1] ^= 0x40;
  write_file(path, bad);
  expect_data_error(path, {"record 2 ", "length CRC"});
  // Truncated last record.
  write_file(path, good.substr(0, good.size() - 3));
  expect_data_error(path, {"record 2 ", "truncated"});
}

TEST(TensorBoardWriter, ReaderSkipsUnknownFieldsAndAcceptsUnpackedDoubles) {
  TempDir dir;
  // Event{wall_time 1.5, field 4 (graph_def bytes) "xyz", field 7 varint 9,
  //       summary{value{tag "t", field 9 (metadata) "md", histo{field 6 unpacked 1.5, 7 unpacked 2.0}}}}.
  const std::string histo = std::string("\x31", 1) + std::string("\x00\x00\x00\x00\x00\x00\xf8\x3f", 8) +
                            std::string("\x39", 1) + std::string("\x00\x00\x00\x00\x00\x00\x00\x40", 8);
  const std::string value = std::string("\x0a\x01t") + "\x4a\x02md" + "\x2a" + char(histo.size()) + histo;
  const std::string summary = std::string("\x0a") + char(value.size()) + value;
  const std::string event = std::string("\x09\x00\x00\x00\x00\x00\x00\xf8\x3f", 9) + "\x22\x03xyz" + "\x38\x09" +
                            "\x2a" + char(summary.size()) + summary;
  const std::string path = (fs::path(dir.path()) / "events.out.tfevents.handmade").string();
  write_file(path, frame_tfrecord(event));
  const auto events = read_tensorboard_events(path);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].wall_time, 1.5);
  ASSERT_EQ(events[0].values.size(), 1u);
  EXPECT_EQ(events[0].values[0].tag, "t");
  ASSERT_TRUE(events[0].values[0].histo.has_value());
  EXPECT_EQ(events[0].values[0].histo->bucket_limit, std::vector<double>{1.5});
  EXPECT_EQ(events[0].values[0].histo->bucket, std::vector<double>{2.0});
}

TEST(TensorBoardWriter, FlushPolicy) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path());  // flush_secs 120
    EXPECT_EQ(read_tensorboard_events(writer.path()).size(), 1u);  // file_version flushed at once
    writer.add_scalar("a", 1.0, 1);
    EXPECT_EQ(read_tensorboard_events(writer.path()).size(), 1u);  // still buffered
    writer.flush();
    EXPECT_EQ(read_tensorboard_events(writer.path()).size(), 2u);
  }
  {
    TensorBoardWriter writer((fs::path(dir.path()) / "eager").string(), TensorBoardWriter::Options{"", 0});
    writer.add_scalar("a", 1.0, 1);
    writer.add_scalar("b", 2.0, 2);
    EXPECT_EQ(read_tensorboard_events(writer.path()).size(), 3u);  // flush_secs 0: every event
  }
}

TEST(TensorBoardWriter, CloseIsIdempotentAndLaterWritesThrow) {
  TempDir dir;
  TensorBoardWriter writer(dir.path());
  writer.add_scalar("a", 1.0, 1);
  writer.close();
  writer.close();
  EXPECT_EQ(read_tensorboard_events(writer.path()).size(), 2u);
  EXPECT_THROW(writer.add_scalar("a", 1.0, 2), std::logic_error);
}

TEST(TensorBoardWriter, ConcurrentWritersLoseNothing) {
  TempDir dir;
  constexpr int kThreads = 4;
  constexpr int kSteps = 200;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&writer, t] {
        std::vector<double> values = {1.0 * t, 2.0, 3.0};
        for (int step = 0; step < kSteps; ++step) {
          if (step % 10 == 0) {
            writer.add_histogram(fmt::format("h/{}", t), values, step);
          } else {
            writer.add_scalar(fmt::format("s/{}", t), step * 0.5, step);
          }
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  const auto events = read_tensorboard_events(path);
  ASSERT_EQ(events.size(), 1u + kThreads * kSteps);
  std::map<std::string, std::set<int64_t>> steps;
  for (size_t i = 1; i < events.size(); ++i) {
    ASSERT_EQ(events[i].values.size(), 1u);
    const auto& v = events[i].values[0];
    if (v.simple_value) {
      EXPECT_EQ(*v.simple_value, static_cast<float>(events[i].step * 0.5));
    }
    steps[v.tag].insert(events[i].step);
  }
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(steps[fmt::format("s/{}", t)].size(), static_cast<size_t>(kSteps - kSteps / 10));
    EXPECT_EQ(steps[fmt::format("h/{}", t)].size(), static_cast<size_t>(kSteps / 10));
  }
}

// ---- histograms --------------------------------------------------------------------------------

TEST(TensorBoardHistogram, DefaultEdges) {
  const auto& e = default_histogram_edges();
  ASSERT_EQ(e.size(), 1549u);  // 774 negative, 0, 774 positive (Python: len(SummaryWriter().default_bins))
  EXPECT_EQ(e[774], 0.0);
  EXPECT_EQ(e[775], 1e-12);
  EXPECT_EQ(e[773], -1e-12);
  EXPECT_EQ(e[776], 1.1000000000000002e-12);  // 1e-12 * 1.1 in double, as Python computes it
  EXPECT_EQ(e.back(), 9.920775621859783e+19);  // last 1e-12 * 1.1^k below 1e20
  EXPECT_EQ(e.front(), -e.back());
  EXPECT_TRUE(std::is_sorted(e.begin(), e.end()));
}

TEST(TensorBoardHistogram, SingleZero) {
  const double zero = 0.0;
  const TensorBoardHistogram h = make_histogram(&zero, 1);
  EXPECT_EQ(h.min, 0.0);
  EXPECT_EQ(h.max, 0.0);
  EXPECT_EQ(h.num, 1.0);
  EXPECT_EQ(h.sum, 0.0);
  EXPECT_EQ(h.sum_squares, 0.0);
  // 0 falls in [0, 1e-12); an empty leading bucket carries the left edge.
  EXPECT_EQ(h.bucket_limit, (std::vector<double>{0.0, 1e-12}));
  EXPECT_EQ(h.bucket, (std::vector<double>{0.0, 1.0}));
}

TEST(TensorBoardHistogram, BinsAreLeftInclusiveAndKeepInteriorEmptyBins) {
  const auto& e = default_histogram_edges();
  const std::vector<double> values = {e[800], e[800], e[805]};
  const TensorBoardHistogram h = make_histogram(values.data(), values.size());
  EXPECT_EQ(h.bucket_limit, std::vector<double>(e.begin() + 800, e.begin() + 807));
  EXPECT_EQ(h.bucket, (std::vector<double>{0, 2, 0, 0, 0, 0, 1}));
  EXPECT_EQ(h.min, e[800]);
  EXPECT_EQ(h.max, e[805]);
  EXPECT_EQ(h.sum, e[800] + e[800] + e[805]);
  EXPECT_EQ(h.sum_squares, e[800] * e[800] + e[800] * e[800] + e[805] * e[805]);
}

TEST(TensorBoardHistogram, LastEdgeInclusiveOutOfRangeAndNanNotBucketed) {
  const auto& e = default_histogram_edges();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {e.back(), 1e25, -inf};
  TensorBoardHistogram h = make_histogram(values.data(), values.size());
  EXPECT_EQ(h.num, 3.0);
  EXPECT_EQ(h.min, -inf);
  EXPECT_EQ(h.max, 1e25);
  EXPECT_EQ(h.bucket_limit, (std::vector<double>{e[1547], e[1548]}));
  EXPECT_EQ(h.bucket, (std::vector<double>{0, 1}));

  const std::vector<float> with_nan = {1.0f, std::nanf("")};
  h = make_histogram(with_nan.data(), with_nan.size());
  EXPECT_EQ(h.num, 2.0);
  EXPECT_TRUE(std::isnan(h.min));  // like numpy's min/max/sum
  EXPECT_TRUE(std::isnan(h.max));
  EXPECT_TRUE(std::isnan(h.sum));
  double bucketed = 0;
  for (double c : h.bucket) bucketed += c;
  EXPECT_EQ(bucketed, 1.0);
}

TEST(TensorBoardHistogram, NothingToBucketThrowsNamingTheTag) {
  EXPECT_THROW(make_histogram(static_cast<const double*>(nullptr), 0), std::invalid_argument);
  const std::vector<double> bad = {std::nan(""), 1e30};
  EXPECT_THROW(make_histogram(bad.data(), bad.size()), std::invalid_argument);
  TempDir dir;
  TensorBoardWriter writer(dir.path());
  try {
    writer.add_histogram("grad/emb", bad, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("grad/emb"), std::string::npos) << e.what();
  }
  writer.close();
  EXPECT_EQ(read_tensorboard_events(writer.path()).size(), 1u);  // nothing half-written
}

// ---- independent Python reference (tests/tools/read_tfevents.py) -------------------------------

void skip_without_python() {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " not found";
}

TensorBoardHistogram histogram_from_json(const nlohmann::json& j) {
  TensorBoardHistogram h;
  h.min = json_double(j.at("min"));
  h.max = json_double(j.at("max"));
  h.num = json_double(j.at("num"));
  h.sum = json_double(j.at("sum"));
  h.sum_squares = json_double(j.at("sum_squares"));
  h.bucket_limit = json_doubles(j.at("bucket_limit"));
  h.bucket = json_doubles(j.at("bucket"));
  return h;
}

TEST(TensorBoardPython, IndependentDecoderReadsOurFile) {
  skip_without_python();
  if (::testing::Test::IsSkipped()) return;
  TempDir dir;
  Sample s;
  std::string path;
  {
    TensorBoardWriter writer(dir.path());
    path = writer.path();
    write_sample(writer, s);
  }
  std::vector<std::string> lines;
  ASSERT_EQ(run_python_tool("events", path, dir.path(), &lines), 0);
  std::vector<TensorBoardEvent> events;
  for (const auto& line : lines) {
    const auto j = nlohmann::json::parse(line);
    TensorBoardEvent e;
    e.wall_time = json_double(j.at("wall_time"));
    e.step = j.at("step").get<int64_t>();
    e.file_version = j.at("file_version").get<std::string>();
    for (const auto& v : j.at("values")) {
      TensorBoardValue value;
      value.tag = v.at("tag").get<std::string>();
      if (v.contains("simple_value")) value.simple_value = static_cast<float>(json_double(v.at("simple_value")));
      if (v.contains("histo")) value.histo = histogram_from_json(v.at("histo"));
      e.values.push_back(std::move(value));
    }
    events.push_back(std::move(e));
  }
  expect_sample_events(events, s);
  // Our reader and the Python one agree on the first event's wall time to the bit.
  EXPECT_EQ(bits(events[0].wall_time), bits(read_tensorboard_events(path)[0].wall_time));

  // The Python checker is not a rubber stamp: a flipped byte makes it fail on that record.
  std::string bytes = read_file(path);
  bytes[bytes.size() - 20] ^= 0x10;  // inside the last record (record 6)
  write_file(path, bytes);
  lines.clear();
  EXPECT_EQ(run_python_tool("events", path, dir.path(), &lines), 1);
  EXPECT_NE(read_file((fs::path(dir.path()) / "python_err.txt").string()).find("record 6"), std::string::npos);
  EXPECT_EQ(lines.size(), 6u);  // records 0..5 decoded before the bad one
}

template <typename T>
void expect_matches_numpy_histogram(const std::vector<T>& values, const fs::path& dir) {
  const fs::path values_path = dir / "values.txt";
  {
    std::ofstream out(values_path);
    for (T v : values) out << fmt::format("{:.17g}\n", static_cast<double>(v));
  }
  std::vector<std::string> lines;
  ASSERT_EQ(run_python_tool("histogram", values_path.string(), dir, &lines), 0);
  ASSERT_EQ(lines.size(), 1u);
  const TensorBoardHistogram expected = histogram_from_json(nlohmann::json::parse(lines[0]));
  const TensorBoardHistogram h = make_histogram(values.data(), values.size());
  EXPECT_EQ(h.min, expected.min);
  EXPECT_EQ(h.max, expected.max);
  EXPECT_EQ(h.num, expected.num);
  // numpy sums pairwise, we sum in order: equal up to rounding.
  EXPECT_NEAR(h.sum, expected.sum, 1e-12 * (std::abs(expected.sum) + expected.sum_squares));
  EXPECT_NEAR(h.sum_squares, expected.sum_squares, 1e-12 * expected.sum_squares);
  EXPECT_EQ(h.bucket_limit, expected.bucket_limit);  // bit-identical edges
  EXPECT_EQ(h.bucket, expected.bucket);
}

TEST(TensorBoardPython, HistogramMatchesTorchSummaryWriterAlgorithm) {
  skip_without_python();
  if (::testing::Test::IsSkipped()) return;
  TempDir dir;
  std::mt19937 rng(42);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> doubles;
  for (int i = 0; i < 3000; ++i) doubles.push_back(normal(rng) * std::pow(10.0, i % 7 - 3));
  const auto& e = default_histogram_edges();
  doubles.insert(doubles.end(), {0.0, 0.0, -0.0, e[900], e[901], e[600], e.back(), 1e25, -1e-15});
  {
    SCOPED_TRACE("double");
    expect_matches_numpy_histogram(doubles, dir.path());
  }
  std::vector<float> floats;
  for (int i = 0; i < 2000; ++i) floats.push_back(static_cast<float>(normal(rng) * 0.01));
  floats.push_back(3.0f);
  {
    SCOPED_TRACE("float");
    expect_matches_numpy_histogram(floats, dir.path());
  }
}

}  // namespace tensorboard_writer_test
}  // namespace tzrec::observe
