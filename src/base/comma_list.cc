#include "base/comma_list.h"

namespace tzrec {

std::vector<std::string> split_comma_list(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const size_t first = text.find_first_not_of(" \t", begin);
    if (first != std::string::npos && first < end) {
      const size_t last = text.find_last_not_of(" \t", end - 1);
      out.push_back(text.substr(first, last + 1 - first));
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace tzrec
