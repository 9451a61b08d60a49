#include "astraeus/accounting/job_fairness.hpp"

#include <algorithm>
#include <cmath>

#include "astraeus/base/pyfloat.hpp"

namespace astraeus {

int fairness_class(double x, int k) {
    if (x == 0) return 0;
    const double l = std::log(x);
    const double phi = -1.0 * l / std::sqrt(1 + l * l);
    const double kk = static_cast<double>(k);
    return static_cast<int>(kk - py_floordiv((phi + 1) / 2, 1.0 / kk));
}

double finish_time_fairness(const RunState& run, Seconds duration_s) {
    if (run.deserved_gpu_s == 0) return 1.0;
    const double e = static_cast<double>(run.executed_s);
    const double life = static_cast<double>(run.life_s);
    const double remaining = static_cast<double>(duration_s) - e;
    const double isolated = e * (run.utilized_gpu_s / run.deserved_gpu_s) + (life - e);
    return life / (isolated + remaining);
}

}  // namespace astraeus
