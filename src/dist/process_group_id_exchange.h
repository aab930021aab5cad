// embedding::IdExchange over a process group: the all_to_all of ids and rows that row-wise
// sharded zero-collision hashed tables need (embedding/zch_sharding.h).
#pragma once

#include <memory>

#include "dist/process_group.h"
#include "embedding/id_exchange.h"

namespace tzrec::dist {

class ProcessGroupIdExchange : public embedding::IdExchange {
 public:
  explicit ProcessGroupIdExchange(std::shared_ptr<ProcessGroup> pg) : pg_(std::move(pg)) {}
  int rank() const override { return pg_->rank(); }
  int world_size() const override { return pg_->world_size(); }
  torch::Tensor exchange(const torch::Tensor& values, const std::vector<int64_t>& send_counts,
                         std::vector<int64_t>* recv_counts, const std::string& what,
                         const std::vector<int64_t>* known_recv_counts = nullptr) override;

 private:
  std::shared_ptr<ProcessGroup> pg_;
};

}  // namespace tzrec::dist
