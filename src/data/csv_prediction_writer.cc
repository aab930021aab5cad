#include "data/csv_prediction_writer.h"

#include <cerrno>
#include <cstring>
#include <iterator>

#include "base/error.h"

namespace tzrec::data {
namespace {

using parquet::ColumnData;
using parquet::PhysicalType;

// Numbers in their shortest round-trip form (fmt's "{}"): 0.1f -> "0.1", 1e-07f -> "1e-07".
template <typename T>
void append_number(T v, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "{}", v);
}

// One leaf slot as text; null -> nothing.
void append_value(const ColumnData& c, int64_t slot, std::string* out) {
  if (c.is_null(slot)) return;
  switch (c.type()) {
    case PhysicalType::kBoolean:
      *out += c.data<uint8_t>()[slot] ? "true" : "false";
      break;
    case PhysicalType::kInt32:
      append_number(c.data<int32_t>()[slot], out);
      break;
    case PhysicalType::kInt64:
      append_number(c.data<int64_t>()[slot], out);
      break;
    case PhysicalType::kFloat:
      append_number(c.data<float>()[slot], out);
      break;
    case PhysicalType::kDouble:
      append_number(c.data<double>()[slot], out);
      break;
    case PhysicalType::kByteArray: {
      const std::string_view b = c.bytes(slot);
      out->append(b.data(), b.size());
      break;
    }
    default:  // refused by PredictionWriter::write
      break;
  }
}

// Row r of a typed column: scalars as is, lists joined by ",", lists of lists by ";" between
// the inner lists, maps as key:value entries joined by ","; null or empty -> nothing.
void append_typed(const TypedColumn& t, int64_t r, std::string* out) {
  const ColumnData& c = t.values;
  if (t.list_depth() == 0) {
    append_value(c, r, out);
    return;
  }
  const parquet::ListLevel& outer = c.lists[0];
  if (outer.is_null(r)) return;
  const int64_t b = outer.offsets[static_cast<size_t>(r)];
  const int64_t e = outer.offsets[static_cast<size_t>(r) + 1];
  for (int64_t i = b; i < e; ++i) {
    if (t.is_map()) {
      if (i > b) *out += ',';
      append_value(c, i, out);
      *out += ':';
      append_value(*t.map_values, i, out);
    } else if (t.list_depth() == 1) {
      if (i > b) *out += ',';
      append_value(c, i, out);
    } else {
      if (i > b) *out += ';';
      const parquet::ListLevel& inner = c.lists[1];
      if (inner.is_null(i)) continue;
      const int64_t ib = inner.offsets[static_cast<size_t>(i)];
      const int64_t ie = inner.offsets[static_cast<size_t>(i) + 1];
      for (int64_t s = ib; s < ie; ++s) {
        if (s > ib) *out += ',';
        append_value(c, s, out);
      }
    }
  }
}

}  // namespace

CsvPredictionWriter::CsvPredictionWriter(std::string path, char delimiter)
    : PredictionWriter(std::move(path)), delimiter_(delimiter) {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r') {
    throw UsageError(
        fmt::format("CsvWriter: the delimiter cannot be '\"', '\\n' or '\\r' ({})", this->path()));
  }
}

CsvPredictionWriter::~CsvPredictionWriter() {
  if (file_) std::fclose(file_);
}

void CsvPredictionWriter::append_field(std::string_view field, std::string* line) const {
  bool quote = false;
  for (char ch : field) {
    if (ch == delimiter_ || ch == '"' || ch == '\n' || ch == '\r') {
      quote = true;
      break;
    }
  }
  if (!quote) {
    line->append(field.data(), field.size());
    return;
  }
  *line += '"';
  for (char ch : field) {
    if (ch == '"') *line += '"';
    *line += ch;
  }
  *line += '"';
}

void CsvPredictionWriter::write_batch(const PredictionBatch& batch, bool first) {
  std::string text;
  if (first) {
    file_ = std::fopen(path().c_str(), "wb");
    if (!file_) {
      throw IoError(fmt::format("cannot create {}: {}; check the output directory", path(),
                                std::strerror(errno)));
    }
    std::vector<std::string_view> names;
    for (const auto& o : *batch.outputs) names.push_back(o.name);
    for (const StringColumn* c : batch.text) names.push_back(c->name);
    for (const TypedColumn* c : batch.typed) names.push_back(c->name);
    for (const StringColumn* c : batch.appended) names.push_back(c->name);
    num_columns_ = static_cast<int64_t>(names.size());
    for (size_t k = 0; k < names.size(); ++k) {
      if (k > 0) text += delimiter_;
      append_field(names[k], &text);
    }
    text += '\n';
  }
  std::string cell;
  for (int64_t r = 0; r < batch.rows; ++r) {
    const size_t line_start = text.size();
    bool sep = false;
    auto field = [&](std::string_view f) {
      if (sep) text += delimiter_;
      sep = true;
      append_field(f, &text);
    };
    for (const auto& o : *batch.outputs) {
      cell.clear();
      const bool items = !o.row_offsets.empty();
      const int64_t begin = items ? o.row_offsets[static_cast<size_t>(r)] * o.width : r * o.width;
      const int64_t end = items ? o.row_offsets[static_cast<size_t>(r) + 1] * o.width : begin + o.width;
      const float* row = o.int64 ? nullptr : o.values.data() + begin;
      for (int64_t k = 0; k < end - begin; ++k) {
        // Items of several values (list<list<float>>) are separated by ';'.
        if (k > 0) cell += (items && o.width > 1 && k % o.width == 0) ? ';' : ',';
        if (o.int64) {
          cell += std::to_string(o.int64_values[static_cast<size_t>(begin + k)]);
        } else {
          append_number(row[k], &cell);
        }
      }
      field(cell);
    }
    for (const StringColumn* c : batch.text) field(c->cell(r));
    for (const TypedColumn* c : batch.typed) {
      cell.clear();
      append_typed(*c, r, &cell);
      field(cell);
    }
    for (const StringColumn* c : batch.appended) field(c->cell(r));
    // A line holding one empty field would read back as an empty line, which readers skip.
    if (num_columns_ == 1 && text.size() == line_start) text += "\"\"";
    text += '\n';
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    throw IoError(fmt::format("cannot write {}: {}", path(), std::strerror(errno)));
  }
}

void CsvPredictionWriter::finish() {
  if (!file_) return;
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    throw IoError(fmt::format("cannot write {}: {}", path(), std::strerror(errno)));
  }
}

}  // namespace tzrec::data
