// `tzrec parquet_meta FILE` and `tzrec parquet_cat FILE [--columns a,b] [--limit N]`: what users
// reach for when a training job rejects their data.
#include <cstdio>

#include <fmt/format.h>

#include "base/text.h"
#include "base/error.h"
#include "cli/commands.h"
#include "parquet/describe.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"

namespace tzrec::cli {
Action add_parquet_meta_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "parquet_meta", "Print a Parquet file's schema, row groups and column chunks (codec, encodings, sizes)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "Parquet file")->required();
  return [path]() {
    auto reader = parquet::FileReader::open(*path);
    std::fputs(parquet::describe_file(*reader).c_str(), stdout);
    return 0;
  };
}

Action add_parquet_cat_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("parquet_cat", "Print a Parquet file's rows as JSON lines");
  struct Flags {
    std::string path;
    std::string columns;
    int64_t limit = -1;
    int64_t offset = 0;
  };
  auto flags = std::make_shared<Flags>();
  cmd->add_option("file", flags->path, "Parquet file")->required();
  cmd->add_option("--columns", flags->columns, "comma-separated columns (default: all)");
  cmd->add_option("--limit", flags->limit, "print at most N rows (default: all)");
  cmd->add_option("--offset", flags->offset, "skip the first N rows")->capture_default_str();
  return [flags]() {
    if (flags->offset < 0) throw UsageError("--offset must be >= 0");
    auto reader = parquet::FileReader::open(flags->path);
    const auto columns = reader->resolve_columns(split_comma_list(flags->columns));
    const int64_t end = flags->limit < 0 ? reader->num_rows()
                                         : std::min(reader->num_rows(), flags->offset + flags->limit);
    if (flags->offset >= end) return 0;
    // Row-group batches keep memory bounded on large files.
    parquet::RowGroupStream stream(reader.get(), columns, flags->offset, end);
    int64_t stream_row = flags->offset;  // file row of the batch's first row
    while (auto table = stream.next()) {
      for (int64_t row = 0; row < table->num_rows; ++row) {
        parquet::Json json;
        try {
          json = parquet::row_to_json(*table, reader->schema(), row);
        } catch (const DataError& e) {
          throw DataError(fmt::format("parquet file '{}', row {}: {}", flags->path, stream_row + row, e.what()));
        }
        std::fputs(json.dump(-1, ' ', false, parquet::Json::error_handler_t::replace).c_str(), stdout);
        std::fputc('\n', stdout);
      }
      stream_row += table->num_rows;
    }
    return 0;
  };
}

}  // namespace tzrec::cli
