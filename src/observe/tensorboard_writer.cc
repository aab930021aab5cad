#include "observe/tensorboard_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "base/crc32c.h"
#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"

namespace tzrec::observe {
namespace {

// ---- protobuf wire format (encoding) --------------------------------------------------------
// Wire types: 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_key(std::string& out, uint32_t field, uint32_t wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void put_le(std::string& out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

uint64_t double_bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

void put_double_field(std::string& out, uint32_t field, double v) {
  put_key(out, field, kFixed64);
  put_le(out, double_bits(v), 8);
}

// proto3 omits a plain (non-oneof) field equal to its default; -0.0 is not the default.
void put_double_unless_zero(std::string& out, uint32_t field, double v) {
  if (double_bits(v) != 0) put_double_field(out, field, v);
}

void put_bytes_field(std::string& out, uint32_t field, const std::string& bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

void put_packed_doubles(std::string& out, uint32_t field, const std::vector<double>& values) {
  if (values.empty()) return;
  put_key(out, field, kLengthDelimited);
  put_varint(out, values.size() * 8);
  for (double v : values) put_le(out, double_bits(v), 8);
}

std::string encode_histogram(const TensorBoardHistogram& h) {
  std::string out;
  put_double_unless_zero(out, 1, h.min);
  put_double_unless_zero(out, 2, h.max);
  put_double_unless_zero(out, 3, h.num);
  put_double_unless_zero(out, 4, h.sum);
  put_double_unless_zero(out, 5, h.sum_squares);
  put_packed_doubles(out, 6, h.bucket_limit);
  put_packed_doubles(out, 7, h.bucket);
  return out;
}

std::string encode_value(const TensorBoardValue& value) {
  std::string out;
  if (!value.tag.empty()) put_bytes_field(out, 1, value.tag);
  // simple_value and histo belong to the oneof `value`: written even when zero.
  if (value.simple_value) {
    uint32_t bits;
    float f = *value.simple_value;
    std::memcpy(&bits, &f, sizeof(bits));
    put_key(out, 2, 5);
    put_le(out, bits, 4);
  }
  if (value.histo) put_bytes_field(out, 5, encode_histogram(*value.histo));
  return out;
}

double now_seconds() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

std::atomic<uint64_t> g_writer_uid{0};

template <typename T>
TensorBoardHistogram make_histogram_impl(const T* values, size_t n) {
  if (n == 0) throw std::invalid_argument("histogram of no values");
  const std::vector<double>& edges = default_histogram_edges();
  const size_t num_bins = edges.size() - 1;
  std::vector<double> counts(num_bins, 0.0);
  TensorBoardHistogram h;
  h.num = static_cast<double>(n);
  h.min = std::numeric_limits<double>::infinity();
  h.max = -std::numeric_limits<double>::infinity();
  bool any_nan = false;
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(values[i]);
    if (std::isnan(v)) {
      any_nan = true;
    } else {
      h.min = std::min(h.min, v);
      h.max = std::max(h.max, v);
    }
    h.sum += v;
    h.sum_squares += v * v;
    // numpy.histogram: bin b holds edges[b] <= v < edges[b + 1], the last bin also v == edges.back();
    // values outside the edges (and NaN) are not counted.
    if (v >= edges.front() && v <= edges.back()) {
      size_t bin = static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin()) - 1;
      if (bin == num_bins) bin = num_bins - 1;
      counts[bin] += 1.0;
    }
  }
  if (any_nan) h.min = h.max = std::numeric_limits<double>::quiet_NaN();
  size_t first = 0;
  while (first < num_bins && counts[first] == 0.0) ++first;
  if (first == num_bins) {
    throw std::invalid_argument(fmt::format(
        "none of the {} values is finite and within +-{:g}; nothing to put into histogram buckets", n,
        edges.back()));
  }
  size_t last = num_bins - 1;
  while (counts[last] == 0.0) --last;
  // TensorBoard keeps right edges only: lead with an empty bucket whose limit is the left edge of
  // the first occupied bin, then one limit (right edge) per bin in [first, last].
  h.bucket_limit.assign(edges.begin() + first, edges.begin() + last + 2);
  h.bucket.reserve(last - first + 2);
  h.bucket.push_back(0.0);
  h.bucket.insert(h.bucket.end(), counts.begin() + first, counts.begin() + last + 1);
  return h;
}

}  // namespace

