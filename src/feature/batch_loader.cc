#include "feature/batch_loader.h"

#include <algorithm>

#include "base/error.h"
#include "base/logging.h"
#include "base/manual_seed.h"
#include "base/stable_hash.h"
#include "config/stream_batches.h"
#include "data/dataset_sources.h"
#include "data/input_files.h"
#include "data/parallel_loader.h"
#include "data/reserved_columns.h"
#include "feature/negative_rows.h"
#include "feature/sample_mask.h"
#include "feature/tdm_rows.h"

namespace tzrec::feature {

struct ParsedBatch {
  sparse::Batch batch;
  data::RecordBatch reserved;
};

BatchLoader::BatchLoader(const protos::EasyRecConfig& config, const std::string& input_path,
                         Mode mode, const data::ReadPosition* resume, LoaderShard shard,
                         const std::vector<std::string>& reserved_columns) {
  const auto& dc = config.data_config();
  parser_ = std::make_shared<const FeatureParser>(config, /*read_labels=*/mode != Mode::kPredict);

  const bool eval_size =
      mode != Mode::kTrain && dc.has_eval_batch_size() && dc.eval_batch_size() > 0;
  batch_size_ = eval_size ? dc.eval_batch_size() : dc.batch_size();
  data::BatchOptions batch;
  batch.batch_size = batch_size_;
  batch.drop_remainder = mode == Mode::kTrain && dc.drop_remainder();
  if (mode == Mode::kTrain && config::shuffles_batches(dc)) {
    batch.shuffle_window = dc.shuffle_buffer_size();
    batch.shuffle_seed = chain_seed(manual_seed().value_or(0), {fnv1a64("shuffle"), static_cast<uint64_t>(shard.epoch)});
  }

  // Reserved columns are read with the feature columns (each once), so every RecordBatch holds
  // both for the same rows.
  std::vector<std::string> columns = parser_->input_columns();
  // Negative sampling (negative_rows.h); predict runs no sampler (TorchEasyRec ignores it there too).
  const uint64_t seed = manual_seed().value_or(0);  // the samplers' streams (TORCH_MANUAL_SEED)
  std::shared_ptr<const NegativeRows> negatives;
  if (auto sampler_config = data::negative_sampler_config(dc); sampler_config && mode != Mode::kPredict) {
    const std::string list_sep = data::sampler_multival_sep(dc);
    negatives = std::make_shared<const NegativeRows>(
        data::NegativeSampler::create(*sampler_config, mode == Mode::kTrain), parser_->neg_input_columns(), list_sep,
        shard.rank, seed, parser_->candidate());
    for (const std::string& c : negatives->id_columns()) {
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
    }
  }
  // TDM sampling (tdm_rows.h): the batch grows by each row's ancestors and per-level negatives.
  std::shared_ptr<const TdmRows> tdm;
  if (auto tdm_config = tdm::tdm_sampler_config(dc); tdm_config && mode != Mode::kPredict) {
    tdm = std::make_shared<const TdmRows>(
        tdm::TdmSampler::create(*tdm_config), std::vector<std::string>(dc.label_fields().begin(), dc.label_fields().end()),
        data::sampler_multival_sep(dc), shard.rank, seed, mode == Mode::kTrain);
    if (std::find(columns.begin(), columns.end(), tdm->id_column()) == columns.end()) columns.push_back(tdm->id_column());
  }
  if (!reserved_columns.empty()) {
    reserved_columns_ = data::resolve_reserved_columns(
        dc, data::expand_input_path(input_path), reserved_columns, columns);
    for (const auto& c : reserved_columns_) {
      if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
    }
  }
  auto sources = data::make_dataset_sources(dc, input_path, columns, batch, resume, shard.rank,
                                            shard.world_size,
                                            /*log_worker_changes=*/mode == Mode::kTrain);
  files_ = std::move(sources.files);
  num_workers_ = static_cast<int>(sources.sources.size());
  auto parser = parser_;
  auto reserved = reserved_columns_;
  // Training masks of use_mask features (sample_mask.h; build_features checked the options).
  std::optional<SampleMaskOptions> masking;
  if (const SampleMaskOptions o = sample_mask_options(dc); mode == Mode::kTrain && o.active()) masking = o;
  const int rank = shard.rank;
  loader_ = std::make_unique<data::ParallelLoader<ParsedBatch>>(
      std::move(sources.sources),
      [parser, reserved, negatives, tdm, masking, seed, rank](data::RecordBatch& b) {
        ParsedBatch out;
        if (tdm) {
          data::RecordBatch expanded = tdm->expand(b);
          out.batch = parser->parse_in_place(&expanded);
        } else if (negatives) {
          torch::Tensor hard_neg_indices;
          const data::RecordBatch neg_rows = negatives->sample(b, &hard_neg_indices);
          std::optional<SampleMasks> masks;
          if (masking) {
            // The negatives' rows follow the batch's, but for a candidate sequence (its own rows).
            const int64_t sampled = neg_rows.num_rows() - (parser->candidate() ? 0 : b.num_rows());
            masks = draw_sample_masks(*masking, b, sampled, seed, rank);
          }
          out.batch = parser->parse_in_place(&b, &neg_rows, masks ? &*masks : nullptr);
          out.batch.hard_neg_indices = hard_neg_indices;
        } else if (masking) {
          const SampleMasks masks = draw_sample_masks(*masking, b, 0, seed, rank);
          out.batch = parser->parse_in_place(&b, nullptr, &masks);
        } else {
          out.batch = parser->parse_in_place(&b);
        }
        if (!reserved.empty()) out.reserved = data::select_columns(b, reserved);
        return out;
      },
      std::move(sources.start), kPrefetchDepth);
}

BatchLoader::~BatchLoader() = default;

std::optional<LoadedBatch> BatchLoader::next() {
  auto item = loader_->next();
  if (!item) return std::nullopt;
  return LoadedBatch{std::move(item->value.batch), std::move(item->position),
                     std::move(item->value.reserved), item->data_timestamp};
}

}  // namespace tzrec::feature
