#include "embedding/row_reset.h"

#include <string>

#include <ATen/CPUGeneratorImpl.h>

#include "base/stable_hash.h"
#include "embedding/fused_embedding_bags.h"

namespace tzrec::embedding {

uint64_t table_step_seed(const std::string& table, int64_t step) {
  return splitmix64(fnv1a64(table) + kGolden64 * static_cast<uint64_t>(step));
}

uint64_t block_step_seed(const std::string& table, int64_t block_offset, int64_t step) {
  return table_step_seed(block_offset == 0 ? table : table + "@" + std::to_string(block_offset), step);
}

void reset_table_rows(EmbeddingBagCollection& ebc, size_t table, const torch::Tensor& rows_in, uint64_t seed,
                      const std::function<void(torch::Tensor&)>& draw) {
  if (rows_in.numel() == 0) return;
  torch::NoGradGuard no_grad;
  const torch::Tensor rows = rows_in.to(torch::kInt64);
  const TableConfig& config = ebc->table_configs().at(table);
  torch::Tensor fresh = torch::empty({rows.size(0), config.embedding_dim}, torch::TensorOptions().dtype(config.dtype));
  {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    const torch::Tensor saved = gen.get_state();
    gen.set_current_seed(seed);
    draw(fresh);
    gen.set_state(saved);
  }
  write_table_rows(ebc, table, rows, fresh);
}

void write_table_rows(EmbeddingBagCollection& ebc, size_t table, const torch::Tensor& rows, const torch::Tensor& fresh) {
  torch::NoGradGuard no_grad;
  if (ShardedLookup* sharded = ebc->sharded()) {  // the rows live in this rank's shard
    sharded->reset_rows(table, rows, fresh);
    return;
  }
  ebc->table_weight(table).index_copy_(0, rows, fresh);
  if (FusedEmbeddingBags* fused = ebc->fused()) fused->reset_state_rows(ebc->table_configs().at(table).name, rows);
}

}  // namespace tzrec::embedding
