// FG_DAG inputs (docs/tzrec-compatibility.md §5.2): under fg_mode FG_DAG an input "feature:<name>"
// is the output of feature <name> in the same row — after its bucketizer: ids for a sparse
// feature, its value_dim numbers for a dense one — and "const:<text>" is <text> in every row.
// FeatureParser evaluates the producing features first (in dependency order) and adds their
// outputs and the constants to the batch as text columns named "feature:<name>" / "const:<text>"
// (several values joined by "\x1d"), which the consuming features read like any input column.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "data/record_batch.h"
#include "feature/feature.h"
#include "feature/hash.h"

namespace tzrec::feature {

// The column of DAG input `side`:`name` ("feature:age_binning", "const:1").
std::string dag_input_column(const std::string& side, const std::string& name);
// True for the columns dag_input_column() names (not read from input files).
bool is_dag_column(const std::string& column);

// What FeatureParser adds to each batch.
struct FgDag {
  std::vector<size_t> producers;    // indexes of features whose output is an input, dependencies first
  std::vector<std::string> consts;  // "const:<text>" columns
  bool empty() const { return producers.empty() && consts.empty(); }
};

// The DAG of `features` (their input_columns()). ConfigError at the consuming feature when a
// `feature:` input names no feature or the inputs form a cycle; NotSupportedError when it names a
// sequence feature.
FgDag plan_fg_dag(const std::vector<FeaturePtr>& features);

// Adds the DAG columns of `dag` to `batch` (constants, then the producers' outputs in order).
void add_dag_columns(const FgDag& dag, const std::vector<FeaturePtr>& features, HashKind hash_kind,
                     data::RecordBatch* batch);

}  // namespace tzrec::feature
