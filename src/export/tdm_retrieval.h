// `tzrec tdm_retrieval` (TorchEasyRec tzrec/tools/tdm/retrieval.py, docs/tzrec-compatibility.md
// §3.5): beam search over the TDM tree with the exported scorer (export_dir/model) for every
// input row, the retrieved leaf items written per row and recall reported against the row's item.
//
// The model and its config come from --scripted_model_path (an export of a tdm model: its
// export_dir/model package); data_config.tdm_sampler names the node table (item_input_path) and
// the predict edge table the walk follows (tdm/beam_search.h). Each input row is a user with
// their true item in the tdm_sampler's item_id_field; label_fields are not read.
//
// Scoring a level: the rows' candidates become rows of their own — the item columns (the
// tdm_sampler's attr_fields but tree_level, among the input's feature columns) take the node's
// attributes from the node table, every other column repeats the user's cell — parsed by the
// config's features and scored by the model's positive probability ("probs1" with num_class 2,
// else "probs"). Beam: tdm/beam_search.h.
//
// Output (<predict_output_path>/part-<RANK>.parquet|csv, data/prediction_writer.h): the
// --reserved_columns, then "recall_ids" (list<int64>: the recall_num retrieved item ids, best
// first; with hashed ids, USE_HASH_NODE_ID=1, list<string>: the nodes' ids as the tree's tables
// write them, compared with the row's item id as text). Recall = the share of rows whose item is
// among their recall_ids, logged as TorchEasyRec logs it ("Retrieval Finished. Recall:<r>"), per process.
#pragma once

#include <cstdint>
#include <string>

namespace tzrec::exporting {

struct TdmRetrievalOptions {
  std::string scripted_model_path;  // export_dir/model of a tdm export
  std::string predict_input_path;
  std::string predict_output_path;
  std::string reserved_columns;  // comma list copied to the output
  int64_t batch_size = 0;        // > 0: sets data_config.batch_size
  int recall_num = 200;
  int n_cluster = 2;
  bool is_profiling = false;
  int debug_level = 0;       // > 0: only a warning (no __features__ column, as TorchEasyRec)
  std::string dataset_type;  // DatasetType name; empty: the config's
  std::string writer_type;   // empty: from the dataset type
  int num_worker_per_level = 1;
  std::string edit_config_json;
};

struct TdmRetrievalSummary {
  int64_t rows = 0;  // users retrieved for
  int64_t hits = 0;  // rows whose item was retrieved
  double recall = 0;
  std::string output_file;
};

// Errors: UsageError for missing flags or a --scripted_model_path that is not a tdm scorer
// package; the config / tree errors of tdm/beam_search.h (tables that do not match the config);
// the loader's DataErrors.
TdmRetrievalSummary tdm_retrieval(const TdmRetrievalOptions& options);

}  // namespace tzrec::exporting
