// Floats as Python tools print them, for files that TorchEasyRec writes with str() / repr():
//   python_float_repr   Python's repr() of a float (a double): the shortest digits that read
//                       back as the same double, in fixed notation when the decimal point falls
//                       within (-4, 16] of them ("0.0001", "1234567890123456.0", "1.0"), else as
//                       d.ddde±XX ("1e-05", "1e+16") — TorchEasyRec's fg.json, TDM node tables,
//                       feature-selection tables;
//   numpy_float32_str   numpy's str() of a float32 (and `astype(str)` of a float32 array): the
//                       shortest digits that read back as the same float32, in fixed notation
//                       when 1e-4 <= |v| < 1e16 ("0.1", "123456790.0"), else d.ddde±XX
//                       ("1e-04" for float32(0.0001), which is below 1e-4) — TorchEasyRec's
//                       parsed-feature dump of `predict --debug_level`.
// Both write "inf", "-inf", "nan" (numpy also for a negative NaN) and "-0.0" as Python does.
#pragma once

#include <string>

namespace tzrec {

std::string python_float_repr(double v);

std::string numpy_float32_str(float v);

}  // namespace tzrec
