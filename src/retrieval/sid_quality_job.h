// `tzrec evaluate_sid_quality`: TorchEasyRec's tzrec/tools/sid/evaluate_sid_quality.py
// (docs/tzrec-compatibility.md §3.5), no torch. Reads one SID field of an item table — or an
// original field and a final field of the same rows, to compare them — and reports the collision
// and distribution metrics of retrieval/sid_quality.h: logged, and written as long-format tables.
//
// Rows: a row is valid when its codes are well formed (retrieval/sid_codes.h) and every code is
// inside its layer's codebook; with --origin_codes_field, when both fields are. Invalid rows are
// dropped with a warning giving their counts ("drop") or stop the run at the first batch holding
// one ("error": a DataError naming the file and row of the first and why it is invalid). Views:
// "single" (one field), or "before" (origin field), "after" (codes field) and "delta"
// (after − before) over the rows valid in both.
//
// Outputs (optional, each a directory holding part-0.parquet or part-0.csv, --writer_type, by
// default the reader's kind):
//   summary      source, view, sid_field, codebook ("256,256,256"), input_rows, evaluated_items,
//                invalid_pair_rows, then the global metrics (total, unique_sid, no_collision_rate,
//                uniquely_identified_item_rate, max_collision, gini, entropy, max_entropy,
//                entropy_ratio), one row per view;
//   layer stats  source, view, sid_field, codebook, input_rows, evaluated_items,
//                invalid_pair_rows, layer, codebook_size, coverage, dead_codes, perplexity, one row
//                per view and layer.
// The delta view's sid_field is "<origin>-><codes>". The input and the outputs must not share a
// directory (data/path_conflict.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/batch_source.h"
#include "retrieval/sid_quality.h"

namespace tzrec::retrieval {

struct SidQualityOptions {
  std::string input_path;
  std::string summary_output;      // empty: not written
  std::string layer_stats_output;  // empty: not written
  std::string codes_field = "codes";
  std::string origin_codes_field;  // empty: one view
  std::vector<int64_t> codebook;
  std::string invalid_row_policy = "drop";  // drop | error
  int64_t log_top_sids = 0;                 // > 0: log that many most frequent SIDs per view
  int64_t batch_size = 4096;
  std::string reader_type;  // CsvReader | ParquetReader; empty: from the file names
  std::string writer_type;  // CsvWriter | ParquetWriter; empty: the reader's kind
};

struct SidQualityView {
  std::string view;       // single | before | after | delta
  std::string sid_field;  // the field, or "<origin>-><codes>" for delta
  SidQualityResult result;
};

struct SidQualityEvaluation {
  int64_t input_rows = 0;
  int64_t evaluated_items = 0;
  int64_t invalid_rows = 0;
  std::vector<SidQualityView> views;
};

// "256,256,256" as sizes. Throws UsageError naming --codebook for a token that is not an integer
// (Python's int()) or a size < 1.
std::vector<int64_t> parse_sid_codebook(const std::string& text);

// The evaluation over the batches of `source` (options: the fields, codebook, policy, top SIDs),
// logged. Throws DataError for a missing field, a bad list type, an invalid row under "error",
// and when no row is valid.
SidQualityEvaluation evaluate_sid_quality(data::BatchSource& source, const SidQualityOptions& options);

// The whole tool: checks the options (UsageError), reads options.input_path, evaluates and writes
// the outputs.
SidQualityEvaluation run_evaluate_sid_quality(const SidQualityOptions& options);

}  // namespace tzrec::retrieval
