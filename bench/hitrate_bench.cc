// Speed of the exact top-K search behind `tzrec hitrate` (retrieval/exact_top_k.h) next to the
// matrix product alone: Q queries × N items of dim D, top K, scanned in item blocks as the tool
// does. Prints one JSON line: seconds of the search, seconds of one torch::mm pass over the same
// blocks (no selection), their ratio, and the GEMM rate.
//
//   tzrec_hitrate_bench [--queries 100000] [--items 1000000] [--dim 64] [--top_k 200]
//                       [--query_batch 1024] [--item_block 16384]
#include <chrono>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include "retrieval/exact_top_k.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("exact top-K search speed");
  int64_t queries = 100000, items = 1000000, dim = 64, top_k = 200, query_batch = 1024, item_block = 16384;
  app.add_option("--queries", queries);
  app.add_option("--items", items);
  app.add_option("--dim", dim);
  app.add_option("--top_k", top_k);
  app.add_option("--query_batch", query_batch);
  app.add_option("--item_block", item_block);
  CLI11_PARSE(app, argc, argv);
  torch::manual_seed(1);
  torch::Tensor item_table = torch::randn({items, dim});
  torch::Tensor users = torch::randn({queries, dim});

  // The matrix products alone, block by block (what the search cannot do without).
  auto t0 = std::chrono::steady_clock::now();
  double checksum = 0;
  for (int64_t q = 0; q < queries; q += query_batch) {
    torch::Tensor qb = users.slice(0, q, q + query_batch);
    for (int64_t i = 0; i < items; i += item_block) {
      checksum += torch::mm(qb, item_table.slice(0, i, i + item_block).t()).select(1, 0).sum().item<double>();
    }
  }
  const double mm_seconds = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  int64_t found = 0;
  for (int64_t q = 0; q < queries; q += query_batch) {
    tzrec::retrieval::ExactTopK search(users.slice(0, q, q + query_batch), top_k,
                                       tzrec::retrieval::Metric::kInnerProduct);
    for (int64_t i = 0; i < items; i += item_block) search.add_items(item_table.slice(0, i, i + item_block), i);
    found += search.result().indices.numel();
  }
  const double search_seconds = seconds_since(t0);
  const double flops = 2.0 * static_cast<double>(queries) * static_cast<double>(items) * static_cast<double>(dim);
  std::printf(
      "{\"queries\": %lld, \"items\": %lld, \"dim\": %lld, \"top_k\": %lld, \"threads\": %d, \"search_seconds\": %.3f, "
      "\"mm_seconds\": %.3f, \"ratio\": %.3f, \"gemm_gflops\": %.1f, \"found\": %lld, \"checksum\": %.3g}\n",
      static_cast<long long>(queries), static_cast<long long>(items), static_cast<long long>(dim),
      static_cast<long long>(top_k), torch::get_num_threads(), search_seconds, mm_seconds,
      search_seconds / mm_seconds, flops / mm_seconds / 1e9, static_cast<long long>(found), checksum);
  return 0;
}
