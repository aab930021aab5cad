#include "feature/batch_loader.h"

#include "base/error.h"
#include "base/logging.h"
#include "data/csv_reader.h"
#include "data/input_files.h"
#include "data/parallel_loader.h"

namespace tzrec::feature {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string printable_delimiter(const std::string& d) {
  std::string out;
  for (char c : d) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  return out;
}

data::CsvOptions csv_options(const protos::DataConfig& dc) {
  data::CsvOptions o;
  if (dc.delimiter().size() != 1) {
    throw ConfigError(fmt::format(
        "data_config.delimiter: must be exactly one character (byte), got \"{}\" ({} bytes); "
        "e.g. \",\", \"\\t\" or \"\\x01\"",
        printable_delimiter(dc.delimiter()), dc.delimiter().size()));
  }
  o.delimiter = dc.delimiter()[0];
  o.with_header = dc.with_header();
  if (dc.has_input_fields_str() && !dc.input_fields_str().empty()) {
    // "name:TYPE;name:TYPE;" — only the names matter for CSV text.
    size_t start = 0;
    const std::string& s = dc.input_fields_str();
    while (start < s.size()) {
      size_t semi = s.find(';', start);
      if (semi == std::string::npos) semi = s.size();
      const std::string item = trim(s.substr(start, semi - start));
      start = semi + 1;
      if (item.empty()) continue;
      const std::string name = trim(item.substr(0, item.find(':')));
      if (name.empty()) {
        throw ConfigError(fmt::format("data_config.input_fields_str: empty name in '{}'", item));
      }
      o.input_fields.push_back(name);
    }
  } else {
    for (const auto& f : dc.input_fields()) o.input_fields.push_back(f.input_name());
  }
  return o;
}

void check_supported(const protos::DataConfig& dc, Mode mode) {
  if (dc.dataset_type() != protos::CsvDataset) {
    throw NotSupportedError(
        fmt::format("data_config.dataset_type {} (this loader reads CsvDataset)",
                    protos::DatasetType_Name(dc.dataset_type())));
  }
  if (dc.sampler_case() != protos::DataConfig::SAMPLER_NOT_SET) {
    const auto* oneof = protos::DataConfig::descriptor()->FindOneofByName("sampler");
    const auto* field = dc.GetReflection()->GetOneofFieldDescriptor(dc, oneof);
    throw NotSupportedError("data_config." + field->name());
  }
  if (dc.shuffle() && mode == Mode::kTrain) throw NotSupportedError("data_config.shuffle");
  if (dc.batch_cost_size() > 0 || !dc.sample_cost_field().empty()) {
    throw NotSupportedError("data_config.batch_cost_size / sample_cost_field");
  }
}

}  // namespace

BatchLoader::BatchLoader(const protos::EasyRecConfig& config, const std::string& input_path,
                         Mode mode, const data::ReadPosition* resume, LoaderShard shard) {
  const auto& dc = config.data_config();
  check_supported(dc, mode);
  const data::CsvOptions options = csv_options(dc);
  parser_ = std::make_shared<const FeatureParser>(config);

  const bool eval_size =
      mode == Mode::kEval && dc.has_eval_batch_size() && dc.eval_batch_size() > 0;
  batch_size_ = eval_size ? dc.eval_batch_size() : dc.batch_size();
  const bool drop_remainder = mode == Mode::kTrain && dc.drop_remainder();
  const int64_t min_batch_size = mode == Mode::kTrain ? dc.min_batch_size() : 0;

  files_ = data::expand_input_path(input_path);
  num_workers_ = data::effective_num_workers(static_cast<int>(dc.num_workers()), files_.size(),
                                             shard.world_size);
  if (static_cast<int>(dc.num_workers()) > num_workers_) {
    const auto message = fmt::format("data_config.num_workers reset to {}: {} input files for {} rank(s)",
                                     num_workers_, files_.size(), shard.world_size);
    if (mode == Mode::kTrain) {
      log::info("{}", message);
    } else {
      log::debug("{}", message);
    }
  }
  const auto plan = resume ? resume->plan(files_, num_workers_, shard.rank, shard.world_size)
                           : data::plan_fresh(files_, num_workers_, shard.rank, shard.world_size);
  data::ReadPosition start = resume
                                 ? resume->for_workers(num_workers_, shard.rank, shard.world_size)
                                 : data::ReadPosition::start(files_, num_workers_);
  if (resume && resume->num_workers != num_workers_) {
    log::info(
        "resuming data written by {} workers with {} workers: remaining rows are re-split, "
        "batch boundaries differ from an uninterrupted run",
        resume->num_workers, num_workers_);
  }

  const std::vector<std::string> columns = parser_->input_columns();
  std::vector<std::unique_ptr<data::BatchSource>> sources;
  for (const auto& slices : plan) {
    sources.push_back(std::make_unique<data::CsvBatchReader>(options, columns, slices, batch_size_,
                                                             drop_remainder, min_batch_size));
  }
  auto parser = parser_;
  loader_ = std::make_unique<data::ParallelLoader<sparse::Batch>>(
      std::move(sources), [parser](const data::RecordBatch& b) { return parser->parse(b); },
      std::move(start), kPrefetchDepth);
}

BatchLoader::~BatchLoader() = default;

std::optional<LoadedBatch> BatchLoader::next() {
  auto item = loader_->next();
  if (!item) return std::nullopt;
  return LoadedBatch{std::move(item->value), std::move(item->position)};
}

}  // namespace tzrec::feature
