#include "data/file_output.h"

#include <filesystem>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::data {

void rename_into_place(const std::string& tmp, const std::string& path, const std::string& context) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(fmt::format("{}: cannot rename {} to {}: {}", context, tmp, path, ec.message()));
}

TextFileOutput::TextFileOutput(std::string path, std::string context)
    : path_(std::move(path)), tmp_(path_ + ".tmp"), context_(std::move(context)) {
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (file_ == nullptr) {
    throw IoError(fmt::format("{}: cannot open {} for writing (does the output directory exist and is it writable?)",
                              context_, tmp_));
  }
  buf_.reserve(1 << 20);
}

TextFileOutput::~TextFileOutput() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);
}

void TextFileOutput::flush() {
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size()) {
    throw IoError(fmt::format("{}: cannot write {} (disk full or no permission?)", context_, tmp_));
  }
  buf_.clear();
}

void TextFileOutput::maybe_flush() {
  if (buf_.size() >= (1 << 20)) flush();
}

void TextFileOutput::finish() {
  flush();
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) {
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
    throw IoError(fmt::format("{}: cannot finish writing {}", context_, tmp_));
  }
  rename_into_place(tmp_, path_, context_);
}

void write_parquet_file(const std::string& path, std::vector<parquet::WriterField> fields,
                        const parquet::WriterOptions& options, const std::string& context,
                        const std::function<void(parquet::FileWriter& writer)>& write) {
  const std::string tmp = path + ".tmp";
  std::unique_ptr<parquet::FileWriter> writer;
  try {
    writer = std::make_unique<parquet::FileWriter>(tmp, std::move(fields), options);
  } catch (const IoError& e) {
    throw IoError(fmt::format("{}: {} (does the output directory exist and is it writable?)", context, e.what()));
  }
  try {
    write(*writer);
    writer->close();
  } catch (...) {
    writer.reset();
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
  writer.reset();
  rename_into_place(tmp, path, context);
}

}  // namespace tzrec::data
