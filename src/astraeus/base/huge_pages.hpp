// Transparent huge pages for the simulator's large per-job arrays. Filling a fresh 20 MB array
// takes one page fault per 4 KiB page (5,000 for the runs of full Philly, each costly on a
// virtual machine); advised, the kernel backs it with 2 MiB pages where it can (one fault each).
#pragma once
#include <cstddef>
#include <vector>

namespace astraeus {

/// Advises the kernel (madvise MADV_HUGEPAGE) to back the whole pages inside [p, p + bytes)
/// with transparent huge pages. Effective where /sys/kernel/mm/transparent_hugepage/enabled is
/// "madvise" or "always"; a no-op below 2 MiB; errors are ignored (it is an advice only).
void advise_huge_pages(const void* p, std::size_t bytes);

/// v.reserve(n), then the new storage advised as above: call before filling v (resize, push_back).
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
    v.reserve(n);
    advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace astraeus
