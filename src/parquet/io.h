// Random-access input for the reader (a file read with pread, or bytes in memory) and a
// sequential output file for the writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tzrec::parquet {

class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  virtual const std::string& name() const = 0;
  virtual int64_t size() const = 0;
  // Reads exactly n bytes at offset into out. Thread-safe. Throws IoError when the range is not
  // inside the file or the read fails.
  virtual void read_at(int64_t offset, size_t n, uint8_t* out) const = 0;

  // Throws IoError when the file cannot be opened.
  static std::shared_ptr<RandomAccessFile> open(const std::string& path);
  // Bytes in memory (tests, fuzzing, data fetched by other means); `name` is used in messages.
  static std::shared_ptr<RandomAccessFile> from_buffer(std::string bytes, std::string name);
};

class OutputFile {
 public:
  // Creates or truncates `path`; throws IoError.
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t n);
  int64_t position() const { return position_; }
  // Flushes and closes; throws IoError on failure (also reported for writes buffered earlier).
  void close();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t position_ = 0;
};

}  // namespace tzrec::parquet
