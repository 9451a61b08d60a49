// Slurm hostlist expressions ("gpu[1-3,7]", "a[01-02]b,c5", "None assigned"), as sacct, squeue and
// libslurm print them, expanded into node names in the order written.
// Thread safety: a pure function.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "astraeus/base/error.hpp"

namespace astraeus::slurm {

/// Expands `text` into node names. Ranges keep their zero padding ("n[08-10]" -> n08 n09 n10);
/// several bracket groups multiply ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2). "", "None assigned"
/// and "(null)" give no names. Errors name the expression and what was expected (unbalanced
/// brackets, a range whose end is below its start, more than kMaxHostlistNames names: refused
/// before they are built, in time linear in the text and the bound).
Result<std::vector<std::string>> expand_hostlist(std::string_view text);

/// The most node names one hostlist may stand for (one job's nodes).
inline constexpr std::size_t kMaxHostlistNames = 65'536;

}  // namespace astraeus::slurm
