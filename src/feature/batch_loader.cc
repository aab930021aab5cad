#include "feature/batch_loader.h"

#include "base/error.h"
#include "base/logging.h"
#include "data/dataset_sources.h"
#include "data/parallel_loader.h"

namespace tzrec::feature {
namespace {

void check_supported(const protos::DataConfig& dc, Mode mode) {
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
  parser_ = std::make_shared<const FeatureParser>(config);

  const bool eval_size =
      mode == Mode::kEval && dc.has_eval_batch_size() && dc.eval_batch_size() > 0;
  batch_size_ = eval_size ? dc.eval_batch_size() : dc.batch_size();
  data::BatchOptions batch;
  batch.batch_size = batch_size_;
  batch.drop_remainder = mode == Mode::kTrain && dc.drop_remainder();
  batch.min_batch_size = mode == Mode::kTrain ? dc.min_batch_size() : 0;

  auto sources = data::make_dataset_sources(dc, input_path, parser_->input_columns(), batch,
                                            resume, shard.rank, shard.world_size,
                                            /*log_worker_changes=*/mode == Mode::kTrain);
  files_ = std::move(sources.files);
  num_workers_ = static_cast<int>(sources.sources.size());
  auto parser = parser_;
  loader_ = std::make_unique<data::ParallelLoader<sparse::Batch>>(
      std::move(sources.sources),
      [parser](const data::RecordBatch& b) { return parser->parse(b); },
      std::move(sources.start), kPrefetchDepth);
}

BatchLoader::~BatchLoader() = default;

std::optional<LoadedBatch> BatchLoader::next() {
  auto item = loader_->next();
  if (!item) return std::nullopt;
  return LoadedBatch{std::move(item->value), std::move(item->position)};
}

}  // namespace tzrec::feature
