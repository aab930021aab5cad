#include "data/file_output.h"

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::data {

void rename_into_place(const std::string& tmp, const std::string& path, const std::string& context) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(fmt::format("{}: cannot rename {} to {}: {}", context, tmp, path, ec.message()));
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
