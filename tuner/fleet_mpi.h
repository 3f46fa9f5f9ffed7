// Tuning over several hosts with MPI (`mpirun -np N opsched tune --mpi ...`):
//   - rank 0 reads the suite and the log, hands out workloads one at a time (the next to
//     whichever rank finishes first) and is the only writer of the log;
//   - every other rank tunes on its local GPU (the local rank picks among the host's
//     GPUs) or, with --target cpu, on its CPU, and sends each record to rank 0 as it is
//     made, then the workload's summary;
//   - resume works as with one process: rank 0 sends each workload's logged records on
//     the rank's target with the task;
//   - a rank that dies (no message, not even its heartbeat, for `dead_after_s`) has its
//     workload put back in the queue with what it recorded so far, and the run
//     finishes with the other ranks; the summary says who died and what was re-queued.
//     With Open MPI 4 this needs `mpirun --enable-recovery` (without it mpirun ends the
//     whole job when a rank dies; the log keeps every record sent before).
// With one rank, rank 0 tunes itself, as `opsched tune` without --mpi.
#pragma once

#include <string>

#include "registry/registry.h"
#include "tuner/session.h"

namespace opsched {

struct MpiTuneOptions {
  TuneOptions tune;          // suite, log (rank 0), policy, trials, budgets, ...
  std::string target;        // tuning ranks: "cpu", "cuda:N", or "" (the local GPU, else the CPU)
  double timeout_s = 60;     // per candidate, as in `opsched tune`
  double heartbeat_s = 1;    // tuning ranks say they are alive this often
  double dead_after_s = 20;  // rank 0 gives a silent rank up after this long
  size_t table_width = kTableWidth;  // of rank 0's closing table (0: every column in full)
};

// True when this build can run over MPI.
bool MpiAvailable();

// Runs this process's part of the run; returns the process exit code (rank 0: 0 when
// every workload has a best record, 1 when some has none, 2 on errors).
int RunMpiTune(const Registry& registry, const MpiTuneOptions& options);

}  // namespace opsched
