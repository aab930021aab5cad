// `tzrec resolve_sid_collisions`: TorchEasyRec's tzrec/tools/sid/resolve_sid_collisions.py
// (docs/tzrec-compatibility.md §3.5), no torch. Reads a SID table (`tzrec predict` of a SID
// model: an item id column, the codes, and for the candidate strategy the flat candidate codes,
// top-k × layers per item), moves the items of over-full SID buckets to free last-layer codes of
// their band (retrieval/sid_collision.h) and publishes one generation of the SID bundle:
//   <output_path>/<generation>/sid_to_items/part-0.parquet   one row per occupied SID, ascending:
//       codebook (list<int64>), offset_codebook (each layer shifted by the sizes of the layers
//       before it), itemids (list of item ids in slot order) — always Parquet;
//   <item_to_sid_root>/<generation>/item_to_sid/part-0.<parquet|csv>   one row per input item, in
//       input order: item_id, origin_codebook, codebook, offset_codebook, index (the slot);
//       written by the reader's kind or --item_to_sid_writer_type (CSV codes as "1,2,3");
//   <output_path>/<generation>/manifest.json   written last: bundle_uuid, codebook, capacity,
//       max_observed_items_per_sid, artifacts {name: {save_type, rows, location}}, item_id_type.
// --rate_only computes and logs the statistics only. --from_generation appends onto a published
// generation (retrieval/sid_bundle.h reads it back): no published item moves, new items continue
// the published buckets' slots; the new generation holds the whole corpus plus
// delta_sid_to_items (the SIDs that gained items) and delta_item_to_sid (the new rows).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "retrieval/sid_collision.h"

namespace tzrec::retrieval {

struct SidCollisionOptions {
  std::string input_path;
  std::string output_path;
  std::string item_to_sid_root;  // empty: output_path
  std::string generation;
  std::string from_generation;   // append onto this published generation; empty: full resolve
  std::string reader_type;       // CsvReader | ParquetReader; empty: from the file names
  std::string item_to_sid_writer_type;  // CsvWriter | ParquetWriter; empty: the reader's kind
  int64_t batch_size = 100000;
  int64_t progress_interval = 1000000;
  std::string item_id_field = "item_id";
  std::string code_field = "codes";
  std::vector<int64_t> codebook;
  std::string candidate_codes_field = "candidate_codes";
  int64_t max_items_per_codebook = 0;
  std::string strategy = "candidate";  // candidate | random
  int64_t random_num_candidates = 64;
  bool rate_only = false;
};

// The whole tool. UsageError for bad options, DataError naming the file and row for bad input;
// returns the statistics (also logged).
SidCollisionStats run_resolve_sid_collisions(const SidCollisionOptions& options);

}  // namespace tzrec::retrieval
