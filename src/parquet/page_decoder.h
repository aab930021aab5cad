// Decoding of one page's bytes (already decompressed) into levels and compact values.
// Internal to the reader: column_reader.cc drives it page by page.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parquet/column_data.h"
#include "parquet/metadata.h"
#include "parquet/schema.h"

namespace tzrec::parquet {

// The values of a column chunk's dictionary page.
struct Dictionary {
  bool present = false;
  int64_t size = 0;
  Buffer fixed;                            // fixed-width types: size * width bytes
  std::vector<std::string_view> strings;   // BYTE_ARRAY / FLBA: views into `storage`
  Buffer storage;                          // the decompressed dictionary page
};

// One data page, decoded. Reused from page to page so that its buffers keep their capacity.
struct PageData {
  int64_t num_entries = 0;          // level entries (num_values of the page header)
  std::vector<int16_t> rep;         // [num_entries] when max_rep > 0
  std::vector<int16_t> def;         // [num_entries] when max_def > 0
  int64_t num_values = 0;           // non-null values decoded
  Buffer fixed;                     // fixed-width values: [num_values * width]
  std::vector<std::string_view> strings;  // BYTE_ARRAY values: views into `page`, the dictionary or `arena`
  Buffer page;                      // decompressed page bytes
  std::string arena;                // DELTA_BYTE_ARRAY values
  std::vector<uint32_t> indices;    // dictionary indices (scratch)
};

// Decodes a dictionary page body (decompressed into dict->storage by the caller).
void decode_dictionary(const ColumnDescriptor& column, const DictionaryPageHeader& header, Dictionary* dict);

// Counts non-null entries (def == max_def) of the page; the number of encoded values.
int64_t count_values(const ColumnDescriptor& column, const PageData& page);

// Decodes `page->num_values` values encoded with `encoding` from data[0, size) into
// page->fixed (fixed width) or page->strings (BYTE_ARRAY), or, when `direct_out` is non-null and
// the type is fixed-width, straight into direct_out. max_bytes caps DELTA_BYTE_ARRAY output.
void decode_values(const ColumnDescriptor& column, Encoding encoding, const uint8_t* data, size_t size,
                   const Dictionary& dict, size_t max_bytes, PageData* page, uint8_t* direct_out);

// Decodes the levels of a DATA_PAGE (v1): returns the bytes consumed from data.
size_t decode_levels_v1(Encoding encoding, int16_t max_level, const uint8_t* data, size_t size, int64_t n,
                        std::vector<int16_t>* out);
// Decodes RLE levels of a DATA_PAGE_V2 (section of exactly `size` bytes).
void decode_levels_v2(int16_t max_level, const uint8_t* data, size_t size, int64_t n, std::vector<int16_t>* out);

}  // namespace tzrec::parquet
