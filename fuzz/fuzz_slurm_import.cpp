// Fuzz target of the Slurm accounting import (slurm_import/): the input is `sacct` output, read
// as --parsable2 and as --json (parse_sacct), and its first line as a hostlist
// (expand_hostlist). Properties: every expansion stays within its bounds (65,536 names per
// hostlist; an import within its segment budget), whatever the input; libFuzzer's -timeout and
// -rss_limit_mb catch an expansion that runs away (issue 18: one 200-byte NodeList ran 60 s).
#include <cstdint>
#include <string_view>

#include "astraeus/slurm_import/hostlist.hpp"
#include "astraeus/slurm_import/sacct_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string_view first = text.substr(0, text.find('\n'));
    auto names = astraeus::slurm::expand_hostlist(first);
    if (names && names->size() > astraeus::slurm::kMaxHostlistNames) __builtin_trap();
    for (auto format : {astraeus::slurm::SacctFormat::Parsable2, astraeus::slurm::SacctFormat::Json}) {
        auto segs = astraeus::slurm::parse_sacct(text, "fuzz", format);
        if (!segs) continue;
        if (segs->size() > 1'000'000) __builtin_trap();
        for (const auto& s : *segs)
            if (s.nodes.size() > astraeus::slurm::kMaxHostlistNames || s.job.empty()) __builtin_trap();
    }
    return 0;
}
