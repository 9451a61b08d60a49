// Cluster shapes for the simulator: presets, "MxG" strings and machine-list files.
// Thread safety: pure functions (the file reader reads one file).
#pragma once
#include <string>

#include "astraeus/base/error.hpp"
#include "astraeus/model/cluster.hpp"

namespace astraeus {

/// Resolves a --cluster value:
///  - "MxG" (e.g. "40x8"): M machines of G GPUs;
///  - "philly": the Philly inventory (Jeon et al., ATC'19; data/philly/cluster_machine_list.csv):
///    552 machines, 231 x 8 GPUs then 321 x 2 GPUs (big machines first) = 2,490 GPUs;
///  - "reference-1120": the ASTRAEA paper's Philly experiment, 140 x 8 = 1,120 GPUs;
///  - a path to a CSV machine list whose header has a column "number of GPUs" (the Philly
///    cluster_machine_list format; machine order = file order; 0-GPU machines skipped).
Result<ClusterSpec> resolve_cluster(const std::string& value);

/// Short description, e.g. "552 machines, 2490 GPUs (231 x 8, 321 x 2)".
std::string describe_cluster(const ClusterSpec& c);

}  // namespace astraeus
