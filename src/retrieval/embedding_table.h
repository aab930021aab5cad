// Tables of ids and embeddings, as `tzrec predict` writes them for a tower (`item_tower_emb`,
// `user_tower_emb`): read by `tzrec hitrate` and `tzrec create_faiss_index`, CSV (with a header) or
// Parquet (data/table_sources.h). An embedding is a list of floats, or text of numbers joined by
// ',' (several vectors, one per interest, by ';' or as a list of lists), as TorchEasyRec's tools
// read them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "data/record_batch.h"
#include "feature/column_cells.h"

namespace tzrec::retrieval {

// An id cell as text: strings as they are, integers in decimal.
std::string id_text(const feature::CellValue& v);

// The embedding(s) of one row: `interests` vectors of width *dim (set by the first row read; 0
// before), appended to *out. DataError naming the cell for text that is not numbers, another
// number of vectors or another width.
void read_embeddings(const data::RecordBatch& rb, const feature::ColumnCells& cells, int64_t row, int64_t interests,
                     int64_t* dim, std::vector<float>* out);

struct EmbeddingTable {
  std::vector<std::string> ids;  // id_text of each row's id
  torch::Tensor embeddings;      // [N, D] float32
};

// What a tool calls the table and its columns in messages.
struct EmbeddingTableNames {
  std::string command;          // "hitrate"
  std::string id_flag;          // "--item_id_field"
  std::string embedding_flag;   // "--item_embedding_field"
  std::string what;             // "item"
};

// Reads the whole table at `path` (reader_type: data::table_format's). DataError naming the file,
// row and column for a list id, a bad embedding, and for a table without rows.
EmbeddingTable read_embedding_table(const std::string& path, const std::string& reader_type,
                                    const std::string& id_field, const std::string& embedding_field,
                                    int64_t batch_size, const EmbeddingTableNames& names);

}  // namespace tzrec::retrieval
