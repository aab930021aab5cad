// python_json_dumps (base/python_json.h): the expected text is what CPython 3.11's
// json.dumps(doc, indent=4) returns for the same document (printed with repr() and pasted here).
#include "base/python_json.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec {
namespace python_json_test {

TEST(PythonJsonDumps, AsPythonJsonDumpsIndent4) {
  nlohmann::ordered_json doc;
  doc["a"] = nlohmann::ordered_json::array({1, 2.5, std::nan(""), std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity(), 1e-05, 1e16, nullptr, true});
  doc["b"] = nlohmann::ordered_json::object();
  doc["c"] = nlohmann::ordered_json::array();
  doc["d"] = "tab\there \"q\" \\ \xc3\xa9 \xf0\x9d\x84\x9e \x01";
  doc["e"]["x"] = nlohmann::ordered_json::array({nlohmann::ordered_json::array({1}), nlohmann::ordered_json::array()});
  EXPECT_EQ(python_json_dumps(doc),
            "{\n    \"a\": [\n        1,\n        2.5,\n        NaN,\n        Infinity,\n        -Infinity,\n        "
            "1e-05,\n        1e+16,\n        null,\n        true\n    ],\n    \"b\": {},\n    \"c\": [],\n    \"d\": "
            "\"tab\\there \\\"q\\\" \\\\ \\u00e9 \\ud834\\udd1e \\u0001\",\n    \"e\": {\n        \"x\": [\n            "
            "[\n                1\n            ],\n            []\n        ]\n    }\n}");
}

TEST(PythonJsonDumps, TextThatIsNotUtf8IsAnError) {
  try {
    python_json_dumps(nlohmann::ordered_json("ab\xff"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("is not valid UTF-8 (byte 2)"), std::string::npos) << e.what();
  }
}

}  // namespace python_json_test
}  // namespace tzrec
