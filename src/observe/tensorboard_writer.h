// TensorBoard event files written without TensorFlow, protobuf schemas or torch.
//
// File layout (TFRecord): per record
//   uint64 length | uint32 masked_crc32c(length bytes) | data[length] | uint32 masked_crc32c(data)
// all little endian; data is one serialized tensorflow.Event. The first event of a file carries
// file_version "brain.Event:2"; every later one a Summary with one value (a scalar or a histogram),
// as torch.utils.tensorboard.SummaryWriter writes them. The few protobuf messages needed are
// encoded by hand (proto3 rules: plain fields equal to zero are omitted, oneof members never).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tzrec::observe {

// tensorflow.HistogramProto. Bucket i counts values in [bucket_limit[i-1], bucket_limit[i]);
// bucket 0 is an empty bucket whose limit is the left edge of the first occupied bucket.
struct TensorBoardHistogram {
  double min = 0;
  double max = 0;
  double num = 0;
  double sum = 0;
  double sum_squares = 0;
  std::vector<double> bucket_limit;
  std::vector<double> bucket;
};

// One tensorflow.Summary.Value: a scalar (simple_value) or a histogram (histo).
struct TensorBoardValue {
  std::string tag;
  std::optional<float> simple_value;
  std::optional<TensorBoardHistogram> histo;
};

// One tensorflow.Event.
struct TensorBoardEvent {
  double wall_time = 0;  // seconds since the Unix epoch
  int64_t step = 0;
  std::string file_version;              // set on the first event of a file only
  std::vector<TensorBoardValue> values;  // Event.summary.value
};

// TensorBoard's default histogram bucket edges, as torch.utils.tensorboard's SummaryWriter builds
// them (after TensorFlow's histogram.cc): v = 1e-12, multiplied by 1.1 while v < 1e20, mirrored
// around 0: [-v_last, ..., -1e-12, 0, 1e-12, ..., v_last], 1549 edges, ascending.
const std::vector<double>& default_histogram_edges();

// Histogram of values[0, n) over default_histogram_edges(), with the semantics of
// torch.utils.tensorboard.summary.make_histogram (numpy.histogram over the edges, the last edge
// inclusive, then trimmed to the occupied range): min / max / num / sum / sum_squares cover all
// values (a NaN makes them NaN, like numpy); only finite values within the edges are bucketed.
// Throws std::invalid_argument when n == 0 or no value falls within the edges (torch raises too).
TensorBoardHistogram make_histogram(const double* values, size_t n);
TensorBoardHistogram make_histogram(const float* values, size_t n);

// Name of an event file, exactly as tensorboard's EventFileWriter (used by torch's SummaryWriter)
// names it: "events.out.tfevents.{floor(unix_seconds):010d}.{hostname}.{pid}.{uid}{suffix}",
// uid counting writers created by this process from 0.
std::string tensorboard_event_file_name(double unix_seconds, const std::string& hostname, int64_t pid,
                                        uint64_t uid, const std::string& suffix);

// Writes one event file in `log_dir` (created with its parents if missing). Thread-safe: every
// method may be called concurrently. Events are buffered and written out by flush(), close(), the
// destructor, and by the first add_* call after `flush_secs` have passed since the last flush.
// I/O failures throw tzrec::IoError naming the file.
class TensorBoardWriter {
 public:
  struct Options {
    std::string filename_suffix;  // appended to the file name, like SummaryWriter(filename_suffix=)
    double flush_secs = 120;      // SummaryWriter's default
  };

  explicit TensorBoardWriter(const std::string& log_dir);
  TensorBoardWriter(const std::string& log_dir, Options options);
  ~TensorBoardWriter();  // close(); errors are logged, not thrown
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // Full path of the event file.
  const std::string& path() const { return path_; }

  // `wall_time` defaults to now (seconds since the Unix epoch). The value is stored as float32,
  // as in Summary.Value.simple_value.
  void add_scalar(const std::string& tag, double value, int64_t step,
                  std::optional<double> wall_time = std::nullopt);

  // Histogram of values (see make_histogram; throws std::invalid_argument naming the tag when
  // there is nothing to bucket).
  void add_histogram(const std::string& tag, const std::vector<double>& values, int64_t step,
                     std::optional<double> wall_time = std::nullopt);
  void add_histogram(const std::string& tag, const double* values, size_t n, int64_t step,
                     std::optional<double> wall_time = std::nullopt);
  void add_histogram(const std::string& tag, const float* values, size_t n, int64_t step,
                     std::optional<double> wall_time = std::nullopt);
  // A histogram computed elsewhere (e.g. merged across ranks).
  void add_histogram(const std::string& tag, const TensorBoardHistogram& histogram, int64_t step,
                     std::optional<double> wall_time = std::nullopt);

  // Writes buffered events to the file.
  void flush();
  // Flushes and closes the file; later add_* calls throw std::logic_error. Idempotent.
  void close();

 private:
  void write_event(const TensorBoardEvent& event);
  void flush_locked();

  std::string path_;
  double flush_secs_;
  std::mutex mu_;
  std::FILE* file_ = nullptr;  // guarded by mu_; null once closed
  double last_flush_time_ = 0;  // guarded by mu_
};

// Serialized tensorflow.Event (proto3 wire format) and its TFRecord framing; exposed for tests.
std::string encode_tensorboard_event(const TensorBoardEvent& event);
std::string frame_tfrecord(const std::string& data);

// Reads every event of an event file, verifying both CRCs of every record. A bad CRC, a
// truncated record or malformed protobuf throws tzrec::DataError naming the file, the record index
// (0 = the file_version event) and its byte offset; an unreadable file throws tzrec::IoError.
// Unknown protobuf fields (graphs, images, plugin metadata, ...) are skipped.
std::vector<TensorBoardEvent> read_tensorboard_events(const std::string& path);

}  // namespace tzrec::observe
