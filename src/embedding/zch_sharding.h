// Row-wise sharding of a zero-collision hashed table across the ranks of a job
// (docs/tzrec-compatibility.md §5.12), as TorchRec shards its managed-collision modules: the
// table's rows are split into the row_wise blocks of the sharding plan, rank r's ZchModule owns
// the slots of block r, and every raw id is remapped by the rank that owns it.
//
// Ownership of ids: id_owner_rank (id_owner.h), a hash of the id scaled to the world size, as for
// dynamic tables. (TorchRec splits the input range [0, 2^63 − 1) into W contiguous blocks instead,
// which puts every small raw id — FG_NONE columns of pre-encoded ids — on rank 0, leaving the
// other blocks unused.)
//
// Restoring on any world size: a checkpoint holds the place buffers of the whole table (the
// blocks of all ranks, concatenated in row order: TorchRec's sharded layout); the module of rank
// r' of W' takes the held ids it owns under W' — those whose slot lies in its block (sentinel slot
// excepted) keep it, the others move to the block's free slots (ascending, in id order) and their
// embedding rows and optimizer state must move with them (moved_from → moved_to). A block with
// more owned ids than its places keeps the most frequent (counts descending), then the most recent
// (last access descending), then the smallest ids; the rest are dropped (counted). Held ids thus
// look up the same weights on every world size; ids not held read the sentinel row of their
// owner's block (the last row of the block), which differs between world sizes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::embedding {

// ConfigError naming `field_path` (the table's zch message) when a row block of `boundaries`
// (world_size + 1 values over a table of `boundaries.back()` rows) has fewer than 2 rows: one for
// the block's ids and the sentinel row of the ids it does not hold.
void check_zch_row_blocks(const std::vector<int64_t>& boundaries, const std::string& field_path);

// Whether `name` is one of ZchModule::state()'s per-place buffers ([zch_size] each:
// _mch_sorted_raw_ids, _mch_remapped_ids_mapping, _mch_counts, _mch_last_access_iter), the ones
// that are sharded by rows; the others (_output_segments_tensor, _current_iter_tensor) are the same
// on every rank.
bool is_zch_place_buffer(const std::string& name);

struct ZchShardState {
  std::map<std::string, torch::Tensor> places;  // the block's place buffers [size], sorted by id
  torch::Tensor moved_from;                     // [M] int64: saved rows whose values move ...
  torch::Tensor moved_to;                       // [M] int64: ... to these rows of the block
  int64_t dropped = 0;                          // owned ids that did not fit the block
};

// The state of the module with slots [offset, offset + size) on rank `rank` of `world_size`,
// built from `saved`, the place buffers of the whole table (every name of `names`, all of one
// length; any world size and table size). CheckpointError naming `where` for a missing buffer,
// buffers of different lengths, or a slot held twice.
ZchShardState zch_shard_state(const std::map<std::string, torch::Tensor>& saved, const std::vector<std::string>& names,
                              int64_t offset, int64_t size, int rank, int world_size, const std::string& where);

}  // namespace tzrec::embedding
