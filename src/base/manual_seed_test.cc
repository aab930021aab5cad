// TORCH_MANUAL_SEED parsing (base/manual_seed.h); expected values are the variable's text.
#include "base/manual_seed.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec {
namespace manual_seed_test {

struct SeedEnv {
  explicit SeedEnv(const char* v) {
    if (v == nullptr) {
      unsetenv("TORCH_MANUAL_SEED");
    } else {
      setenv("TORCH_MANUAL_SEED", v, 1);
    }
  }
  ~SeedEnv() { unsetenv("TORCH_MANUAL_SEED"); }
};

TEST(ManualSeed, UnsetOrEmptyIsNone) {
  {
    SeedEnv e(nullptr);
    EXPECT_FALSE(manual_seed().has_value());
  }
  SeedEnv e("");
  EXPECT_FALSE(manual_seed().has_value());
}

TEST(ManualSeed, ParsesDecimal) {
  {
    SeedEnv e("0");
    EXPECT_EQ(manual_seed(), 0u);
  }
  SeedEnv e("18446744073709551615");
  EXPECT_EQ(manual_seed(), 18446744073709551615ull);
}

TEST(ManualSeed, RejectsWhatIsNotASeed) {
  for (const char* bad : {"x", "1.5", "-1", "12 ", "18446744073709551616"}) {
    SeedEnv e(bad);
    try {
      manual_seed();
      FAIL() << bad << " accepted";
    } catch (const UsageError& err) {
      EXPECT_NE(std::string(err.what()).find("TORCH_MANUAL_SEED=" + std::string(bad)), std::string::npos) << err.what();
    }
  }
}

}  // namespace manual_seed_test
}  // namespace tzrec
