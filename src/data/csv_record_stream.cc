#include "data/csv_record_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace tzrec::data {
namespace {

constexpr size_t kInitialBufferBytes = 1 << 20;

}  // namespace

CsvRecordStream::CsvRecordStream(std::string path, char delimiter)
    : path_(std::move(path)), delimiter_(delimiter) {
  if (delimiter_ == '"' || delimiter_ == '\n' || delimiter_ == '\r') {
    throw ConfigError(fmt::format(
        "data_config.delimiter: the CSV delimiter cannot be a quote, '\\n' or '\\r' (reading {})",
        path_));
  }
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw DataError(fmt::format("cannot open input file {}: {}", path_, std::strerror(errno)));
  }
  buf_.resize(kInitialBufferBytes);
}

CsvRecordStream::~CsvRecordStream() {
  if (fd_ >= 0) ::close(fd_);
}

bool CsvRecordStream::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // one record is larger than the buffer
  while (true) {
    const ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw DataError(fmt::format("error reading input file {}: {}", path_, std::strerror(errno)));
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<size_t>(n);
    return true;
  }
}

bool CsvRecordStream::scan_record(size_t* rec_end, size_t* next, int64_t* newlines) {
  const char* base = buf_.data();
  const size_t start = begin_;
  // Fast path: no quote before the next newline.
  const void* nl = std::memchr(base + start, '\n', end_ - start);
  const size_t line_stop = nl ? static_cast<size_t>(static_cast<const char*>(nl) - base) : end_;
  if (std::memchr(base + start, '"', line_stop - start) == nullptr) {
    if (nl != nullptr) {
      *rec_end = line_stop;
      *next = line_stop + 1;
      *newlines = 1;
      return true;
    }
    if (!eof_) return false;
    *rec_end = end_;
    *next = end_;
    *newlines = 0;
    return true;
  }
  // Slow path: a quote somewhere in the line; run the quoting state machine.
  bool at_field_start = true;
  bool in_quotes = false;
  int64_t lines = 0;
  for (size_t i = start; i < end_; ++i) {
    const char c = base[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 == end_) {
          if (!eof_) return false;  // cannot tell '"' from '""' yet
          in_quotes = false;
        } else if (base[i + 1] == '"') {
          ++i;  // escaped quote
        } else {
          in_quotes = false;
        }
      } else if (c == '\n') {
        ++lines;
      }
    } else if (c == '\n') {
      *rec_end = i;
      *next = i + 1;
      *newlines = lines + 1;
      return true;
    } else if (c == delimiter_) {
      at_field_start = true;
    } else if (c == '"' && at_field_start) {
      in_quotes = true;
      at_field_start = false;
    } else {
      at_field_start = false;
    }
  }
  if (!eof_) return false;
  if (in_quotes) {
    throw DataError(
        fmt::format("{} line {}: quoted field is not closed before the end of the file; "
                    "check for a stray '\"' (write a literal quote inside a quoted field as \"\")",
                    path_, line_));
  }
  *rec_end = end_;
  *next = end_;
  *newlines = lines;
  return true;
}

bool CsvRecordStream::advance() {
  if (!started_) {
    started_ = true;
    while (end_ - begin_ < 3 && fill()) {
    }
    if (end_ - begin_ >= 3 && std::memcmp(buf_.data() + begin_, "\xEF\xBB\xBF", 3) == 0)
      begin_ += 3;
  }
  while (true) {
    if (begin_ == end_ && !fill()) return false;
    size_t rec_end = 0, next = 0;
    int64_t newlines = 0;
    while (!scan_record(&rec_end, &next, &newlines)) {
      // scan_record returns false only when !eof_; fill() compacts, so rescan from begin_.
      fill();
    }
    const size_t rec_begin = begin_;
    const int64_t rec_line = line_;
    begin_ = next;
    line_ += newlines;
    if (rec_end > rec_begin && buf_[rec_end - 1] == '\r') --rec_end;
    if (rec_end == rec_begin) continue;  // empty line
    rec_begin_ = rec_begin;
    rec_end_ = rec_end;
    record_line_ = rec_line;
    return true;
  }
}

bool CsvRecordStream::skip() { return advance(); }

bool CsvRecordStream::next(std::vector<std::string_view>* fields) {
  if (!advance()) return false;
  split(fields);
  return true;
}

void CsvRecordStream::split(std::vector<std::string_view>* fields) {
  fields->clear();
  char* base = buf_.data();
  const size_t stop = rec_end_;
  size_t i = rec_begin_;
  while (true) {
    if (i < stop && base[i] == '"') {
      // Quoted field: unescape in place (output never runs ahead of input).
      const size_t field_begin = i;
      size_t w = i;
      size_t r = i + 1;
      while (r < stop) {
        const char c = base[r];
        if (c == '"') {
          if (r + 1 < stop && base[r + 1] == '"') {
            base[w++] = '"';
            r += 2;
          } else {
            ++r;  // closing quote
            break;
          }
        } else {
          base[w++] = c;
          ++r;
        }
      }
      while (r < stop && base[r] != delimiter_) base[w++] = base[r++];  // text after the quote
      fields->emplace_back(base + field_begin, w - field_begin);
      if (r >= stop) return;
      i = r + 1;  // past the delimiter; another field follows
    } else {
      const void* d = std::memchr(base + i, delimiter_, stop - i);
      if (d == nullptr) {
        fields->emplace_back(base + i, stop - i);
        return;
      }
      const size_t pos = static_cast<size_t>(static_cast<const char*>(d) - base);
      fields->emplace_back(base + i, pos - i);
      i = pos + 1;
    }
  }
}

}  // namespace tzrec::data
