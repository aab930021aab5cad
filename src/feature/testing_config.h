// Test-only helpers for feature/ unit tests: text-format configs and hand-made record batches.
#pragma once

#include <google/protobuf/text_format.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/record_batch.h"
#include "feature/feature_parser.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature::testing {

// Parses a text-format EasyRecConfig like TorchEasyRec does (proto2 `required` not enforced).
inline protos::EasyRecConfig parse_config(const std::string& text) {
  protos::EasyRecConfig config;
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  if (!parser.ParseFromString(text, &config)) {
    throw std::runtime_error("test config does not parse:\n" + text);
  }
  return config;
}

// The feature parser of `features` (feature_configs text) under data_config { `data` }, with
// std::hash string hashing; `read_labels`: the label columns are parsed too.
inline FeatureParser parser(const std::string& features, const std::string& data = "", bool read_labels = false) {
  return FeatureParser(parse_config("data_config { " + data + " } " + features), read_labels, HashKind::kStdHash);
}

// The raw id of a zero-collision hashed feature's value in FG modes (docs/tzrec-compatibility.md
// §5.12): libstdc++'s std::hash of its text (the std::hash feature generation uses, §5.4) mod
// 2^63 - 1, TorchEasyRec's MAX_HASH_BUCKET_SIZE — computed here with the standard library, not
// with hash.h, as feature_parser_test.cc's ZchFeaturesGiveRawIds does.
inline int64_t zch_raw_id(const std::string& text) {
  return static_cast<int64_t>(std::hash<std::string>{}(text) %
                              static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

// A batch read from "t.csv" whose rows start on lines 2, 3, ... (line 1 = header).
inline data::RecordBatch make_batch(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& columns) {
  data::RecordBatch b;
  b.files = {"t.csv"};
  size_t rows = columns.empty() ? 0 : columns[0].second.size();
  for (const auto& [name, cells] : columns) {
    if (cells.size() != rows) throw std::runtime_error("make_batch: ragged columns");
    data::StringColumn c;
    c.name = name;
    for (const auto& cell : cells) c.append(cell);
    b.columns.push_back(std::move(c));
  }
  for (size_t r = 0; r < rows; ++r)
    b.origins.push_back(data::RowOrigin{0, static_cast<int64_t>(r) + 2});
  return b;
}

}  // namespace tzrec::feature::testing
