// Python's repr() of a float, for files that Python tools write with str() / repr() of floats
// (TorchEasyRec's fg.json, TDM node tables, feature-selection tables): the shortest digits that
// read back as the same double, in fixed notation when the decimal point falls within (-4, 16] of
// them ("0.0001", "1234567890123456.0", "1.0"), else as d.ddde±XX ("1e-05", "1e+16"); "inf",
// "-inf", "nan", "-0.0" as Python writes them.
#pragma once

#include <string>

namespace tzrec {

std::string python_float_repr(double v);

}  // namespace tzrec