const std::vector<double>& default_histogram_edges() {
  static const std::vector<double> edges = [] {
    std::vector<double> positive;
    // Same float operations as the Python loop, so the edges are bit-identical.
    for (double v = 1e-12; v < 1e20; v *= 1.1) positive.push_back(v);
    std::vector<double> all;
    all.reserve(2 * positive.size() + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    return all;
  }();
  return edges;
}

TensorBoardHistogram make_histogram(const double* values, size_t n) { return make_histogram_impl(values, n); }
TensorBoardHistogram make_histogram(const float* values, size_t n) { return make_histogram_impl(values, n); }

std::string tensorboard_event_file_name(double unix_seconds, const std::string& hostname, int64_t pid,
                                        uint64_t uid, const std::string& suffix) {
  return fmt::format("events.out.tfevents.{:010d}.{}.{}.{}{}", static_cast<int64_t>(std::floor(unix_seconds)),
                     hostname, pid, uid, suffix);
}

std::string encode_tensorboard_event(const TensorBoardEvent& event) {
  std::string out;
  put_double_unless_zero(out, 1, event.wall_time);
  if (event.step != 0) {
    put_key(out, 2, kVarint);
    put_varint(out, static_cast<uint64_t>(event.step));  // negative int64: 10-byte two's complement
  }
  if (!event.file_version.empty()) put_bytes_field(out, 3, event.file_version);
  if (!event.values.empty()) {
    std::string summary;
    for (const auto& value : event.values) put_bytes_field(summary, 1, encode_value(value));
    put_bytes_field(out, 5, summary);
  }
  return out;
}

std::string frame_tfrecord(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  std::string length;
  put_le(length, data.size(), 8);
  out += length;
  put_le(out, crc32c::mask(crc32c::value(length)), 4);
  out += data;
  put_le(out, crc32c::mask(crc32c::value(data)), 4);
  return out;
}

// ---- TensorBoardWriter ------------------------------------------------------------------------

TensorBoardWriter::TensorBoardWriter(const std::string& log_dir) : TensorBoardWriter(log_dir, Options{}) {}

TensorBoardWriter::TensorBoardWriter(const std::string& log_dir, Options options)
    : flush_secs_(options.flush_secs) {
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) {
    throw IoError(fmt::format("cannot create TensorBoard log directory '{}': {}", log_dir, ec.message()));
  }
  const double now = now_seconds();
  path_ = (std::filesystem::path(log_dir) /
           tensorboard_event_file_name(now, host_name(), getpid(), g_writer_uid.fetch_add(1), options.filename_suffix))
              .string();
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw IoError(fmt::format("cannot create TensorBoard event file '{}': {}", path_, std::strerror(errno)));
  }
  TensorBoardEvent first;
  first.wall_time = now;
  first.file_version = "brain.Event:2";
  write_event(first);
  flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    close();
  } catch (const std::exception& e) {
    log::error("{}", e.what());
  }
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step,
                                   std::optional<double> wall_time) {
  TensorBoardEvent event;
  event.wall_time = wall_time ? *wall_time : now_seconds();
  event.step = step;
  TensorBoardValue v;
  v.tag = tag;
  v.simple_value = static_cast<float>(value);
  event.values.push_back(std::move(v));
  write_event(event);
}

void TensorBoardWriter::add_histogram(const std::string& tag, const std::vector<double>& values, int64_t step,
                                      std::optional<double> wall_time) {
  add_histogram(tag, values.data(), values.size(), step, wall_time);
}

namespace {
template <typename T>
TensorBoardHistogram histogram_for_tag(const std::string& tag, const T* values, size_t n) {
  try {
    return make_histogram(values, n);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("TensorBoard histogram '{}': {}", tag, e.what()));
  }
}
}  // namespace

void TensorBoardWriter::add_histogram(const std::string& tag, const double* values, size_t n, int64_t step,
                                      std::optional<double> wall_time) {
  add_histogram(tag, histogram_for_tag(tag, values, n), step, wall_time);
}

void TensorBoardWriter::add_histogram(const std::string& tag, const float* values, size_t n, int64_t step,
                                      std::optional<double> wall_time) {
  add_histogram(tag, histogram_for_tag(tag, values, n), step, wall_time);
}

void TensorBoardWriter::add_histogram(const std::string& tag, const TensorBoardHistogram& histogram, int64_t step,
                                      std::optional<double> wall_time) {
  TensorBoardEvent event;
  event.wall_time = wall_time ? *wall_time : now_seconds();
  event.step = step;
  TensorBoardValue v;
  v.tag = tag;
  v.histo = histogram;
  event.values.push_back(std::move(v));
  write_event(event);
}

