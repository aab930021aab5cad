// How a remapping collection reaches the other ranks of a job without embedding/ knowing about
// process groups (dist/process_group_id_exchange.h implements it): the row-wise sharded
// zero-collision hashed tables (zch_sharding.h) send each raw id to the rank that owns it and get
// its row back.
#pragma once

#include <cstdint>
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

}  // namespace tzrec::embedding
