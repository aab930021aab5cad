// JSON text as Python's json.dump(doc, f, indent=4) writes it (ensure_ascii, allow_nan): for files
// TorchEasyRec's tools write with json (fg.json, create_online_infer_data's data.json,
// fgout.json and result.json). Objects keep their key order; an empty object / array is "{}" /
// "[]"; floats as Python's repr (base/python_float.h), NaN and infinities as NaN, Infinity and
// -Infinity; strings with \" \\ \b \f \n \r \t escaped and every other character outside ' '..'~'
// as \uXXXX (UTF-16 surrogate pairs above U+FFFF).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tzrec {

// Throws DataError naming the string and the byte for text that is not UTF-8.
std::string python_json_dumps(const nlohmann::ordered_json& doc, int indent = 4);

}  // namespace tzrec
