#include "parquet/describe.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tzrec::parquet {

std::string describe_file(const FileReader& reader) {
  const FileMetaData& md = reader.metadata();
  std::string out;
  out += fmt::format("file: {}\n", reader.path());
  out += fmt::format("created_by: {}\n", md.created_by.value_or("(unknown)"));
  out += fmt::format("version: {}\n", md.version);
  out += fmt::format("rows: {}\n", reader.num_rows());
  out += fmt::format("row groups: {}\n", reader.num_row_groups());
  if (!md.key_value_metadata.empty()) {
    out += "key/value metadata:\n";
    for (const auto& kv : md.key_value_metadata) {
      std::string value = kv.value.value_or("(null)");
      if (value.size() > 200) value = value.substr(0, 200) + fmt::format("... ({} bytes)", kv.value->size());
      out += fmt::format("  {} = {}\n", kv.key, value);
    }
  }
  out += "schema:\n";
  std::string schema = reader.schema().to_string();
  size_t pos = 0;
  while (pos < schema.size()) {
    size_t end = schema.find('\n', pos);
    out += "  " + schema.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  out += "columns:\n";
  for (const auto& c : reader.schema().columns()) {
    out += fmt::format("  {}: {}{} max_def={} max_rep={}\n", c.path_string, to_string(c.type),
                       c.type == PhysicalType::kFixedLenByteArray ? fmt::format("({})", c.type_length) : "", c.max_def,
                       c.max_rep);
  }
  for (size_t g = 0; g < md.row_groups.size(); ++g) {
    const RowGroup& rg = md.row_groups[g];
    out += fmt::format("row group {}: rows={} first_row={} total_byte_size={}", g, rg.num_rows,
                       reader.row_group_starts()[g], rg.total_byte_size);
    if (rg.total_compressed_size) out += fmt::format(" compressed={}", *rg.total_compressed_size);
    out += "\n";
    for (size_t c = 0; c < rg.columns.size(); ++c) {
      const ColumnChunk& cc = rg.columns[c];
      const ColumnMetaData& m = cc.meta_data;
      std::vector<std::string> encs;
      for (Encoding e : m.encodings) encs.push_back(to_string(e));
      out += fmt::format("  {}: {} codec={} encodings=[{}] values={} compressed={} uncompressed={} data_page_offset={}",
                         fmt::join(m.path_in_schema, "."), to_string(m.type), to_string(m.codec), fmt::join(encs, ","),
                         m.num_values, m.total_compressed_size, m.total_uncompressed_size, m.data_page_offset);
      if (m.dictionary_page_offset) out += fmt::format(" dictionary_page_offset={}", *m.dictionary_page_offset);
      if (m.statistics && m.statistics->null_count) out += fmt::format(" nulls={}", *m.statistics->null_count);
      if (cc.offset_index_offset) out += " offset_index";
      out += "\n";
    }
  }
  return out;
}

}  // namespace tzrec::parquet
