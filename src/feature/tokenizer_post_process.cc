#include "feature/tokenizer_post_process.h"

#include <fmt/format.h>

#include "base/error.h"
#include "feature/tokenizer_json.h"

namespace tzrec::feature {
namespace tokenizer_post_process_detail {

using Json = nlohmann::json;

size_t count_of(const Json& v, const std::string& where, const std::string& at) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    throw ConfigError(fmt::format("{}: {} must be a non-negative integer, got {}", where, at, v.dump()));
  }
  return v.get<size_t>();
}

// "Left" → true, "Right" (or absent) → false.
bool left_of(const Json& obj, const std::string& where, const std::string& at) {
  const Json* d = tokenizer_json_member(obj, "direction");
  if (d == nullptr) return false;
  if (d->is_string() && d->get<std::string>() == "Left") return true;
  if (d->is_string() && d->get<std::string>() == "Right") return false;
  throw ConfigError(fmt::format("{}: {}.direction must be \"Left\" or \"Right\", got {}", where, at, d->dump()));
}

}  // namespace tokenizer_post_process_detail

TokenizerPostProcess TokenizerPostProcess::from_json(const nlohmann::json& doc, const std::string& where) {
  using namespace tokenizer_post_process_detail;
  TokenizerPostProcess p;
  if (const Json* t = tokenizer_json_member(doc, "truncation")) {
    if (!t->is_object()) throw ConfigError(fmt::format("{}: truncation must be an object or null", where));
    const Json* max_length = tokenizer_json_member(*t, "max_length");
    if (max_length == nullptr) throw ConfigError(fmt::format("{}: truncation has no max_length", where));
    p.truncate = true;
    p.max_length = count_of(*max_length, where, "truncation.max_length");
    p.truncate_left = left_of(*t, where, "truncation");
    if (const Json* stride = tokenizer_json_member(*t, "stride")) count_of(*stride, where, "truncation.stride");
    if (const Json* s = tokenizer_json_member(*t, "strategy")) {
      const std::string strategy = s->is_string() ? s->get<std::string>() : s->dump();
      if (strategy == "OnlySecond") {
        throw ConfigError(fmt::format("{}: truncation.strategy OnlySecond truncates the second text of a pair; a "
                                      "tokenize feature encodes one text, which the tokenizers library then fails to "
                                      "encode whenever it is longer than max_length; use LongestFirst or OnlyFirst",
                                      where));
      }
      if (strategy != "LongestFirst" && strategy != "OnlyFirst") {
        throw ConfigError(fmt::format("{}: truncation.strategy must be LongestFirst, OnlyFirst or OnlySecond, got {}",
                                      where, strategy));
      }
    }
  }
  if (const Json* pad = tokenizer_json_member(doc, "padding")) {
    if (!pad->is_object()) throw ConfigError(fmt::format("{}: padding must be an object or null", where));
    p.pad = true;
    if (const Json* s = tokenizer_json_member(*pad, "strategy")) {
      if (s->is_object() && s->size() == 1 && s->contains("Fixed")) {
        p.pad_fixed = true;
        p.pad_length = count_of(s->at("Fixed"), where, "padding.strategy.Fixed");
      } else if (!(s->is_string() && s->get<std::string>() == "BatchLongest")) {
        throw ConfigError(fmt::format("{}: padding.strategy must be \"BatchLongest\" or {{\"Fixed\": n}}, got {}",
                                      where, s->dump()));
      }
    }
    if (const Json* m = tokenizer_json_member(*pad, "pad_to_multiple_of")) {
      p.pad_to_multiple_of = count_of(*m, where, "padding.pad_to_multiple_of");
    }
    if (const Json* id = tokenizer_json_member(*pad, "pad_id")) {
      p.pad_id = static_cast<int64_t>(count_of(*id, where, "padding.pad_id"));
    }
    p.pad_left = left_of(*pad, where, "padding");
  }
  return p;
}

void TokenizerPostProcess::apply(std::vector<int64_t>* ids, size_t start) const {
  if (truncate && ids->size() - start > max_length) {
    const size_t n = ids->size() - start;
    if (truncate_left) {
      ids->erase(ids->begin() + static_cast<std::ptrdiff_t>(start),
                 ids->begin() + static_cast<std::ptrdiff_t>(start + n - max_length));
    } else {
      ids->resize(start + max_length);
    }
  }
  if (!pad) return;
  const size_t n = ids->size() - start;
  size_t target = pad_fixed ? pad_length : n;
  if (pad_to_multiple_of > 0 && target % pad_to_multiple_of != 0) {
    target += pad_to_multiple_of - target % pad_to_multiple_of;
  }
  if (n >= target) return;
  if (pad_left) {
    ids->insert(ids->begin() + static_cast<std::ptrdiff_t>(start), target - n, pad_id);
  } else {
    ids->insert(ids->end(), target - n, pad_id);
  }
}

}  // namespace tzrec::feature
