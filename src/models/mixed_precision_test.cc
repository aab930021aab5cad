#include "models/mixed_precision.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::models {
namespace mixed_precision_test {

protos::EasyRecConfig with_precision(const std::string& value) {
  protos::EasyRecConfig c;
  c.mutable_train_config()->set_mixed_precision(value);
  return c;
}

TEST(MixedPrecision, Values) {
  EXPECT_FALSE(mixed_precision_dtype(with_precision("")).has_value());
  EXPECT_EQ(mixed_precision_dtype(with_precision("BF16")), c10::ScalarType::BFloat16);
  EXPECT_EQ(mixed_precision_dtype(with_precision("FP16")), c10::ScalarType::Half);
  try {
    mixed_precision_dtype(with_precision("fp32"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train_config.mixed_precision: 'fp32'"), std::string::npos);
  }
}

}  // namespace mixed_precision_test
}  // namespace tzrec::models
