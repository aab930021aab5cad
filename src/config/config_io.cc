// Reading and writing pipeline configs (text format and JSON).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "base/text.h"
#include "base/error.h"
#include "base/logging.h"
#include "config/json_reader.h"
#include "config/pipeline_config.h"

namespace tzrec::config {

namespace {

namespace pb = google::protobuf;

// Keeps the first error of the text-format parser (it stops at the first one anyway).
class FirstErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      line_ = line;
      column_ = column;
      message_ = message;
    }
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    log::warning("pipeline config {}:{}: {}", line + 1, column + 1, message);
  }
  bool has_error() const { return has_error_; }
  // Parser positions are 0-based; editors count from 1.
  std::string where(const std::string& source) const {
    return source + ":" + std::to_string(line_ + 1) + ":" + std::to_string(column_ + 1);
  }
  const std::string& message() const { return message_; }

  // The parser reports an unknown field after reading its name; point at the name instead.
  void point_at_unknown_field(const std::string& text) {
    const std::string marker = "no field named \"";
    size_t m = message_.find(marker);
    if (m == std::string::npos) return;
    size_t end = message_.find('"', m + marker.size());
    if (end == std::string::npos) return;
    const std::string name = message_.substr(m + marker.size(), end - m - marker.size());
    size_t line_start = 0;
    for (int l = 0; l < line_ && line_start != std::string::npos; ++l) {
      line_start = text.find('\n', line_start);
      if (line_start != std::string::npos) ++line_start;
    }
    if (line_start == std::string::npos) return;
    const std::string line = text.substr(line_start, text.find('\n', line_start) - line_start);
    size_t at = line.rfind(name, static_cast<size_t>(column_));
    if (at != std::string::npos) column_ = static_cast<int>(at);
  }

 private:
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

void parse_text(const std::string& text, const std::string& source, protos::EasyRecConfig* out) {
  pb::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  // proto2 `required` is not enforced (docs/tzrec-compatibility.md §2.0).
  parser.AllowPartialMessage(true);
  // Merge semantics like Python's text_format.Merge: a repeated singular field overwrites.
  if (!parser.MergeFromString(text, out) || errors.has_error()) {
    errors.point_at_unknown_field(text);
    throw ConfigError(errors.where(source) + ": " +
                      (errors.has_error() ? errors.message() : std::string("cannot parse")));
  }
}

}  // namespace

void apply_fg_encoded_rewrite(protos::EasyRecConfig* config) {
  if (!config->has_data_config() || !config->data_config().has_fg_encoded()) return;
  auto* data = config->mutable_data_config();
  protos::FgMode mode;
  if (data->fg_encoded()) {
    mode = protos::FG_NONE;
  } else if (data->fg_threads() > 0) {
    mode = protos::FG_DAG;
  } else {
    mode = protos::FG_NORMAL;
  }
  log::warning("data_config.fg_encoded is deprecated, use fg_mode: {} instead",
               protos::FgMode_Name(mode));
  data->set_fg_mode(mode);
}

protos::EasyRecConfig parse_pipeline_config_text(const std::string& text,
                                                 const std::string& source_name) {
  protos::EasyRecConfig config;
  if (ends_with(source_name, ".json")) {
    detail::json_to_message(text, source_name, &config);
  } else {
    parse_text(text, source_name, &config);
  }
  apply_fg_encoded_rewrite(&config);
  return config;
}

protos::EasyRecConfig load_pipeline_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    const char* why = std::filesystem::exists(path, ec) ? "cannot be read" : "does not exist";
    throw ConfigError(fmt::format("pipeline config '{}' {}", path, why));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_pipeline_config_text(buffer.str(), path);
}

std::string to_text(const protos::EasyRecConfig& config) {
  pb::TextFormat::Printer printer;
  printer.SetUseUtf8StringEscaping(true);  // as_utf8=True
  std::string out;
  printer.PrintToString(config, &out);
  return out;
}

void save_pipeline_config(const protos::EasyRecConfig& config, const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) {
      throw IoError(fmt::format("cannot create directory '{}': {}", p.parent_path().string(),
                                ec.message()));
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << to_text(config);
  out.close();
  if (!out) throw IoError(fmt::format("cannot write pipeline config '{}'", path));
}

}  // namespace tzrec::config
