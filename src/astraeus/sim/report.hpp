// Run outputs: the per-job CSV, the per-tenant time series, the run manifest, the summary (text
// table and JSON). Deterministic: fixed formats, no wall-clock values. Files are written to a
// temporary name and renamed, so a failed run leaves no partial output.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "astraeus/base/error.hpp"
#include "astraeus/sim/engine.hpp"
#include "astraeus/sim/metrics.hpp"

namespace astraeus {

/// One input file of a run, for the manifest.
struct InputFile {
    std::string role;  ///< "trace", "tenants", "names"
    std::string path;
};

/// A CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line break.
std::string csv_field(std::string_view v);

/// Version string of this build.
std::string astraeus_version();

/// FNV-1a 64-bit hash of a file's bytes, as 16 hex digits.
Result<std::string> file_hash(const std::string& path);

/// jobs.csv: one row per job (docs/outputs.md). write_jobs_csv streams it in 64 KiB pieces.
std::string jobs_csv(const Workload& w, const SimResult& r);
void write_jobs_csv(std::ostream& out, const Workload& w, const SimResult& r);
std::string tenants_csv(const Workload& w, const SimResult& r);
nlohmann::json summary_json(const Workload& w, const SimResult& r, const Summary& s);
Result<nlohmann::json> manifest_json(const SimConfig& c, const std::vector<InputFile>& inputs,
                                     const std::string& policy);
/// The summary as an aligned text table (spec section 9 figures).
std::string summary_table(const Workload& w, const SimResult& r, const Summary& s);

/// Makes sure `files` can later be written into `dir`, before a long simulation: creates `dir`
/// (and its parents) if needed and creates and removes a probe file there. Errors:
/// "DIR: cannot create output directory: ..." or "DIR: cannot write in the output directory: ...".
/// Returns true when it created `dir` itself: a run that then fails removes it again (no partial
/// output, not even an empty folder).
Result<bool> check_output_dir(const std::string& dir);

/// Writes `files` (name -> content) into `dir` (created if needed), each through a temporary
/// file and a rename.
Result<void> write_files(const std::string& dir,
                         const std::vector<std::pair<std::string, std::string>>& files);
/// The same with each file written by a function (large files streamed, not held whole).
using FileWriter = std::function<void(std::ostream&)>;
Result<void> write_files(const std::string& dir,
                         const std::vector<std::pair<std::string, FileWriter>>& files);

}  // namespace astraeus
