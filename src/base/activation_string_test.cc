#include "base/activation_string.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec {
namespace activation_string_test {

TEST(ActivationString, ClassPathsAndKeywordArguments) {
  EXPECT_EQ(parse_activation_string("nn.ReLU").name, "ReLU");
  EXPECT_EQ(parse_activation_string("  torch.nn.Sigmoid  ").name, "Sigmoid");
  EXPECT_EQ(parse_activation_string("nn.ReLU()").kwargs.size(), 0u);
  auto a = parse_activation_string("nn.GELU(approximate='tanh', x = 1)");
  EXPECT_EQ(a.name, "GELU");
  EXPECT_EQ(a.kwargs.at("approximate"), "'tanh'");
  EXPECT_EQ(a.kwargs.at("x"), "1");
  EXPECT_EQ(unquote(a.kwargs.at("approximate")), "tanh");
  EXPECT_EQ(parse_activation_string("Dice").name, "Dice");
  EXPECT_TRUE(parse_activation_string("").name.empty());
}

TEST(ActivationString, RejectsMalformedText) {
  for (const char* bad : {"ReLU", "relu", "nn.ReLU(", "nn.ReLU)", "nn.LeakyReLU(0.1)",
                          "nn.LeakyReLU(a=1, a=2)", "nn.Le aky", "nn.X(=1)"}) {
    EXPECT_THROW(parse_activation_string(bad), ConfigError) << bad;
  }
}

}  // namespace activation_string_test
}  // namespace tzrec
