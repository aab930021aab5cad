#include "dist/process_group_id_exchange.h"

namespace tzrec::dist {

torch::Tensor ProcessGroupIdExchange::exchange(const torch::Tensor& values, const std::vector<int64_t>& send_counts,
                                               std::vector<int64_t>* recv_counts, const std::string& what,
                                               const std::vector<int64_t>* known_recv_counts) {
  std::vector<int64_t> received;
  torch::Tensor out = pg_->all_to_all(values.contiguous(), send_counts, &received, what, known_recv_counts);
  if (recv_counts != nullptr) *recv_counts = std::move(received);
  return out;
}

}  // namespace tzrec::dist
