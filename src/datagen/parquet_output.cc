#include "datagen/parquet_output.h"

#include <algorithm>

#include "data/file_output.h"
#include "parquet/writer.h"

namespace tzrec::datagen {

namespace {

void append_cell(const parquet::WriterField& field, const Cell& cell, parquet::ColumnBuilder* b) {
  const bool list = field.list_depth > 0;
  if (list) b->begin_list();
  switch (field.type) {
    case parquet::PhysicalType::kInt64:
      for (int64_t v : cell.ints) b->append<int64_t>(v);
      break;
    case parquet::PhysicalType::kFloat:
      for (float v : cell.floats) b->append<float>(v);
      break;
    default:
      for (const auto& v : cell.strings) b->append_string(v);
      break;
  }
  if (list) b->end_list();
}

}  // namespace

void write_rows_parquet(const RowGenerator& rows, const std::string& path, int64_t first_row,
                        int64_t num_rows, int64_t row_group_rows,
                        std::vector<std::pair<int64_t, int64_t>>* pairs) {
  const auto& columns = rows.plan().columns;
  std::vector<parquet::WriterField> fields;
  for (const auto& spec : columns) fields.push_back(column_field(spec));
  parquet::WriterOptions options;
  options.compression = parquet::Compression::kSnappy;
  options.dictionary = true;
  options.row_group_rows = row_group_rows;
  data::write_parquet_file(path, fields, options, "gen_data", [&](parquet::FileWriter& writer) {
    std::vector<Cell> cells;
    std::vector<int64_t> items;
    for (int64_t done = 0; done < num_rows; done += row_group_rows) {
      const int64_t count = std::min(row_group_rows, num_rows - done);
      std::vector<parquet::ColumnBuilder> builders;
      builders.reserve(columns.size());
      for (size_t c = 0; c < columns.size(); ++c) builders.emplace_back(writer.schema().column(static_cast<int>(c)));
      for (int64_t i = 0; i < count; ++i) {
        int64_t user = -1;
        rows.row(first_row + done + i, &cells, &items, &user);
        if (pairs != nullptr) {
          for (int64_t item : items) pairs->emplace_back(user, item);
        }
        for (size_t c = 0; c < columns.size(); ++c) append_cell(fields[c], cells[c], &builders[c]);
      }
      parquet::Table table;
      table.num_rows = count;
      for (auto& b : builders) table.columns.push_back(b.finish());
      writer.write(std::move(table));
    }
  });
}

}  // namespace tzrec::datagen
