// Run-history export (`astraeus trace export`): the live service's runs, workspaces and
// inventory, read from its store, as the simulator's inputs: a native trace
// (docs/formats/native-trace.md), a tenants file (docs/tenants.md, JSON) and a machine-list CSV
// (`--cluster FILE`). The format and the rules for unfinished runs: docs/formats/run-export.md.
// Thread safety: export_run_history is a pure function; export_data_dir reads one store.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "astraeus/base/error.hpp"
#include "astraeus/model/workload.hpp"
#include "astraeus/store/store.hpp"

namespace astraeus::trace_export {

/// What the store holds for one cluster, and the window to keep.
struct RunHistory {
    std::vector<store::RunRec> runs;
    std::vector<store::WorkspaceRec> workspaces;  ///< with their weights on the cluster
    std::vector<store::PoolRec> pools;
    std::vector<store::MachineRec> machines;
    Seconds now_s = 0;  ///< the service clock's last event (Unix s): end of open attempts
    std::optional<Seconds> since_s, until_s;  ///< keep since <= submitted < until (Unix s)
};

/// The export: the workload (job id = run id, tenant = workspace, gpus = workers x
/// gpus_per_worker, submit_s from the earliest kept submit, duration_s = sum of the attempts'
/// running time, name = run name) and the three files' texts.
struct RunExport {
    Workload workload;
    std::string trace_csv;     ///< native trace, with '# ' comments flagging unfinished runs
    std::string tenants_json;  ///< {"tenants": [{"name", "weight"}]} in workspace id order
    std::string machines_csv;  ///< machine,pool,gpus,up (machine = "pool/name")
    int succeeded = 0, running = 0, failed = 0, stopped = 0, never_started = 0;
};

/// Builds the export. Runs that never started (no attempt) are left out (counted in
/// never_started); a run still running counts its open attempt up to now_s. Errors: no run in
/// the window, or a run whose workspace is unknown.
Result<RunExport> export_run_history(const RunHistory& h);

/// Reads the store of `data_dir` read-only (store::open_sqlite_read_only) and exports its first
/// organisation's first cluster.
Result<RunExport> export_data_dir(const std::string& data_dir, std::optional<Seconds> since_s,
                                  std::optional<Seconds> until_s);

}  // namespace astraeus::trace_export
