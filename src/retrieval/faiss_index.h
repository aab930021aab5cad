// `tzrec create_faiss_index`: TorchEasyRec's tools/create_faiss_index (utils/faiss_util.py) — an
// approximate-search index of an item embedding table for the serving side, built with Debian's
// faiss library (docs/tzrec-compatibility.md §3.5):
//   - the table: `id_field` and `embedding_field` of a CSV (with a header) or Parquet table
//     (embedding_table.h: a list of floats or ','-joined text);
//   - `index_type` IVFFlatIP / IVFFlatL2: faiss::IndexIVFFlat over a flat inner-product / L2
//     quantizer with `ivf_nlist` lists, trained (k-means) on all the embeddings, then filled;
//     HNSWFlatIP / HNSWFlatL2: faiss::IndexHNSWFlat with `hnsw_M` links and `hnsw_efConstruction`;
//   - written as `<index_output_dir>/faiss_index` (faiss::write_index, readable by faiss.read_index)
//     and `<index_output_dir>/id_mapping` (one id per line, in table order: the index's row i is
//     line i).
#pragma once

#include <cstdint>
#include <string>

namespace tzrec::retrieval {

struct FaissIndexOptions {
  std::string embedding_input_path;
  std::string index_output_dir;
  std::string id_field;
  std::string embedding_field;
  std::string index_type = "IVFFlatIP";
  int64_t batch_size = 1024;
  int64_t ivf_nlist = 1000;
  int64_t hnsw_M = 32;
  int64_t hnsw_efConstruction = 200;
  std::string reader_type;  // CsvReader | ParquetReader; empty: from the file names
};

// Builds and writes the index; returns the number of embeddings indexed. UsageError for an
// unknown index_type, a missing field or output dir, a non-positive size, and ivf_nlist above
// the number of embeddings (k-means needs a point per list); DataError for bad rows (naming file,
// row and column); IoError when the files cannot be written.
int64_t create_faiss_index(const FaissIndexOptions& options);

}  // namespace tzrec::retrieval
