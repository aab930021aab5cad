// Semantic-ID columns read as rows of per-layer integer codes (TorchEasyRec's
// tzrec/tools/sid/evaluate_sid_quality.py, decode_codes; docs/tzrec-compatibility.md §3.5), no
// torch. A row is well formed when it holds exactly `num_layers` integer codes that fit int64:
//   list<int32 | int64> (what `tzrec predict` of a SID model writes): the list's elements; a null
//     list or a null element makes the row malformed;
//   a text cell (CSV, or a Parquet string column): the codes joined by ',', each token read as
//     Python's int() reads text (surrounding whitespace, a sign, '_' between digits);
//   an integer scalar: one code; a float / double scalar: one code when it is a whole number
//     (the text Arrow casts it to is an integer literal then), else malformed.
// Malformed rows are marked, not errors: the caller drops them or fails (--invalid_row_policy).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/record_batch.h"

namespace tzrec::retrieval {

struct SidCodeRows {
  int64_t num_layers = 0;
  std::vector<int64_t> values;  // [rows * num_layers], row-major; zeros in malformed rows
  std::vector<uint8_t> valid;   // [rows]: 1 when the row is well formed

  int64_t rows() const { return static_cast<int64_t>(valid.size()); }
  const int64_t* row(int64_t r) const { return values.data() + r * num_layers; }
};

// The rows of column `field` of `batch`. Throws DataError when the batch has no such column, and
// when the column is a list whose elements are not integers, a list of lists or a map (a schema
// error, as in TorchEasyRec), naming the field and the file.
SidCodeRows decode_sid_codes(const data::RecordBatch& batch, const std::string& field, int64_t num_layers);

// The same rows with any number of codes each (candidate lists): row r holds
// values[offsets[r], offsets[r + 1]) when valid[r]; an invalid row holds none.
struct SidCodeLists {
  std::vector<int64_t> offsets{0};
  std::vector<int64_t> values;
  std::vector<uint8_t> valid;
};
SidCodeLists decode_sid_code_lists(const data::RecordBatch& batch, const std::string& field);

// -1 when every code of `codes` (codebook.size() of them) is inside its layer's codebook, else
// the first layer whose code is not.
int64_t first_code_out_of_range(const int64_t* codes, const std::vector<int64_t>& codebook);

// Why row r of `rows` (decoded with num_layers = codebook.size()) is not a SID of `codebook`, for
// messages that name the row and field before it, or "" when it is one:
//   "does not hold 3 integer codes (null, a null code, another count or a non-integer)"
//   "code 300 of layer 1 is outside its codebook [0, 256)"
std::string sid_row_problem(const SidCodeRows& rows, int64_t r, const std::vector<int64_t>& codebook);

// Python's int() of `text` as an int64: false when it is not an integer literal or does not fit.
bool parse_python_int(std::string_view text, int64_t* out);

}  // namespace tzrec::retrieval
