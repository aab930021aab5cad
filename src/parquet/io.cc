#include "parquet/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::parquet {
namespace {

class PosixFile : public RandomAccessFile {
 public:
  PosixFile(std::string path, int fd, int64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixFile() override { ::close(fd_); }

  const std::string& name() const override { return path_; }
  int64_t size() const override { return size_; }

  void read_at(int64_t offset, size_t n, uint8_t* out) const override {
    if (offset < 0 || offset > size_ || static_cast<uint64_t>(n) > static_cast<uint64_t>(size_ - offset)) {
      throw IoError(fmt::format("parquet file '{}': read of {} bytes at offset {} is beyond the end of the file ({} "
                                "bytes)",
                                path_, n, offset, size_));
    }
    size_t done = 0;
    while (done < n) {
      ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + static_cast<int64_t>(done)));
      if (got < 0) {
        if (errno == EINTR) continue;
        throw IoError(fmt::format("parquet file '{}': read failed: {}", path_, std::strerror(errno)));
      }
      if (got == 0) throw IoError(fmt::format("parquet file '{}': file shrank while reading", path_));
      done += static_cast<size_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_;
  int64_t size_;
};

class MemoryFile : public RandomAccessFile {
 public:
  MemoryFile(std::string bytes, std::string name) : bytes_(std::move(bytes)), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  int64_t size() const override { return static_cast<int64_t>(bytes_.size()); }
  void read_at(int64_t offset, size_t n, uint8_t* out) const override {
    if (offset < 0 || static_cast<uint64_t>(offset) > bytes_.size() || n > bytes_.size() - static_cast<size_t>(offset)) {
      throw IoError(fmt::format("parquet file '{}': read of {} bytes at offset {} is beyond the end of the data ({} "
                                "bytes)",
                                name_, n, offset, bytes_.size()));
    }
    if (n > 0) std::memcpy(out, bytes_.data() + offset, n);
  }

 private:
  std::string bytes_;
  std::string name_;
};

}  // namespace

std::shared_ptr<RandomAccessFile> RandomAccessFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("cannot open parquet file '{}': {}", path, std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw IoError(fmt::format("cannot stat parquet file '{}': {}", path, std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw IoError(fmt::format("parquet path '{}' is a directory, not a file", path));
  }
  return std::make_shared<PosixFile>(path, fd, static_cast<int64_t>(st.st_size));
}

std::shared_ptr<RandomAccessFile> RandomAccessFile::from_buffer(std::string bytes, std::string name) {
  return std::make_shared<MemoryFile>(std::move(bytes), std::move(name));
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError(fmt::format("cannot create parquet file '{}': {}", path, std::strerror(errno)));
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::write(const void* data, size_t n) {
  if (fd_ < 0) throw IoError(fmt::format("parquet file '{}' is already closed", path_));
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < n) {
    ssize_t put = ::write(fd_, p + done, n - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("writing parquet file '{}' failed: {}", path_, std::strerror(errno)));
    }
    done += static_cast<size_t>(put);
  }
  position_ += static_cast<int64_t>(n);
}

void OutputFile::close() {
  if (fd_ < 0) return;
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw IoError(fmt::format("closing parquet file '{}' failed: {}", path_, std::strerror(errno)));
}

}  // namespace tzrec::parquet
