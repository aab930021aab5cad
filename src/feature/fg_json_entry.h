// What the feature types' fg.json entries share (docs/tzrec-compatibility.md §5.3): TorchEasyRec's
// effective vocabularies and bucketizer defaults (BaseFeature.vocab_list / vocab_dict /
// default_bucketize_value), number lists as its json.dump writes them, and the rules every entry
// follows (separator only when not "\x1d", sequence_fields only in grouped sequences). Each type's
// fg_json_entries() (id_feature.cc, raw_feature.cc, ...) builds its entries from these; the
// document is assembled by feature/fg_json.h.
#pragma once

#include <cstdint>
#include <string>

#include <google/protobuf/map.h>
#include <google/protobuf/repeated_field.h>
#include <nlohmann/json.hpp>

#include "config/vocab_file.h"
#include "feature/feature_info.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {

// The default multi-value separator of FG inputs; entries name `separator` only when it differs.
inline constexpr const char* kFgDefaultSeparator = "\x1d";

// TorchEasyRec's effective default value: an empty default_value is "0" in sequences.
std::string fg_default_value(const std::string& configured, bool sequence);

// BaseFeature.vocab_list: without default_bucketize_value, [default_value, "<OOV>"] + vocab_list;
// with it, vocab_list as is. A JSON array of strings.
nlohmann::ordered_json fg_vocab_list(const google::protobuf::RepeatedPtrField<std::string>& vocab_list,
                                     bool has_default_bucketize_value, const std::string& default_value);

// BaseFeature.vocab_dict: the configured entries, then (without default_bucketize_value and with a
// non-empty default value) default_value -> 0, which replaces the value of a listed default in
// place. The configured entries come sorted by key: TorchEasyRec iterates the protobuf map, whose
// order is not defined.
nlohmann::ordered_json fg_vocab_dict(const google::protobuf::Map<std::string, uint64_t>& vocab_dict,
                                     bool has_default_bucketize_value, const std::string& default_value);

// BaseFeature.default_bucketize_value: the configured value, else 1 (<OOV>).
uint64_t fg_default_bucketize_value(bool has, uint64_t value);

// A float field as TorchEasyRec writes it: the float32 widened to double (Python's protobuf reads
// float fields so), e.g. 0.1f -> 0.10000000149011612. ConfigError at `field_path` for a value that
// is not finite (Python would write Infinity / NaN, which is not JSON).
double fg_float(float value, const std::string& field_path);
// A float list (boundaries): fg_float of each value, at "<field_path>[i]".
nlohmann::ordered_json fg_float_list(const google::protobuf::RepeatedField<float>& values,
                                     const std::string& field_path);

// Adds "sequence_fields" to `entry` for a sub-feature of a grouped sequence that lists them (as
// TorchEasyRec; stand-alone sequence_* features do not write them).
void add_fg_sequence_fields(const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                            const FeatureInfo& info, nlohmann::ordered_json* entry);

// A vocabulary bucketizer's keys: vocab_list, else vocab_dict, else vocab_file (the path read,
// vocab_file.h; fg_json.h may replace it by the name of the copied asset), each with
// default_bucketize_value; false (nothing written) when none is set.
template <typename Msg>
bool add_fg_vocab(const Msg& c, const std::string& default_value, nlohmann::ordered_json* entry) {
  nlohmann::ordered_json& e = *entry;
  if (c.vocab_list_size() > 0) {
    e["vocab_list"] = fg_vocab_list(c.vocab_list(), c.has_default_bucketize_value(), default_value);
  } else if (!c.vocab_dict().empty()) {
    e["vocab_dict"] = fg_vocab_dict(c.vocab_dict(), c.has_default_bucketize_value(), default_value);
  } else if (c.has_vocab_file()) {
    e["vocab_file"] = config::vocab_file_path(c.vocab_file(), c.has_asset_dir(), c.asset_dir());
  } else {
    return false;
  }
  e["default_bucketize_value"] =
      fg_default_bucketize_value(c.has_default_bucketize_value(), c.default_bucketize_value());
  return true;
}

// The bucketizer of a lookup_feature / match_feature entry (Msg: LookupFeature or MatchFeature),
// the first set in TorchEasyRec's order: zch or dynamicemb (hash_bucket_size 2^63 - 1,
// zch_settings.h) > hash_bucket_size > num_buckets > vocab_list (+ default_bucketize_value) >
// vocab_dict > vocab_file (each + default_bucketize_value) > boundaries.
// Returns true for a text bucketizer (all but boundaries), whose values TorchEasyRec's entry then
// types "string".
template <typename Msg>
bool add_fg_map_bucketizer(const Msg& c, const std::string& default_value, const std::string& field_path,
                           nlohmann::ordered_json* entry) {
  nlohmann::ordered_json& e = *entry;
  if (c.has_zch() || c.has_dynamicemb()) {
    e["hash_bucket_size"] = kZchHashBucketSize;
  } else if (c.has_hash_bucket_size()) {
    e["hash_bucket_size"] = c.hash_bucket_size();
  } else if (c.has_num_buckets()) {
    e["num_buckets"] = c.num_buckets();
  } else if (!add_fg_vocab(c, default_value, &e)) {
    if (c.boundaries_size() > 0) e["boundaries"] = fg_float_list(c.boundaries(), field_path + ".boundaries");
    return false;
  }
  return true;
}

}  // namespace tzrec::feature
