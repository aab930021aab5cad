// Block files: tensors of a checkpoint split into pieces ("blocks") written by several ranks, and
// an index that reads any block of any tensor back from whatever pieces a checkpoint holds, so a
// checkpoint written on W ranks restores on any world size.
//
// Files in a checkpoint directory:
//
//   <prefix>-RRRRRR-of-WWWWWW.safetensors   rank R of W ranks (6 digits each, zero padded; more
//                                           digits when the number needs them); prefix "model" or
//                                           "optimizer". Every rank writes one file per prefix,
//                                           possibly holding no block.
//   model.safetensors, optimizer.safetensors
//                                           whole tensors (train/checkpoint.h); each tensor is read
//                                           as one block covering it.
//
// A block is a piece of a logical tensor: the tensor's name, its global shape (2-D [R, C]; 1-D [R]
// for row-wise state; 0-D for scalars such as a step counter) and the block's offsets into it
// (2-D: row and column; 1-D: row; 0-D: none). Inside a rank file:
//
//   tensor key   the logical name when the rank holds one block of that tensor, otherwise
//                "<name>@<row_offset>,<col_offset>" (col_offset 0 for 1-D);
//   value        the block itself, shape [rows, cols] / [rows] / [];
//   __metadata__ (safetensors string map) one entry per tensor key, a compact JSON object
//                  "<key>": {"name": "<logical name>", "global_shape": [R, C], "offsets": [r, c]}
//                (offsets has one entry per dimension of global_shape), plus
//                  "__format__": {"format": "tzrec.tensor_blocks", "version": 1,
//                                 "rank": R, "world_size": W}
//                which must agree with the file name.
//
// Blocks may overlap (replicated data: any copy is used and copies are not compared), except
// 0-D scalars held by several ranks, whose copies must be equal. Blocks with no elements are not
// stored (unless the tensor itself is empty). Names starting with "__" are reserved.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "dist/sharding_plan.h"
#include "embedding/embedding_group_set.h"

namespace tzrec::checkpointing {

struct TensorBlock {
  std::string name;                   // logical tensor name
  std::vector<int64_t> global_shape;  // [R, C], [R] or []
  int64_t row_offset = 0;             // 1-D and 2-D
  int64_t col_offset = 0;             // 2-D only (must be 0 otherwise)
  torch::Tensor value;                // the block: [rows, cols], [rows] or [] (any device)
};

// "<dir>/<prefix>-RRRRRR-of-WWWWWW.safetensors".
std::string rank_block_file(const std::string& dir, const std::string& prefix, int rank,
                            int world_size);

// Writes one rank's blocks to rank_block_file(dir, prefix, rank, world_size) atomically (tmp file +
// rename, like save_safetensors); an empty `blocks` still writes the file (so that a reader can
// tell a rank without blocks from a missing rank). Checks, each a CheckpointError naming the file
// and the tensor: 0 <= rank < world_size; a non-empty name not starting with "__"; global_shape of
// 0 to 2 dims; value defined, strided, of a safetensors dtype, with the dims of global_shape and
// lying inside it (offsets >= 0; 0-D and 1-D: col_offset 0); blocks of one name agreeing on
// global shape and dtype; two blocks of one name at the same offsets only when they are the same
// (same shape and bytes: stored once). IoError on I/O failure.
void save_rank_blocks(const std::string& dir, const std::string& prefix, int rank, int world_size,
                      const std::vector<TensorBlock>& blocks);

// Index over the tensors of a checkpoint directory: the whole-tensor files present and all block
// files. Reads headers only; tensor bytes are read on demand by read_block / read_whole, only
// those of the pieces overlapping the requested block (contiguous row ranges by pread; column
// ranges row by row or in bounded chunks), into a result of the block's size.
//
// Construction throws CheckpointError naming the file and the tensor when: the directory cannot be
// listed; a header is corrupt (read_safetensors_header); block files disagree on the world size or
// a prefix lacks one of its W rank files (naming the missing file); a block file's __format__ or
// per-key metadata is missing, malformed or disagrees with the file name or the stored tensor
// (dims, extent inside the global shape); pieces of one tensor disagree on its global shape or
// dtype.
class CheckpointTensorIndex {
 public:
  explicit CheckpointTensorIndex(const std::string& dir);

