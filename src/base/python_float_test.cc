// python_float_repr (base/python_float.h): the expected strings are what CPython's repr() prints
// for the same doubles.
#include "base/python_float.h"

#include <cmath>

#include <gtest/gtest.h>

namespace tzrec {
namespace python_float_test {

TEST(PythonFloatRepr, AsPython) {
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(0.5), "0.5");
  EXPECT_EQ(python_float_repr(0.1 * 3), "0.30000000000000004");
  EXPECT_EQ(python_float_repr(1e-05), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(python_float_repr(-2.5), "-2.5");
  EXPECT_EQ(python_float_repr(static_cast<float>(0.1)), "0.10000000149011612");
  EXPECT_EQ(python_float_repr(0.0), "0.0");
}

TEST(PythonFloatRepr, NonFiniteAndNegativeZero) {
  EXPECT_EQ(python_float_repr(INFINITY), "inf");
  EXPECT_EQ(python_float_repr(-INFINITY), "-inf");
  EXPECT_EQ(python_float_repr(NAN), "nan");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(3.059022e-07), "3.059022e-07");
}

}  // namespace python_float_test
}  // namespace tzrec
