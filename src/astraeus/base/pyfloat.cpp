#include "astraeus/base/pyfloat.hpp"

#include <cmath>

namespace astraeus {

double py_floordiv(double a, double b) {
    double mod = std::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0) {
        if ((b < 0) != (mod < 0)) div -= 1.0;
    }
    if (div != 0.0) {
        double floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
        return floordiv;
    }
    return std::copysign(0.0, a / b);
}

}  // namespace astraeus
