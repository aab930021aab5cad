#include "feature/fg_dag.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "base/error.h"

namespace tzrec::feature {
namespace {

constexpr std::string_view kFeaturePrefix = "feature:";
constexpr std::string_view kConstPrefix = "const:";
constexpr std::string_view kValueSep = "\x1d";

bool starts_with(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// The output of `f` for every row of `batch`, one text cell per row.
data::StringColumn output_column(const Feature& f, const data::RecordBatch& batch, HashKind hash_kind) {
  const FeatureInfo& info = f.info();
  const int64_t rows = batch.num_rows();
  SparseOut sparse;
  std::vector<float> dense(info.is_sparse ? 0 : static_cast<size_t>(rows * info.value_dim));
  ParseOutput out;
  out.rows = rows;
  out.hash_kind = hash_kind;
  out.sparse = &sparse;
  out.dense = dense.data();
  out.dense_stride = info.value_dim;
  f.parse(batch, out);
  data::StringColumn column;
  column.name = dag_input_column("feature", info.name);
  std::string cell;
  size_t at = 0;
  for (int64_t r = 0; r < rows; ++r) {
    cell.clear();
    if (info.is_sparse) {
      for (int64_t k = 0; k < sparse.lengths[static_cast<size_t>(r)]; ++k) {
        if (k > 0) cell.append(kValueSep);
        cell += std::to_string(sparse.values[at++]);
      }
    } else {
      for (int64_t k = 0; k < info.value_dim; ++k) {
        if (k > 0) cell.append(kValueSep);
        cell += fmt::format("{}", dense[static_cast<size_t>(r * info.value_dim + k)]);
      }
    }
    column.append(cell);
  }
  return column;
}

}  // namespace

std::string dag_input_column(const std::string& side, const std::string& name) { return side + ":" + name; }

bool is_dag_column(const std::string& column) {
  return starts_with(column, kFeaturePrefix) || starts_with(column, kConstPrefix);
}

FgDag plan_fg_dag(const std::vector<FeaturePtr>& features) {
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < features.size(); ++i) by_name.emplace(features[i]->info().name, i);
  // The producers each feature reads, and the constants.
  FgDag dag;
  std::vector<std::vector<size_t>> reads(features.size());
  for (size_t i = 0; i < features.size(); ++i) {
    for (const std::string& column : features[i]->input_columns()) {
      if (starts_with(column, kConstPrefix)) {
        if (std::find(dag.consts.begin(), dag.consts.end(), column) == dag.consts.end()) dag.consts.push_back(column);
        continue;
      }
      if (!starts_with(column, kFeaturePrefix)) continue;
      const std::string name = column.substr(kFeaturePrefix.size());
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        throw ConfigError(fmt::format("{}: input '{}' names no feature; use the feature_name of a feature of this "
                                      "config (grouped sequence sub-features cannot be inputs)",
                                      features[i]->field_path(), column));
      }
      if (features[it->second]->info().is_sequence) {
        throw NotSupportedError(fmt::format("{} input '{}': the output of a sequence feature as an FG DAG input",
                                            features[i]->field_path(), column));
      }
      reads[i].push_back(it->second);
    }
  }
  // Depth-first order of the producers, dependencies first; a feature met again while its own
  // inputs are being ordered closes a cycle.
  enum class Mark { kNone, kActive, kDone };
  std::vector<Mark> mark(features.size(), Mark::kNone);
  std::vector<bool> is_producer(features.size(), false);
  for (const auto& r : reads) {
    for (size_t p : r) is_producer[p] = true;
  }
  std::function<void(size_t)> visit = [&](size_t i) {
    if (mark[i] == Mark::kDone) return;
    if (mark[i] == Mark::kActive) {
      throw ConfigError(fmt::format("{}: its feature: inputs lead back to feature {} (a cycle); FG DAG inputs must "
                                    "not depend on themselves",
                                    features[i]->field_path(), features[i]->info().name));
    }
    mark[i] = Mark::kActive;
    for (size_t p : reads[i]) visit(p);
    mark[i] = Mark::kDone;
    if (is_producer[i]) dag.producers.push_back(i);
  };
  for (size_t i = 0; i < features.size(); ++i) visit(i);
  return dag;
}

void add_dag_columns(const FgDag& dag, const std::vector<FeaturePtr>& features, HashKind hash_kind,
                     data::RecordBatch* batch) {
  const int64_t rows = batch->num_rows();
  for (const std::string& name : dag.consts) {
    data::StringColumn column;
    column.name = name;
    const std::string value = name.substr(kConstPrefix.size());
    for (int64_t r = 0; r < rows; ++r) column.append(value);
    batch->columns.push_back(std::move(column));
  }
  for (size_t i : dag.producers) batch->columns.push_back(output_column(*features[i], *batch, hash_kind));
}

}  // namespace tzrec::feature