  std::vector<std::string> names() const;  // logical tensors, sorted
  bool contains(const std::string& name) const;
  // An unknown name throws CheckpointError naming the directory and the tensor.
  std::vector<int64_t> shape(const std::string& name) const;  // global shape
  torch::ScalarType dtype(const std::string& name) const;
  // The file prefix that holds the tensor: "model" (model.safetensors, model-R-of-W) or
  // "optimizer".
  std::string file_prefix(const std::string& name) const;

  // Rows [row_offset, +rows) x columns [col_offset, +cols) of a 2-D tensor: [rows, cols].
  // 1-D (and whole-file N-D tensors, N > 2): rows along dim 0, col_offset / cols ignored:
  // [rows, shape[1:]...]. 0-D: the scalar (every argument ignored; all stored copies must be
  // equal). Assembled from every stored piece overlapping the block; a piece whose part of the
  // block earlier pieces already supplied is not read. CheckpointError naming the tensor when the
  // block lies outside the tensor, when part of it is covered by no piece (naming the first
  // missing range: an incomplete or corrupt checkpoint), or when a read fails.
  torch::Tensor read_block(const std::string& name, int64_t row_offset, int64_t rows,
                           int64_t col_offset, int64_t cols) const;
  // The whole tensor, of shape(name).
  torch::Tensor read_whole(const std::string& name) const;

  // W of the block files (1 when the directory has only whole-tensor files).
  int stored_world_size() const { return world_size_; }

 private:
  // One stored piece of a logical tensor, in matrix form (see safetensors.h: rows are dim 0, a
  // row is everything after it).
  struct Piece {
    size_t file = 0;  // index into files_
    std::string key;  // tensor key inside the file
    int64_t row_offset = 0;
    int64_t col_offset = 0;
    int64_t rows = 1;
    int64_t cols = 1;
  };
  struct Logical {
    std::vector<int64_t> shape;
    torch::ScalarType dtype = torch::kFloat32;
    std::vector<Piece> pieces;
  };

  void add_whole_file(size_t file);
  void add_block_file(size_t file, int rank, int world_size);
  void add_piece(const std::string& name, const std::vector<int64_t>& global_shape,
                 torch::ScalarType dtype, Piece piece);
  const Logical& find(const std::string& name) const;
  torch::Tensor read_scalar(const std::string& name, const Logical& t) const;

  std::string dir_;
  int world_size_ = 1;
  std::vector<SafetensorsHeader> files_;
  std::map<std::string, Logical> tensors_;
};

// Names of an embedding table's tensors in checkpoints (the same on any world size):
//   weight: group.parameter_name_of(table), its state-dict name below the model (a sequence group's
//   table "sequence.<t>" is "embedding_group.seq_emb_impls.__BASE__.ec_dict.<dim>.embeddings.<t>.weight");
//   sparse optimizer slot: "sparse.<table>.<slot>", except row-wise ([rows]) state of a column
//   block, which belongs to that block only: "sparse.<table>.<slot>@cols<c0>-<c1>" (restored only
//   onto the same column split).
std::string table_weight_name(const embedding::EmbeddingGroupSet& group, const std::string& table);
std::string shard_state_name(const std::string& table, const std::string& slot, const torch::Tensor& value,
                             const dist::Shard& shard, int64_t embedding_dim);

// The part of stored tensor `name` that `shard` holds: [rows, dim] state → rows × cols of the
// shard; [rows] → its rows; 0-D → the scalar.
torch::Tensor read_shard_block(const CheckpointTensorIndex& index, const std::string& name, const dist::Shard& shard);

}  // namespace tzrec::checkpointing
