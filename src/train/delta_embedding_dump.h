// Delta embedding dumps (train_config.delta_embedding_dump_config; TorchEasyRec's
// tzrec/utils/delta_embedding_dump.py): during training, every dump_interval_steps steps or
// dump_interval_minutes minutes, each rank writes the embedding rows that training touched since
// its previous dump — with their values after the step — to a Parquet file, so that an online
// serving store can take the changed rows of a model that trains continuously
// (docs/tzrec-compatibility.md §5.15).
//
// What is touched: every id a training step looked up (evaluation is not tracked), per table, in
// the shards of this rank that served it. The key of a row is its row number in the whole table,
// and for zero-collision hashed and dynamic tables the raw id. A zero-collision hashed table also
// publishes the ids its evictions admitted and evicted; an id it does not hold gets the fallback
// row it is served now. A dynamic table's ids that it does not hold (not admitted, or evicted)
// are left out, with a warning giving their count.
//
// One file per dump and rank: with one process "<output_dir>/<file_prefix>_step_<N>.parquet", with
// W ranks "<output_dir>/step_<N>/<file_prefix>_step_<N>_rank_<r>_of_<W>.parquet" (every rank
// writes one, an empty one when it touched nothing, so a step's set is complete); one process
// writes no file for a dump without rows. Columns: global_step int64, rank int32, world_size int32,
// feature_name string (the table's features joined by ","), table_fqn string (TorchEasyRec's
// state-dict name of the table without ".weight"), key_id int64, embedding list<float> (or
// list<uint8>: the QUint8RowwiseF16 rows of quant_type DELTA_EMBEDDING_QUANT_INT8,
// embedding/quint8_rowwise_f16.h), source string ("model_delta_tracker"). Rows of a table are in
// ascending key order, tables in the model's order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_group_set.h"
#include "train/delta_dump_schedule.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

// The table rules of a delta embedding dump (check_config runs them as train_eval does):
// quant_type DELTA_EMBEDDING_QUANT_INT8 needs an even embedding_dim in every table → ConfigError
// naming the table. Nothing when the config has no delta_embedding_dump_config.
void check_delta_embedding_dump_tables(const protos::EasyRecConfig& config, const embedding::EmbeddingGroupSet& group);

class DeltaEmbeddingDumper {
 public:
  // Starts tracking every table of `group` (built, fused or sharded, with its remapping attached).
  DeltaEmbeddingDumper(const protos::EasyRecConfig& config, embedding::EmbeddingGroupSet& group, int rank,
                       int world_size);

  // Training starts: the clock of dump_interval_minutes starts here.
  void start() { schedule_.start(); }
  // After training step `step`: dumps if the schedule says so (delta_dump_schedule.h).
  void after_step(int64_t step);
  // At the end of training (after the last step, also when a signal stops it): dumps the rows
  // touched after the last dump, unless the schedule says it was just done.
  void final_dump(int64_t step);
  // Writes the dump of `step` (> 0) and returns the file's path, or "" when none was written.
  std::string dump(int64_t step);

  const std::string& output_dir() const { return output_dir_; }

 private:
  enum class Kind { kPlain, kZch, kDynamic };
  struct Table {
    Kind kind;
    std::string fqn;           // TorchEasyRec's table FQN
    std::string feature_name;  // features joined by ","
    size_t index;              // in its collection
    embedding::EmbeddingBagCollection ebc{nullptr};
    embedding::ZchEmbeddingBagCollection zch{nullptr};
    embedding::DynamicEmbeddingBagCollection dynamic{nullptr};
  };
  // Keys [K] int64 ascending and their rows [K, dim] float32 of one table, taken from its tracker.
  std::pair<torch::Tensor, torch::Tensor> take(Table& table);
  std::string path_of(int64_t step) const;

  std::vector<Table> tables_;
  int rank_;
  int world_size_;
  bool quantize_;
  DeltaDumpSchedule schedule_;
  std::string output_dir_;
  std::string file_prefix_;
};

}  // namespace tzrec::train
