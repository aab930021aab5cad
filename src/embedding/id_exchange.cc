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

std::vector<torch::Tensor> route_to_owners(IdExchange& exchange, const std::vector<torch::Tensor>& ids,
                                           const std::function<torch::Tensor(size_t t, const torch::Tensor& owned)>& owner_rows,
                                           const std::string& what) {
  const int64_t world = exchange.world_size();
  std::vector<int64_t> tables;  // the defined entries
  for (size_t t = 0; t < ids.size(); ++t) {
    if (ids[t].defined()) tables.push_back(static_cast<int64_t>(t));
  }
  const int64_t num = static_cast<int64_t>(tables.size());
  // Every id keyed by (owner, table): sorted, the send buffer; counts[r][k] ids of table k for r.
  std::vector<torch::Tensor> all_ids, keys;
  for (int64_t k = 0; k < num; ++k) {
    const torch::Tensor& v = ids[tables[k]];
    all_ids.push_back(v);
    keys.push_back(owner_ranks(v, static_cast<int>(world)) * num + k);
  }
  const torch::Tensor flat = num > 0 ? torch::cat(all_ids) : torch::empty({0}, torch::kInt64);
  const torch::Tensor key = num > 0 ? torch::cat(keys) : torch::empty({0}, torch::kInt64);
  const torch::Tensor order = torch::argsort(key, /*stable=*/true, 0);
  const torch::Tensor counts = torch::bincount(key, {}, world * num).contiguous();  // [W · T]
  // Counts per (source, table) this rank receives.
  const std::vector<int64_t> per_rank(static_cast<size_t>(world), num);
  const torch::Tensor received_counts =
      exchange.exchange(counts, per_rank, nullptr, what + " (counts)", &per_rank).contiguous();
  const int64_t* sent = counts.data_ptr<int64_t>();
  const int64_t* got = received_counts.data_ptr<int64_t>();
  std::vector<int64_t> send(static_cast<size_t>(world), 0), recv(static_cast<size_t>(world), 0);
  for (int64_t r = 0; r < world; ++r) {
    for (int64_t k = 0; k < num; ++k) {
      send[r] += sent[r * num + k];
      recv[r] += got[r * num + k];
    }
  }
  const torch::Tensor received = exchange.exchange(flat.index({order}), send, nullptr, what + " (ids)", &recv);
  // Per table, its segments of every source; the rows go back in the order received.
  std::vector<std::vector<torch::Tensor>> segments(static_cast<size_t>(num));
  std::vector<int64_t> start(static_cast<size_t>(world * num));
  int64_t at = 0;
  for (int64_t r = 0; r < world; ++r) {
    for (int64_t k = 0; k < num; ++k) {
      start[r * num + k] = at;
      segments[k].push_back(received.narrow(0, at, got[r * num + k]));
      at += got[r * num + k];
    }
  }
  torch::Tensor rows_back = torch::empty({at}, torch::kInt64);
  for (int64_t k = 0; k < num; ++k) {
    const torch::Tensor rows = owner_rows(static_cast<size_t>(tables[k]), torch::cat(segments[k]));
    int64_t offset = 0;
    for (int64_t r = 0; r < world; ++r) {
      const int64_t n = got[r * num + k];
      rows_back.narrow(0, start[r * num + k], n).copy_(rows.narrow(0, offset, n));
      offset += n;
    }
  }
  const torch::Tensor back = exchange.exchange(rows_back, recv, nullptr, what + " (rows)", &send);
  torch::Tensor out_flat = torch::empty_like(flat);
  out_flat.index_put_({order}, back);
  std::vector<torch::Tensor> out(ids.size());
  int64_t offset = 0;
  for (int64_t k = 0; k < num; ++k) {
    const int64_t n = ids[tables[k]].numel();
    out[tables[k]] = out_flat.narrow(0, offset, n);
    offset += n;
  }
  return out;
}

}  // namespace tzrec::embedding
