// Output files that appear complete or not at all: written under "<path>.tmp", then renamed.
// Used by the data generators (tzrec gen_data). No torch.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "parquet/writer.h"

namespace tzrec::data {

// A text file written through "<path>.tmp": append to buffer(), call maybe_flush() now and then
// (it writes the buffer out once it holds 1 MiB), then finish() (flush, close, rename). Destroyed
// unfinished (an error on the way), it removes the temporary file. Errors are IoError starting
// with "<context>: ".
class TextFileOutput {
 public:
  TextFileOutput(std::string path, std::string context);
  ~TextFileOutput();
  TextFileOutput(const TextFileOutput&) = delete;
  TextFileOutput& operator=(const TextFileOutput&) = delete;

  std::string& buffer() { return buf_; }
  void maybe_flush();
  void finish();

 private:
  void flush();
  std::string path_, tmp_, context_;
  std::FILE* file_ = nullptr;
  std::string buf_;
};

// Renames the finished `tmp` to `path`; IoError "<context>: cannot rename ..." on failure.
void rename_into_place(const std::string& tmp, const std::string& path, const std::string& context);

// Writes the Parquet file `path`: `write` appends the row groups to a FileWriter on "<path>.tmp",
// which is then closed and renamed to `path`; on any error the temporary file is removed and the
// error passes on. A file that cannot be created is an IoError starting with "<context>: ".
void write_parquet_file(const std::string& path, std::vector<parquet::WriterField> fields,
                        const parquet::WriterOptions& options, const std::string& context,
                        const std::function<void(parquet::FileWriter& writer)>& write);

}  // namespace tzrec::data
