// Streaming CSV tokenizer for one file (no torch).
//
// Dialect (matches what TorchEasyRec's pyarrow CSV reader accepts for our inputs):
//   - records end at '\n' outside quotes; a '\r' right before it is dropped (CRLF and LF files);
//   - the last record may end without a newline;
//   - a field that *starts* with '"' is quoted: it may contain the delimiter and newlines, and
//     '""' stands for one '"'; characters after the closing quote up to the next delimiter are
//     kept literally; a '"' inside an unquoted field is an ordinary character;
//   - completely empty lines are skipped (pyarrow's ignore_empty_lines);
//   - a UTF-8 byte-order mark at the start of the file is skipped;
//   - the delimiter is any single byte except '"', '\n' and '\r' (e.g. ',', '\t', '\x01').
// An unterminated quoted field at end of file is a DataError naming the file and line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec::data {

class CsvRecordStream {
 public:
  // Opens `path`; throws DataError when the file cannot be opened.
  CsvRecordStream(std::string path, char delimiter);
  ~CsvRecordStream();
  CsvRecordStream(const CsvRecordStream&) = delete;
  CsvRecordStream& operator=(const CsvRecordStream&) = delete;

  // Reads the next non-empty record into *fields (unquoted and unescaped). The views point into
  // an internal buffer and stay valid until the next call. Returns false at end of file.
  bool next(std::vector<std::string_view>* fields);
  // Moves past the next non-empty record without splitting it. Returns false at end of file.
  bool skip();

  // 1-based physical line on which the record last returned by next()/skip() starts.
  int64_t record_line() const { return record_line_; }
  const std::string& path() const { return path_; }

 private:
  // Finds the next non-empty record; sets [rec_begin_, rec_end_) (CR stripped) and consumes it.
  bool advance();
  // Scans the record starting at begin_. Returns false when the buffer holds no complete record
  // yet (more input is needed); otherwise sets *rec_end (exclusive, before any '\n'),
  // *next (start of the following record) and *newlines (newlines consumed).
  bool scan_record(size_t* rec_end, size_t* next, int64_t* newlines);
  // Moves unread bytes to the front, grows the buffer if it is full, reads more.
  // Returns false when the file has no more bytes.
  bool fill();
  void split(std::vector<std::string_view>* fields);

  std::string path_;
  char delimiter_;
  int fd_ = -1;
  std::vector<char> buf_;
  size_t begin_ = 0;  // first unread byte
  size_t end_ = 0;    // one past the last valid byte
  bool eof_ = false;
  bool started_ = false;  // BOM check done
  int64_t line_ = 1;      // line number at begin_
  size_t rec_begin_ = 0;
  size_t rec_end_ = 0;
  int64_t record_line_ = 0;
};

}  // namespace tzrec::data
