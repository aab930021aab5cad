#include "base/text.h"

#include <gtest/gtest.h>

namespace tzrec {
namespace text_test {

TEST(SplitCommaList, TrimsAndDropsEmptyItems) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_comma_list(""), V{});
  EXPECT_EQ(split_comma_list(" , ,"), V{});
  EXPECT_EQ(split_comma_list("a"), V{"a"});
  EXPECT_EQ(split_comma_list("a, b,,\tc "), (V{"a", "b", "c"}));
  EXPECT_EQ(split_comma_list("x y,z"), (V{"x y", "z"}));
  EXPECT_EQ(split_comma_list(",a,"), V{"a"});
}

}  // namespace text_test
}  // namespace tzrec
