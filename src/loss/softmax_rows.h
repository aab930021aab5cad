// Row softmax kernel of softmax cross entropy: for each row of a [rows, n] float matrix, its
// softmax and its log-sum-exp, in one sweep per row (a row of a few thousand floats stays in the
// L1 cache between the max, exp-and-sum and scale passes, where separate tensor ops read the whole
// matrix once per op). Plain C++, no torch; the loops compile for AVX-512 / AVX2 / baseline.
//
// exp is computed by range reduction to 2^k · e^r, |r| <= ln2 / 2, and a degree-6 polynomial
// (Cody–Waite split of ln 2): relative error below 2^-22 against the exact value (tested), so the
// softmax and log-sum-exp agree with torch's log_softmax to float rounding. Arguments below -87
// (after subtracting the row maximum) give 0, the float underflow (torch's exp gives a
// denormal there, below 1.2e-38 relative to the row's largest term). NaN in a row makes its
// results NaN, as torch's; a row of only -inf gives NaN (torch: NaN too).
#pragma once

#include <cstdint>

namespace tzrec::loss {

// e^x for x <= 0, the kernel's exp (exposed for its test). x < -87 gives 0; NaN gives NaN.
float exp_nonpositive(float x);

// Writes scale · softmax(x[0, n)) to out[0, n) (out may equal x) and returns log Σ_j e^{x_j}.
// n >= 1.
float softmax_row(const float* x, int64_t n, float* out, float scale = 1.0f);

}  // namespace tzrec::loss
