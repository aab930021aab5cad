// `tzrec create_faiss_index`: TorchEasyRec's `python -m tzrec.tools.create_faiss_index`, the same
// flags — a faiss index of an item embedding table and its id mapping, for the serving side
// (retrieval/faiss_index.h, docs/tzrec-compatibility.md §3.5).
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/odps_quota_flag.h"
#include "retrieval/faiss_index.h"

namespace tzrec::cli {

Action add_create_faiss_index_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("create_faiss_index",
                                 "Build a faiss index (IVFFlat / HNSWFlat) of an item embedding table for serving");
  auto options = std::make_shared<retrieval::FaissIndexOptions>();
  cmd->add_option("--embedding_input_path", options->embedding_input_path,
                  "item embedding table (CSV with a header or Parquet): an id column and an embedding column")
      ->required();
  cmd->add_option("--index_output_dir", options->index_output_dir, "writes faiss_index and id_mapping there")
      ->required();
  cmd->add_option("--id_field", options->id_field, "the id column")->required();
  cmd->add_option("--embedding_field", options->embedding_field,
                  "the embedding column: a list of floats or ','-joined text")
      ->required();
  cmd->add_option("--index_type", options->index_type, "IVFFlatIP (default), HNSWFlatIP, IVFFlatL2 or HNSWFlatL2");
  cmd->add_option("--batch_size", options->batch_size, "rows per read batch (default 1024)");
  cmd->add_option("--ivf_nlist", options->ivf_nlist, "lists (k-means centroids) of an IVFFlat index (default 1000)");
  cmd->add_option("--hnsw_M", options->hnsw_M, "links per node of an HNSWFlat index (default 32)");
  cmd->add_option("--hnsw_efConstruction", options->hnsw_efConstruction,
                  "efConstruction of an HNSWFlat index (default 200)");
  cmd->add_option("--reader_type", options->reader_type,
                  "CsvReader or ParquetReader (default: from the file names, .csv / .txt are CSV)");
  auto quota = std::make_shared<std::string>();
  auto* quota_opt = add_odps_quota_flag(cmd, *quota);
  // quota holds what CLI11 writes when it parses: the action keeps it alive.
  return [options, quota, quota_opt]() {
    warn_odps_quota(quota_opt);
    retrieval::create_faiss_index(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