void TensorBoardWriter::write_event(const TensorBoardEvent& event) {
  const std::string record = frame_tfrecord(encode_tensorboard_event(event));
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ == nullptr) throw std::logic_error(fmt::format("TensorBoard event file '{}' is already closed", path_));
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    throw IoError(fmt::format("cannot write TensorBoard event file '{}': {}", path_, std::strerror(errno)));
  }
  if (now_seconds() - last_flush_time_ >= flush_secs_) flush_locked();
}

void TensorBoardWriter::flush_locked() {
  if (file_ == nullptr) return;
  if (std::fflush(file_) != 0) {
    throw IoError(fmt::format("cannot write TensorBoard event file '{}': {}", path_, std::strerror(errno)));
  }
  last_flush_time_ = now_seconds();
}

void TensorBoardWriter::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  flush_locked();
}

void TensorBoardWriter::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ == nullptr) return;
  std::FILE* f = file_;
  file_ = nullptr;
  const bool flushed = std::fflush(f) == 0;
  const int flush_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!flushed || !closed) {
    throw IoError(fmt::format("cannot write TensorBoard event file '{}': {}", path_,
                              std::strerror(flushed ? errno : flush_errno)));
  }
}

// ---- reader ---------------------------------------------------------------------------------
namespace {

uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

double bits_to_double(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

// Cursor over one serialized message; every error names the file and record (`where_`).
class WireReader {
 public:
  WireReader(std::string_view data, const std::string& where) : p_(data.data()), end_(data.data() + data.size()), where_(where) {}

  bool done() const { return p_ == end_; }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1, "varint");
      const auto byte = static_cast<unsigned char>(*p_++);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    fail("varint longer than 10 bytes");
  }
  uint64_t fixed(int bytes) {
    need(bytes, "fixed-width field");
    uint64_t v = get_le(p_, bytes);
    p_ += bytes;
    return v;
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    need(n, "length-delimited field");
    std::string_view out(p_, n);
    p_ += n;
    return out;
  }
  void skip(uint32_t wire_type) {
    switch (wire_type) {
      case 0: varint(); return;
      case 1: fixed(8); return;
      case 2: bytes(); return;
      case 5: fixed(4); return;
      default: fail(fmt::format("unsupported protobuf wire type {}", wire_type));
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(fmt::format("{}: malformed protobuf: {}", where_, what));
  }
  void expect(uint32_t wire_type, uint32_t expected, const char* field) const {
    if (wire_type != expected) fail(fmt::format("{} has wire type {}, expected {}", field, wire_type, expected));
  }

 private:
  void need(uint64_t n, const char* what) const {
    if (static_cast<uint64_t>(end_ - p_) < n) fail(fmt::format("truncated {}", what));
  }
  const char* p_;
  const char* end_;
  const std::string& where_;
};

// Repeated double: packed (wire type 2) or one element per key (wire type 1); parsers accept both.
void read_doubles(WireReader& r, uint32_t wire_type, std::vector<double>& out,
                  const char* field) {
  if (wire_type == kFixed64) {
    out.push_back(bits_to_double(r.fixed(8)));
    return;
  }
  r.expect(wire_type, kLengthDelimited, field);
  std::string_view packed = r.bytes();
  if (packed.size() % 8 != 0) r.fail(fmt::format("packed {} has {} bytes, not a multiple of 8", field, packed.size()));
  for (size_t i = 0; i < packed.size(); i += 8) out.push_back(bits_to_double(get_le(packed.data() + i, 8)));
}

TensorBoardHistogram decode_histogram(std::string_view data, const std::string& where) {
  TensorBoardHistogram h;
  WireReader r(data, where);
  double* scalars[] = {&h.min, &h.max, &h.num, &h.sum, &h.sum_squares};
  while (!r.done()) {
    const uint64_t key = r.varint();
    const auto field = static_cast<uint32_t>(key >> 3);
    const auto wire_type = static_cast<uint32_t>(key & 7);
    if (field >= 1 && field <= 5) {
      r.expect(wire_type, kFixed64, "HistogramProto scalar field");
      *scalars[field - 1] = bits_to_double(r.fixed(8));
    } else if (field == 6) {
      read_doubles(r, wire_type, h.bucket_limit, "HistogramProto.bucket_limit");
    } else if (field == 7) {
      read_doubles(r, wire_type, h.bucket, "HistogramProto.bucket");
    } else {
      r.skip(wire_type);
    }
  }
  if (h.bucket_limit.size() != h.bucket.size()) {
    r.fail(fmt::format("HistogramProto has {} bucket_limit but {} bucket values", h.bucket_limit.size(),
                       h.bucket.size()));
  }
  return h;
}

TensorBoardValue decode_value(std::string_view data, const std::string& where) {
  TensorBoardValue v;
  WireReader r(data, where);
  while (!r.done()) {
    const uint64_t key = r.varint();
    const auto field = static_cast<uint32_t>(key >> 3);
    const auto wire_type = static_cast<uint32_t>(key & 7);
    if (field == 1) {
      r.expect(wire_type, kLengthDelimited, "Summary.Value.tag");
      v.tag = std::string(r.bytes());
    } else if (field == 2) {
      r.expect(wire_type, 5, "Summary.Value.simple_value");
      const auto bits = static_cast<uint32_t>(r.fixed(4));
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      v.simple_value = f;
    } else if (field == 5) {
      r.expect(wire_type, kLengthDelimited, "Summary.Value.histo");
      v.histo = decode_histogram(r.bytes(), where);
    } else {
      r.skip(wire_type);
    }
  }
  return v;
}

TensorBoardEvent decode_event(std::string_view data, const std::string& where) {
  TensorBoardEvent event;
  WireReader r(data, where);
  while (!r.done()) {
    const uint64_t key = r.varint();
    const auto field = static_cast<uint32_t>(key >> 3);
    const auto wire_type = static_cast<uint32_t>(key & 7);
    if (field == 1) {
      r.expect(wire_type, kFixed64, "Event.wall_time");
      event.wall_time = bits_to_double(r.fixed(8));
    } else if (field == 2) {
      r.expect(wire_type, kVarint, "Event.step");
      event.step = static_cast<int64_t>(r.varint());
    } else if (field == 3) {
      r.expect(wire_type, kLengthDelimited, "Event.file_version");
      event.file_version = std::string(r.bytes());
    } else if (field == 5) {
      r.expect(wire_type, kLengthDelimited, "Event.summary");
      WireReader summary(r.bytes(), where);
      while (!summary.done()) {
        const uint64_t skey = summary.varint();
        if ((skey >> 3) == 1) {
          summary.expect(static_cast<uint32_t>(skey & 7), kLengthDelimited, "Summary.value");
          event.values.push_back(decode_value(summary.bytes(), where));
        } else {
          summary.skip(static_cast<uint32_t>(skey & 7));
        }
      }
    } else {
      r.skip(wire_type);
    }
  }
  return event;
}

}  // namespace

