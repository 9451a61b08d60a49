#include "astraeus/model/workload.hpp"

#include <algorithm>

namespace astraeus {

void sort_by_submit(Workload& w) {
    std::stable_sort(w.jobs.begin(), w.jobs.end(),
                     [](const Job& a, const Job& b) { return a.submit_s < b.submit_s; });
}

}  // namespace astraeus
