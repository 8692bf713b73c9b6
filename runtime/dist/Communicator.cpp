#include "attn/dist/Communicator.h"

#include <cstdlib>

namespace attn::dist {

#ifdef ATTN_HAVE_MPI
std::unique_ptr<Communicator> makeMpi(double timeoutSeconds); // Mpi.cpp
#endif

std::unique_ptr<Communicator> fromEnvironment(double timeoutSeconds) {
  bool launched =
      std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
  if (!launched)
    return nullptr;
#ifdef ATTN_HAVE_MPI
  return makeMpi(timeoutSeconds);
#else
  (void)timeoutSeconds;
  // Each rank would train the whole batch on its own and race the others for the run
  // directory: refuse instead.
  throw std::runtime_error(
      "attnc was started by an MPI launcher, but this build has no MPI (configured with "
      "ATTN_MPI=OFF or without libopenmpi-dev); rebuild with MPI, or run without mpirun");
#endif
}

} // namespace attn::dist
