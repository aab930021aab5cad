#include "train/pooling_factors.h"

#include <exception>

#include <torch/torch.h>

#include "base/logging.h"
#include "feature/batch_loader.h"

namespace tzrec::train {

std::map<std::string, double> measure_pooling_factors(const protos::EasyRecConfig& config,
                                                      const std::vector<embedding::BagConfig>& bags,
                                                      dist::ProcessGroup* pg, int max_batches) {
  if (config.train_input_path().empty() || bags.empty()) return {};
  // A stream is not read twice: its first messages would be consumed here and, with
  // auto.offset.reset=latest, never trained (and the read would wait for new messages).
  if (config.data_config().dataset_type() == protos::KafkaDataset) return {};
  std::vector<std::string> tables;  // distinct, in bag order
  std::map<std::string, size_t> table_index;
  for (const auto& b : bags) {
    if (table_index.emplace(b.table_name, tables.size()).second) tables.push_back(b.table_name);
  }
  // [ids per table..., samples, failed ranks]
  const auto n = static_cast<int64_t>(tables.size());
  torch::Tensor counts = torch::zeros({n + 2}, torch::kFloat64);
  auto* c = counts.data_ptr<double>();
  try {
    feature::LoaderShard shard;
    if (pg != nullptr) shard = {pg->rank(), pg->world_size()};
    feature::BatchLoader loader(config, config.train_input_path(), feature::Mode::kTrain, nullptr, shard);
    for (int i = 0; i < max_batches; ++i) {
      auto loaded = loader.next();
      if (!loaded) break;
      // A sampled item feature (data group __NEG__) is looked up for the batch's rows and the
      // negatives: its ids per step, per sample of the batch.
      for (const sparse::KeyedJaggedTensor* kjt : {&loaded->batch.sparse_features, &loaded->batch.neg_sparse_features}) {
        for (const auto& b : bags) {
          if (!kjt->contains(b.feature_name)) continue;
          c[table_index.at(b.table_name)] +=
              static_cast<double>(kjt->length_per_key()[kjt->key_index(b.feature_name)]);
        }
      }
      c[n] += static_cast<double>(loaded->batch.batch_size);
    }
  } catch (const std::exception& e) {
    log::warning("measuring the pooling factors for the sharding plan failed ({}); the plan uses estimates", e.what());
    counts.zero_();
    c[n + 1] = 1;
  }
  if (pg != nullptr && pg->world_size() > 1) pg->all_reduce(counts, dist::ReduceOp::kSum, "pooling factors");
  c = counts.data_ptr<double>();
  if (c[n + 1] > 0 || c[n] <= 0) return {};
  std::map<std::string, double> out;
  for (int64_t t = 0; t < n; ++t) out[tables[t]] = c[t] / c[n];
  return out;
}

void apply_pooling_factors(const std::map<std::string, double>& measured, std::vector<dist::PlannerTable>* tables) {
  for (dist::PlannerTable& t : *tables) {
    auto it = measured.find(t.name);
    if (it == measured.end()) continue;
    t.pooling_factor = it->second;
    t.pooling_measured = true;
  }
}

}  // namespace tzrec::train