std::vector<TensorBoardEvent> read_tensorboard_events(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw IoError(fmt::format("cannot open TensorBoard event file '{}': {}", path, std::strerror(errno)));
  std::string content;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) content.append(buf, got);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) throw IoError(fmt::format("cannot read TensorBoard event file '{}'", path));

  std::vector<TensorBoardEvent> events;
  size_t offset = 0;
  for (size_t index = 0; offset < content.size(); ++index) {
    const std::string where = fmt::format("TensorBoard event file '{}', record {} at byte {}", path, index, offset);
    const size_t left = content.size() - offset;
    if (left < 12) throw DataError(fmt::format("{}: truncated record header ({} bytes left)", where, left));
    const char* p = content.data() + offset;
    const uint64_t length = get_le(p, 8);
    const auto length_crc = static_cast<uint32_t>(get_le(p + 8, 4));
    if (crc32c::mask(crc32c::value(p, 8)) != length_crc) {
      throw DataError(fmt::format("{}: length CRC mismatch (file corrupt)", where));
    }
    if (left - 12 < 4 || length > left - 16) {
      throw DataError(fmt::format("{}: truncated record: {} data bytes announced, {} bytes left", where, length,
                                  left - 12));
    }
    std::string_view data(p + 12, length);
    const auto data_crc = static_cast<uint32_t>(get_le(p + 12 + length, 4));
    if (crc32c::mask(crc32c::value(data.data(), data.size())) != data_crc) {
      throw DataError(fmt::format("{}: data CRC mismatch (file corrupt)", where));
    }
    events.push_back(decode_event(data, where));
    offset += 16 + length;
  }
  return events;
}


}  // namespace tzrec::observe
