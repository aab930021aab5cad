#include <gtest/gtest.h>

#include "base/error.h"
#include "config/activation.h"

namespace tzrec::config {
namespace activation_test {

TEST(Activation, ParsesTorchPaths) {
  EXPECT_EQ(parse_activation("nn.ReLU").name, "ReLU");
  EXPECT_EQ(parse_activation("torch.nn.Sigmoid").name, "Sigmoid");
  EXPECT_EQ(parse_activation(" nn.Tanh() ").name, "Tanh");
  auto leaky = parse_activation("nn.LeakyReLU(negative_slope=0.1)");
  EXPECT_EQ(leaky.name, "LeakyReLU");
  EXPECT_EQ(leaky.kwargs.at("negative_slope"), "0.1");
  auto gelu = parse_activation("nn.GELU(approximate='tanh')");
  EXPECT_EQ(gelu.kwargs.at("approximate"), "tanh");
  EXPECT_EQ(parse_activation("nn.PReLU").name, "PReLU");
  EXPECT_EQ(parse_activation("nn.ELU(alpha=0.5, inplace=True)").kwargs.size(), 2u);
  EXPECT_EQ(parse_activation("nn.SiLU").name, "SiLU");
  EXPECT_EQ(parse_activation("").name, "");
}

TEST(Activation, RejectsBadText) {
  EXPECT_THROW(parse_activation("relu"), ConfigError);
  EXPECT_THROW(parse_activation("nn.ReLU("), ConfigError);
  EXPECT_THROW(parse_activation("nn.LeakyReLU(0.1)"), ConfigError);
  EXPECT_THROW(parse_activation("nn.LeakyReLU(slope=0.1)"), ConfigError);
  EXPECT_THROW(parse_activation("nn.NoSuchThing"), ConfigError);
}

TEST(Activation, UnimplementedAreNotSupported) {
  EXPECT_THROW(parse_activation("Dice"), NotSupportedError);
  EXPECT_THROW(parse_activation("nn.Hardswish"), NotSupportedError);
  EXPECT_NO_THROW(parse_activation("nn.Mish"));
}

}  // namespace activation_test
}  // namespace tzrec::config
