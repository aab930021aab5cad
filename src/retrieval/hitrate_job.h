// `tzrec hitrate`: TorchEasyRec's hitrate tool (tzrec/tools/hitrate.py, docs/tzrec-compatibility.md
// §3.5) with an exact search instead of a faiss IVF index. The item table (ids and embeddings) is
// read once into one [N, D] tensor; request rows (request id, ground-truth items, one embedding per
// interest) are read in batches, searched block by block over the items (ExactTopK) and scored
// (request_hits). Multi-process runs split the request rows over the ranks and add up the hits.
#pragma once

#include <cstdint>
#include <string>

namespace tzrec::retrieval {

struct HitrateOptions {
  std::string user_gt_input;          // [request_id, gt_items, user_tower_emb (, num_interests)]
  std::string item_embedding_input;   // [item_id, item_tower_emb]
  std::string total_hitrate_output;   // directory: part-<rank>... of one row {hitrate}; empty: none
  std::string hitrate_details_output; // directory: one row per request; empty: none
  int64_t batch_size = 1024;
  std::string index_type = "IVFFlatIP";  // IVFFlatIP (inner product) or IVFFlatL2 (squared L2)
  int64_t top_k = 200;
  bool topk_across_interests = false;
  std::string item_id_field = "item_id";
  std::string item_embedding_field = "item_tower_emb";
  std::string request_id_field = "request_id";
  std::string gt_items_field = "gt_items";
  std::string user_embedding_field = "user_tower_emb";
  int64_t num_interests = 1;
  std::string num_interests_field;  // empty: every request uses num_interests
  std::string reader_type;          // CsvReader | ParquetReader; empty: from the file names
  std::string writer_type;          // CsvWriter | ParquetWriter; empty: as the reader
};

struct HitrateResult {
  double hitrate = 0.0;  // hits / ground-truth items over all requests (all ranks)
  double hits = 0.0;
  double gt_count = 0.0;
  int64_t requests = 0;  // read by this rank
};

// Throws UsageError for bad options, DataError naming file, row and column for bad rows.
HitrateResult run_hitrate(const HitrateOptions& options);

}  // namespace tzrec::retrieval
