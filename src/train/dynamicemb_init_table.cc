#include "train/dynamicemb_init_table.h"

#include <algorithm>
#include <exception>
#include <map>
#include <numeric>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "feature/column_cells.h"
#include "feature/hash.h"
#include "feature/zch_settings.h"

namespace tzrec::train {
namespace dynamicemb_init_table_detail {

// Where a row came from: its worker's file list, the file, the line / row.
struct Origin {
  int32_t worker = 0;
  int32_t file = 0;
  int64_t line = 0;
};

// What one reader thread collected.
struct WorkerRows {
  std::vector<int64_t> ids;
  std::vector<float> values;
  std::vector<Origin> origins;
  std::vector<std::string> files;
  std::string unit = "line";
  std::exception_ptr error;
};

class RowReader {
 public:
  RowReader(const InitTableOptions& o, const std::string& id_column, const std::string& embedding_column)
      : o_(o), id_column_(id_column), embedding_column_(embedding_column), buckets_(feature::kZchHashBucketSize),
        hash_(feature::hash_kind_from_env()) {}

  void read(data::BatchSource& source, int32_t worker, WorkerRows* out) const {
    std::map<std::string, int32_t> file_ids;
    while (auto batch = source.next()) {
      const data::RecordBatch& rb = batch->records;
      out->unit = rb.origin_unit;
      const feature::ColumnCells ids(rb, id_column_, "the init table's id column");
      const feature::ColumnCells values(rb, embedding_column_, "the init table's embedding column");
      for (int64_t r = 0; r < rb.num_rows(); ++r) {
        out->ids.push_back(id_of(ids, r));
        append_values(values, r, &out->values);
        const data::RowOrigin& origin = rb.origins[static_cast<size_t>(r)];
        const std::string& file = rb.files[static_cast<size_t>(origin.file_index)];
        auto [it, added] = file_ids.emplace(file, static_cast<int32_t>(out->files.size()));
        if (added) out->files.push_back(file);
        out->origins.push_back({worker, it->second, origin.line});
      }
    }
  }

 private:
  int64_t id_of(const feature::ColumnCells& cells, int64_t r) const {
    if (!cells.is_scalar()) {
      throw DataError(fmt::format("{}: {} holds {}; an init table has one id per row", cells.where(r), o_.owner,
                                  cells.describe_type()));
    }
    if (cells.empty(r)) throw DataError(fmt::format("{}: {}: the id is empty", cells.where(r), o_.owner));
    const feature::CellValue v = cells.scalar(r);
    if (!o_.hashed_ids) {
      int64_t id = 0;
      if (!feature::as_int64(v, &id)) {
        throw DataError(fmt::format("{}: {}: '{}' is not an int64 id; under fg_mode FG_NONE the features' columns "
                                    "hold raw int64 ids, and so must the init table's first column",
                                    cells.where(r), o_.owner, feature::display(v)));
      }
      return id;
    }
    if (v.kind == feature::CellValue::Kind::kFloat) {
      throw DataError(fmt::format("{}: {}: the id {} is a floating-point number; ids are strings or integers",
                                  cells.where(r), o_.owner, feature::display(v)));
    }
    std::string buf;
    return feature::hash_bucket(feature::as_text(v, &buf), buckets_, hash_);
  }

  void append_values(const feature::ColumnCells& cells, int64_t r, std::vector<float>* out) const {
    const size_t before = out->size();
    if (!cells.empty(r)) {
      cells.for_each(r, o_.separator, [&](const feature::CellValue& v) {
        double d = 0;
        if (!feature::as_double(v, &d)) {
          throw DataError(fmt::format("{}: {}: '{}' is not a number; an embedding is a list of numbers or text of "
                                      "numbers joined by --separator '{}'",
                                      cells.where(r), o_.owner, feature::display(v), o_.separator));
        }
        out->push_back(static_cast<float>(d));
      });
    }
    const size_t n = out->size() - before;
    if (static_cast<int64_t>(n) != o_.embedding_dim) {
      throw DataError(fmt::format("{}: {}: the embedding has {} value(s), expected embedding_dim {} (joined by "
                                  "--separator '{}' when it is text)",
                                  cells.where(r), o_.owner, n, o_.embedding_dim, o_.separator));
    }
  }

  const InitTableOptions& o_;
  std::string id_column_, embedding_column_;
  feature::Modulus buckets_;
  feature::HashKind hash_;
};

std::string where(const std::vector<WorkerRows>& workers, const Origin& o) {
  const WorkerRows& w = workers[static_cast<size_t>(o.worker)];
  return fmt::format("{} {} {}", w.files[static_cast<size_t>(o.file)], w.unit, o.line);
}

}  // namespace dynamicemb_init_table_detail

InitTableRows read_init_table(const InitTableOptions& o) {
  using namespace dynamicemb_init_table_detail;
  TORCH_CHECK(o.embedding_dim > 0 && o.workers >= 1, "read_init_table: embedding_dim and workers must be positive");
  InitTableRows out;
  const std::vector<std::string> columns = data::table_columns(o.format, o.path);
  if (columns.size() < 2) {
    throw DataError(fmt::format("{}: {} column(s) ({}); an init table's first column holds the ids and its second "
                                "the embeddings ({})",
                                o.path, columns.size(), fmt::join(columns, ", "), o.owner));
  }
  out.id_column = columns[0];
  out.embedding_column = columns[1];
  data::DatasetSources sources =
      data::open_table(o.format, o.path, {out.id_column, out.embedding_column}, o.batch_size, o.workers, 0, 1);
  const RowReader reader(o, out.id_column, out.embedding_column);
  std::vector<WorkerRows> rows(sources.sources.size());
  {
    std::vector<std::thread> threads;
    for (size_t w = 0; w < sources.sources.size(); ++w) {
      threads.emplace_back([&, w]() {
        try {
          reader.read(*sources.sources[w], static_cast<int32_t>(w), &rows[w]);
        } catch (...) {
          rows[w].error = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  for (const WorkerRows& w : rows) {
    if (w.error) std::rethrow_exception(w.error);
  }
  std::vector<Origin> origins;
  std::vector<float> values;
  for (WorkerRows& w : rows) {
    out.ids.insert(out.ids.end(), w.ids.begin(), w.ids.end());
    origins.insert(origins.end(), w.origins.begin(), w.origins.end());
    values.insert(values.end(), w.values.begin(), w.values.end());
    std::vector<float>().swap(w.values);
  }
  if (out.ids.empty()) throw DataError(fmt::format("{}: the init table has no rows ({})", o.path, o.owner));
  // Each id once: the first repeat in table order is named with the row it repeats.
  std::vector<size_t> order(out.ids.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return out.ids[a] < out.ids[b]; });
  size_t repeat = out.ids.size(), first = 0;
  for (size_t k = 1; k < order.size(); ++k) {
    if (out.ids[order[k]] == out.ids[order[k - 1]] && order[k] < repeat) {
      repeat = order[k];
      first = order[k - 1];
    }
  }
  if (repeat < out.ids.size()) {
    throw DataError(fmt::format("{} column {}: {}: the id of {} (raw id {}) is given again; each id once",
                                where(rows, origins[repeat]), out.id_column, o.owner, where(rows, origins[first]),
                                out.ids[repeat]));
  }
  out.values = torch::from_blob(values.data(), {static_cast<int64_t>(out.ids.size()), o.embedding_dim},
                                torch::kFloat32)
                   .clone();
  return out;
}

}  // namespace tzrec::train
