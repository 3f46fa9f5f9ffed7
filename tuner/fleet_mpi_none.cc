// tuner/fleet_mpi.h in a build without MPI (no libopenmpi-dev when it was configured).
#include <cstdio>

#include "tuner/fleet_mpi.h"

namespace opsched {

bool MpiAvailable() { return false; }

int RunMpiTune(const Registry&, const MpiTuneOptions&) {
  std::fputs("opsched tune: --mpi: this build has no MPI support (install libopenmpi-dev and rebuild)\n", stderr);
  return 2;
}

}  // namespace opsched
