// Floating-point operations with Python's exact semantics, so that `--mode compat` reproduces the
// reference simulator (CPython) bit for bit where it matters (fairness classes).
#pragma once

namespace astraeus {

/// Python's float floor division `a // b` (CPython float_floor_div via fmod); b != 0.
double py_floordiv(double a, double b);

}  // namespace astraeus
