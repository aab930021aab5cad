// Reading a Hugging Face tokenizer.json (bpe_tokenizer.h, tokenizer_post_process.h): the tokenizers
// library writes settings that are not set as null, so a member that is null counts as absent.
#pragma once

#include <nlohmann/json.hpp>

namespace tzrec::feature {

// obj[key], or nullptr when it is absent or null.
inline const nlohmann::json* tokenizer_json_member(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace tzrec::feature
