// The service's view of executors: the interface lives in exec/executor.hpp (the executors
// module, which the service depends on); these names keep the service's code short.
#pragma once
#include "astraeus/exec/executor.hpp"

namespace astraeus::service {

using exec::ExecEvent;
using exec::ExecPhase;
using exec::ExecRun;
using exec::Executor;
using exec::kNever;
using exec::WorkerPlacement;

}  // namespace astraeus::service
