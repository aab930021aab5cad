#include "export/online_infer_data.h"

#include <filesystem>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/python_float.h"
#include "base/python_json.h"
#include "config/pipeline_config.h"
#include "data/csv_value_types.h"
#include "data/dataset_sources.h"
#include "data/file_output.h"
#include "data/input_files.h"
#include "data/prediction_writer.h"
#include "data/reserved_columns.h"
#include "data/typed_rows.h"
#include "export/export_dir.h"
#include "export/predictor.h"
#include "feature/feature_registry.h"
#include "feature/parsed_features_text.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"

namespace fs = std::filesystem;

namespace tzrec::exporting {
namespace {

constexpr char kDataDir[] = "debug_data";
constexpr char kResultDir[] = "debug_result";
constexpr char kPartFile[] = "part-0.parquet";

// The columns whose value is the user's (TorchEasyRec's create_predict_data): inputs of side
// "user" and every input of a grouped sequence.
std::set<std::string> user_columns(const feature::FeatureSet& features) {
  std::set<std::string> out;
  for (const feature::FeaturePtr& f : features.features) {
    for (const feature::SideInput& in : f->side_inputs()) {
      if (!f->info().sequence_name.empty() || in.side == "user") out.insert(in.column);
    }
  }
  return out;
}

// MaxCompute's name of a column type (TorchEasyRec's _type_pa_to_table), from
// data::typed_column_type's "int64", "list<string>", ...; empty when it has none.
std::string maxcompute_type(const std::string& type) {
  if (type.rfind("list<", 0) == 0 && type.back() == '>') {
    const std::string inner = maxcompute_type(type.substr(5, type.size() - 6));
    return inner.empty() ? "" : "ARRAY<" + inner + ">";
  }
  if (type == "int64") return "BIGINT";
  if (type == "int32") return "INT";
  if (type == "float") return "FLOAT";
  if (type == "double") return "DOUBLE";
  if (type == "string") return "STRING";
  return "";
}

// The first `batch_size` rows of the config's train_input_path, every column; CSV columns typed as
// pyarrow infers them (data/csv_value_types.h), as TorchEasyRec's CsvReader reads them.
data::RecordBatch first_rows(const protos::EasyRecConfig& config, int64_t batch_size) {
  protos::DataConfig dc = config.data_config();
  dc.set_num_workers(1);
  const std::string& path = config.train_input_path();
  if (path.empty()) throw ConfigError("train_input_path: empty; create_online_infer_data reads its first rows");
  const std::vector<std::string> files = data::expand_input_path(path);
  const std::vector<std::string> columns = data::input_file_columns(dc, files.front());
  data::BatchOptions batch;
  batch.batch_size = batch_size;
  auto sources = data::make_dataset_sources(dc, path, columns, batch, nullptr, 0, 1, false);
  auto first = sources.sources.front()->next();
  if (!first || first->records.num_rows() == 0) {
    throw DataError(fmt::format("train_input_path {}: no rows to build a request from", path));
  }
  data::RecordBatch rows = std::move(first->records);
  for (const data::StringColumn& c : rows.columns) rows.typed_columns.push_back(data::typed_csv_column(c));
  rows.columns.clear();
  return rows;
}

// `batch` (typed columns, first_rows) with each of `users`' columns holding its first row's value in
// every row.
data::RecordBatch with_one_user(const data::RecordBatch& batch, const std::set<std::string>& users) {
  data::RecordBatch out = batch;
  const std::vector<int64_t> first_row(static_cast<size_t>(batch.num_rows()), 0);
  for (data::TypedColumn& c : out.typed_columns) {
    if (users.count(c.name) > 0) c = data::take_rows(c, 0, first_row);
  }
  return out;
}

// Every row of a Parquet file as JSON objects (parquet/json_rows.h), and its top-level names.
struct JsonRows {
  std::vector<std::string> names;
  std::vector<parquet::Json> rows;
};

JsonRows read_json_rows(const std::string& path) {
  auto reader = parquet::FileReader::open(path);
  const parquet::Table table = reader->read();
  JsonRows out;
  for (int64_t r = 0; r < table.num_rows; ++r) out.rows.push_back(parquet::row_to_json(table, reader->schema(), r));
  for (const auto& c : table.columns) {
    if (out.names.empty() || out.names.back() != c.descriptor.field_name) out.names.push_back(c.descriptor.field_name);
  }
  return out;
}

// Python's str() of a JSON scalar (an item id).
std::string python_str(const parquet::Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return python_float_repr(v.get<double>());
  if (v.is_null()) return "None";
  return v.dump();
}

void write_json(const parquet::Json& doc, const fs::path& path) {
  data::TextFileOutput out(path.string(), path.filename().string());
  out.buffer() = python_json_dumps(doc);
  out.finish();
}

}  // namespace

OnlineInferDataSummary create_online_infer_data(const OnlineInferDataOptions& options) {
  if (options.scripted_model_path.empty()) throw UsageError("--scripted_model_path is required: an export directory");
  if (options.batch_size < 1) throw UsageError(fmt::format("--batch_size {} must be positive", options.batch_size));
  if (options.item_id.empty() && options.batch_size != 1) {
    throw UsageError(fmt::format("--batch_size {} without --item_id: an embedding model is predicted online one row "
                                 "at a time; pass --batch_size 1, or --item_id with the item id column",
                                 options.batch_size));
  }
  const fs::path dir(options.scripted_model_path);
  const fs::path config_path = dir / kExportConfigFile;
  if (!fs::exists(config_path)) {
    throw UsageError(fmt::format("--scripted_model_path {}: no {} (pass the directory `tzrec export` wrote)",
                                 options.scripted_model_path, kExportConfigFile));
  }
  const protos::EasyRecConfig config = config::load_pipeline_config(config_path.string());
  const auto fg_mode = config.data_config().fg_mode();
  if (fg_mode != protos::FG_NORMAL && fg_mode != protos::FG_DAG) {
    throw ConfigError(fmt::format("data_config.fg_mode: {}; create_online_infer_data builds a request of raw inputs "
                                  "for online feature generation, which needs fg_mode FG_NORMAL or FG_DAG",
                                  protos::FgMode_Name(fg_mode)));
  }
  const feature::FeatureSet features = feature::build_features(config);
  const data::RecordBatch rows = first_rows(config, options.batch_size);
  if (!options.item_id.empty() && rows.column_index(options.item_id) < 0 && !rows.typed_column(options.item_id)) {
    throw DataError(fmt::format("--item_id {}: no such column in {} (its columns are the request's)",
                                options.item_id, rows.files.front()));
  }
  for (const data::TypedColumn& c : rows.typed_columns) {
    if (c.is_map()) {
      throw NotSupportedError(fmt::format("create_online_infer_data: column '{}' of {} is a {}; requests with map "
                                          "columns (written to debug_data/part-0.parquet, whose writer writes no "
                                          "maps)",
                                          c.name, rows.files.front(), data::typed_column_type(c)));
    }
  }
  const std::set<std::string> users = user_columns(features);
  const data::RecordBatch request = with_one_user(rows, users);

  OnlineInferDataSummary summary;
  summary.rows = request.num_rows();
  summary.data_dir = (dir / kDataDir).string();
  summary.result_dir = (dir / kResultDir).string();
  if (summary.rows < options.batch_size) {
    log::warning("train_input_path has {} rows, fewer than --batch_size {}: the request has {} rows", summary.rows,
                 options.batch_size, summary.rows);
  }
  {
    auto writer = data::make_prediction_writer("ParquetWriter", summary.data_dir, 0);
    writer->write({}, request);
    writer->close();
  }

  // data.json: the column types of the request, the values as written.
  std::vector<std::pair<std::string, std::string>> types;  // column -> MaxCompute type, in order
  for (const data::TypedColumn& c : request.typed_columns) {
    const std::string type = data::typed_column_type(c);
    const std::string mc = maxcompute_type(type);
    if (mc.empty()) {
      throw DataError(fmt::format("{}: column '{}' is a {}; an online request holds BIGINT, INT, FLOAT, DOUBLE and "
                                  "STRING values and arrays of them",
                                  rows.files.front(), c.name, type));
    }
    types.emplace_back(c.name, mc);
  }
  const JsonRows written = read_json_rows((fs::path(summary.data_dir) / kPartFile).string());
  parquet::Json data_json = parquet::Json::object();
  for (const auto& [name, type] : types) {
    parquet::Json values = parquet::Json::array();
    const size_t n = users.count(name) ? 1 : written.rows.size();
    for (size_t r = 0; r < n; ++r) values.push_back(written.rows[r].at(name));
    data_json[name] = parquet::Json{{"values", std::move(values)}, {"dtype", type}};
    if (name == options.item_id) data_json["item_ids"] = data_json[name];
  }
  write_json(data_json, fs::path(summary.data_dir) / "data.json");

  PredictOptions predict_options;
  predict_options.scripted_model_path = options.scripted_model_path;
  predict_options.predict_input_path = (fs::path(summary.data_dir) / kPartFile).string();
  predict_options.predict_output_path = summary.result_dir;
  predict_options.batch_size = options.batch_size;
  predict_options.debug_level = 1;
  predict_options.dataset_type = "ParquetDataset";
  predict_options.reserved_columns = options.item_id;
  predict(predict_options);

  const JsonRows result = read_json_rows((fs::path(summary.result_dir) / kPartFile).string());
  parquet::Json fgout = parquet::Json::object();
  parquet::Json result_json = parquet::Json::object();
  for (const std::string& name : result.names) {
    if (name == options.item_id || name == feature::kParsedFeaturesColumn) continue;
    parquet::Json values = parquet::Json::array();
    for (const parquet::Json& row : result.rows) values.push_back(row.at(name));
    result_json[name] = std::move(values);
  }
  for (const parquet::Json& row : result.rows) {
    const std::string id = options.item_id.empty() ? "mock_id" : python_str(row.at(options.item_id));
    const std::string text = row.at(feature::kParsedFeaturesColumn).get<std::string>();
    parquet::Json parsed = parquet::Json::object();
    size_t begin = 0;
    while (begin <= text.size()) {
      size_t end = text.find(" | ", begin);
      if (end == std::string::npos) end = text.size();
      const std::string part = text.substr(begin, end - begin);
      const size_t colon = part.find(':');
      if (colon != std::string::npos) parsed[part.substr(0, colon)] = part.substr(colon + 1);
      begin = end + 3;
    }
    fgout[id] = std::move(parsed);
  }
  write_json(fgout, fs::path(summary.result_dir) / "fgout.json");
  write_json(result_json, fs::path(summary.result_dir) / "result.json");
  log::info("online request of {} rows in {} (data.json), its parsed features and outputs in {} (fgout.json, "
            "result.json)",
            summary.rows, summary.data_dir, summary.result_dir);
  return summary;
}

}  // namespace tzrec::exporting
