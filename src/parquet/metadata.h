// Parquet file metadata (the footer's FileMetaData), page headers and page indexes, as plain
// structs, with their thrift compact decoding and encoding. Field names follow parquet.thrift.
// Only what a reader/writer needs is kept; unknown and unused fields are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "parquet/types.h"

namespace tzrec::parquet {

namespace thrift {
class CompactReader;
class CompactWriter;
}  // namespace thrift

struct KeyValue {
  std::string key;
  std::optional<std::string> value;
};

struct SchemaElement {
  std::optional<PhysicalType> type;  // set for leaves only
  int32_t type_length = 0;
  std::optional<Repetition> repetition;  // absent on the root
  std::string name;
  int32_t num_children = 0;
  ConvertedType converted_type = ConvertedType::kNone;
  int32_t scale = 0;
  int32_t precision = 0;
  std::optional<int32_t> field_id;
  LogicalType logical_type;
};

struct Statistics {
  std::optional<int64_t> null_count;
  std::optional<int64_t> distinct_count;
  std::optional<std::string> min_value;  // PLAIN-encoded (min_value, or the legacy min)
  std::optional<std::string> max_value;
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kInt32;
  std::vector<Encoding> encodings;
  std::vector<std::string> path_in_schema;
  Compression codec = Compression::kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  std::vector<KeyValue> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
};

struct ColumnChunk {
  std::optional<std::string> file_path;  // external column data: not supported when set
  int64_t file_offset = 0;
  ColumnMetaData meta_data;
  bool has_meta_data = false;
  std::optional<int64_t> offset_index_offset;
  std::optional<int32_t> offset_index_length;
  std::optional<int64_t> column_index_offset;
  std::optional<int32_t> column_index_length;
  bool encrypted = false;  // crypto_metadata or encrypted_column_metadata present
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;
};

struct FileMetaData {
  int32_t version = 1;
  std::vector<SchemaElement> schema;  // depth-first, root first
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::optional<std::string> created_by;
  bool encrypted = false;  // encryption_algorithm present
};

struct DataPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  std::optional<Statistics> statistics;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  bool is_sorted = false;
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  Encoding encoding = Encoding::kPlain;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
  std::optional<Statistics> statistics;
};

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<uint32_t> crc;
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;
};

struct PageLocation {
  int64_t offset = 0;
  int32_t compressed_page_size = 0;  // including the page header
  int64_t first_row_index = 0;
};

struct OffsetIndex {
  std::vector<PageLocation> page_locations;
};

// Decoding. Throw DecodeError on malformed or incomplete input (required fields missing, enum
// values out of range, lengths beyond the data).
FileMetaData decode_file_metadata(const uint8_t* data, size_t size);
// Decodes a page header at the reader's position; *header_size gets its encoded length.
PageHeader decode_page_header(const uint8_t* data, size_t size, size_t* header_size);
OffsetIndex decode_offset_index(const uint8_t* data, size_t size);

// Encoding (appends to *out).
void encode_file_metadata(const FileMetaData& md, std::string* out);
void encode_page_header(const PageHeader& h, std::string* out);
void encode_offset_index(const OffsetIndex& index, std::string* out);

}  // namespace tzrec::parquet
