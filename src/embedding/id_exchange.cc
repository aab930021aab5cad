#include "embedding/id_exchange.h"

#include "embedding/id_owner.h"

namespace tzrec::embedding {

torch::Tensor owner_ranks(const torch::Tensor& ids_in, int world_size) {
  TORCH_CHECK(ids_in.dim() == 1 && ids_in.scalar_type() == torch::kInt64, "owner_ranks: ids must be [N] int64");
  const torch::Tensor ids = ids_in.contiguous();
  torch::Tensor out = torch::empty_like(ids);
  const int64_t* in = ids.data_ptr<int64_t>();
  int64_t* owner = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) owner[i] = id_owner_rank(in[i], world_size);
  return out;
}

torch::Tensor route_to_owners(IdExchange& exchange, const torch::Tensor& ids,
                              const std::function<torch::Tensor(const torch::Tensor&)>& owner_rows,
                              const std::string& what) {
  const int world = exchange.world_size();
  const torch::Tensor owners = owner_ranks(ids, world);
  const torch::Tensor order = torch::argsort(owners, /*stable=*/true, 0);
  const torch::Tensor counts = torch::bincount(owners, {}, world);
  const std::vector<int64_t> send(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + world);
  std::vector<int64_t> recv;
  const torch::Tensor received = exchange.exchange(ids.index({order}), send, &recv, what + " (ids)");
  const torch::Tensor rows = owner_rows(received);
  const torch::Tensor back = exchange.exchange(rows, recv, nullptr, what + " (rows)", &send);
  torch::Tensor out = torch::empty_like(ids);
  out.index_put_({order}, back);
  return out;
}

}  // namespace tzrec::embedding
