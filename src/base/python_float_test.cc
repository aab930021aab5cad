// python_float_repr and numpy_float32_str (base/python_float.h): the expected strings are what
// CPython's repr() prints for the same doubles, and what numpy 1.24's `astype(str)` prints for the
// same float32 values (np.array([...], dtype=np.float32).astype(str)).
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

TEST(NumpyFloat32Str, AsNumpyAstypeStr) {
  EXPECT_EQ(numpy_float32_str(0.1f), "0.1");
  EXPECT_EQ(numpy_float32_str(1.0f), "1.0");
  EXPECT_EQ(numpy_float32_str(-0.3f), "-0.3");
  EXPECT_EQ(numpy_float32_str(1.0f / 3.0f), "0.33333334");
  EXPECT_EQ(numpy_float32_str(0.1f + 0.2f), "0.3");
  EXPECT_EQ(numpy_float32_str(-12345.678f), "-12345.678");
  EXPECT_EQ(numpy_float32_str(123456789.0f), "123456790.0");
  EXPECT_EQ(numpy_float32_str(16777217.0f), "16777216.0");
  EXPECT_EQ(numpy_float32_str(65504.0f), "65504.0");
  EXPECT_EQ(numpy_float32_str(9.99e15f), "9990000000000000.0");
  EXPECT_EQ(numpy_float32_str(1e15f), "1000000000000000.0");
  // Scientific below 1e-4 and from 1e16 on, by the float32's value: float32(0.0001) is
  // 9.99999974738e-05, float32(1e16) is 1.00000002726e16.
  EXPECT_EQ(numpy_float32_str(0.0001f), "1e-04");
  EXPECT_EQ(numpy_float32_str(0.00010001f), "0.00010001");
  EXPECT_EQ(numpy_float32_str(1e16f), "1e+16");
  EXPECT_EQ(numpy_float32_str(1e-5f), "1e-05");
  EXPECT_EQ(numpy_float32_str(-1.5e-7f), "-1.5e-07");
  EXPECT_EQ(numpy_float32_str(3.4028235e38f), "3.4028235e+38");
  EXPECT_EQ(numpy_float32_str(1.17549435e-38f), "1.1754944e-38");
  EXPECT_EQ(numpy_float32_str(1e-45f), "1e-45");
}

TEST(NumpyFloat32Str, NonFiniteAndZeros) {
  EXPECT_EQ(numpy_float32_str(0.0f), "0.0");
  EXPECT_EQ(numpy_float32_str(-0.0f), "-0.0");
  EXPECT_EQ(numpy_float32_str(INFINITY), "inf");
  EXPECT_EQ(numpy_float32_str(-INFINITY), "-inf");
  EXPECT_EQ(numpy_float32_str(NAN), "nan");
  EXPECT_EQ(numpy_float32_str(-NAN), "nan");
}

}  // namespace python_float_test
}  // namespace tzrec
