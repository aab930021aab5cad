// How a remapping collection reaches the other ranks of a job without embedding/ knowing about
// process groups (dist/process_group_id_exchange.h implements it): the row-wise sharded
// zero-collision hashed tables (zch_sharding.h) send each raw id to the rank that owns it and get
// its row back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::embedding {

class IdExchange {
 public:
  virtual ~IdExchange() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Collective (every rank calls it, in the same order): the first send_counts[0] values of
  // `values` ([N] int64) go to rank 0, the next send_counts[1] to rank 1, ...; returns the values
  // received, in source-rank order, with their counts per source rank in *recv_counts (when not
  // null). `known_recv_counts`, when given, are those counts (saves one exchange). `what` names the
  // exchange in errors.
  virtual torch::Tensor exchange(const torch::Tensor& values, const std::vector<int64_t>& send_counts,
                                 std::vector<int64_t>* recv_counts, const std::string& what,
                                 const std::vector<int64_t>* known_recv_counts = nullptr) = 0;
};

// [N] int64 raw ids → [N] int64 owner ranks (id_owner_rank, id_owner.h).
torch::Tensor owner_ranks(const torch::Tensor& ids, int world_size);

// Collective: sends each id of every table (ids[t], [N_t] int64; an undefined entry: a table
// every rank skips) to the rank owning it, calls owner_rows(t, owned) once per defined table with
// every id of table t this rank received (grouped by source rank, each source's in its order) and
// returns the row each id got from its owner, per table in the order of ids[t] (undefined where
// ids[t] is). Three exchanges for all tables together: the counts per rank and table, the ids, the
// rows. `what` names them in errors.
std::vector<torch::Tensor> route_to_owners(IdExchange& exchange, const std::vector<torch::Tensor>& ids,
                                           const std::function<torch::Tensor(size_t t, const torch::Tensor& owned)>& owner_rows,
                                           const std::string& what);

}  // namespace tzrec::embedding
