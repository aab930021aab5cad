// tzrec/fg.h: feature generation for serving through feature::FeatureParser, the parser of
// training and predict (docs/serving_fg.md).
#include "tzrec/fg.h"

#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "config/field_registry.h"
#include "config/pipeline_config.h"
#include "feature/assets.h"
#include "feature/feature_parser.h"

namespace fs = std::filesystem;

namespace tzrec {
namespace {

// The file name of the pipeline config in an export directory (export/export_dir.h).
constexpr const char* kExportedConfig = "pipeline.config";

// The fields feature generation reads (features and data_config) that this build refuses are
// refused here as in training; the rest of the config (model, training) does not matter.
void check_fg_fields(const protos::EasyRecConfig& config) {
  for (const config::FieldFinding& f : config::check_set_fields(config)) {
    if (f.support != config::FieldSupport::kRefused) continue;
    if (f.path.rfind("feature_configs", 0) == 0 || f.path.rfind("data_config", 0) == 0) {
      throw NotSupportedError(f.path);
    }
  }
}

protos::EasyRecConfig load_config(const std::string& path) {
  if (!fs::is_directory(path)) {
    protos::EasyRecConfig config = config::load_pipeline_config(path);
    check_fg_fields(config);
    return config;
  }
  const fs::path config_path = fs::path(path) / kExportedConfig;
  if (!fs::is_regular_file(config_path)) {
    throw UsageError(fmt::format("{} is a directory without {}; pass an export directory of `tzrec export` or a "
                                 "pipeline config file",
                                 path, kExportedConfig));
  }
  protos::EasyRecConfig config = config::load_pipeline_config(config_path.string());
  check_fg_fields(config);
  // The package holds the features' files (feature/assets.h), wherever it has been moved to.
  feature::rebase_asset_dirs(&config, fs::absolute(path).lexically_normal().string());
  return config;
}

std::vector<int64_t> int64s(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kInt64).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

std::vector<float> floats(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

struct FeatureGenerator::Impl {
  explicit Impl(const protos::EasyRecConfig& config)
      : parser(config, /*read_labels=*/false), inputs(parser.input_columns()) {}
  feature::FeatureParser parser;
  std::vector<std::string> inputs;
};

const FgFeatureOutput* FgOutput::find(const std::string& name) const {
  for (const FgFeatureOutput& f : features) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

FeatureGenerator::FeatureGenerator(const std::string& path) : impl_(std::make_unique<Impl>(load_config(path))) {}
FeatureGenerator::~FeatureGenerator() = default;
FeatureGenerator::FeatureGenerator(FeatureGenerator&&) noexcept = default;
FeatureGenerator& FeatureGenerator::operator=(FeatureGenerator&&) noexcept = default;

const std::vector<std::string>& FeatureGenerator::input_names() const { return impl_->inputs; }

FgOutput FeatureGenerator::generate(const std::vector<FgInput>& inputs) const {
  data::RecordBatch batch;
  batch.files = {"request"};
  batch.origin_unit = "row";
  int64_t rows = -1;
  const FgInput* first = nullptr;
  for (const std::string& name : impl_->inputs) {
    const FgInput* in = nullptr;
    for (const FgInput& i : inputs) {
      if (i.name == name) in = &i;
    }
    if (in == nullptr) {
      throw DataError(fmt::format("request: input '{}' is missing; the features read {}", name,
                                  fmt::join(impl_->inputs, ", ")));
    }
    const auto n = static_cast<int64_t>(in->cells.size());
    if (rows < 0) {
      rows = n;
      first = in;
    } else if (n != rows) {
      throw DataError(fmt::format("request: input '{}' has {} cells but '{}' has {}; every input needs one cell per row",
                                  name, n, first->name, rows));
    }
    data::StringColumn column;
    column.name = name;
    for (const std::string& cell : in->cells) column.append(cell);
    batch.columns.push_back(std::move(column));
  }
  if (rows < 0) rows = 0;  // no inputs (every feature reads constants only): nothing to generate
  for (int64_t r = 0; r < rows; ++r) batch.origins.push_back(data::RowOrigin{0, r});

  const sparse::Batch parsed = impl_->parser.parse(batch);
  FgOutput out;
  out.rows = rows;
  for (const feature::FeaturePtr& f : impl_->parser.features()) {
    const feature::FeatureInfo& info = f->info();
    if (info.stub) continue;
    FgFeatureOutput o;
    o.name = info.name;
    o.sparse = info.is_sparse;
    o.sequence = info.is_sequence;
    o.value_dim = info.value_dim;
    if (info.is_sparse) {
      const sparse::JaggedTensor j = parsed.sparse_features[info.name];
      o.ids = int64s(j.values);
      o.lengths = int64s(j.lengths);
      if (info.weighted && j.weights.defined()) o.weights = floats(j.weights);
    } else if (info.is_sequence) {
      o.values = floats(parsed.sequence_dense_features.at(info.name));
    } else {
      o.values = floats(parsed.dense_features[info.name]);
    }
    if (info.is_sequence) {
      o.sequence_lengths = int64s(parsed.sequence_lengths.at(info.name));
      if (auto it = parsed.sequence_item_lengths.find(info.name); it != parsed.sequence_item_lengths.end()) {
        o.item_lengths = int64s(it->second);
      }
    }
    out.features.push_back(std::move(o));
  }
  return out;
}

}  // namespace tzrec
