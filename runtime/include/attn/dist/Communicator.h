// The processes of one data-parallel training run, and the one collective training needs: a
// sum over every rank. Training talks to this interface; the MPI implementation is built
// when attnc is configured with ATTN_MPI (Open MPI), and a CUDA build will put NCCL behind
// the same calls (docs/distributed.md).
//
// Faults never hang a run: a collective that has not completed within the timeout throws
// dist::Fault naming the ranks that did not arrive (the caller then ends every rank with
// abort()), and a rank that dies is noticed by the launcher (mpirun), which stops the rest.
#ifndef ATTN_DIST_COMMUNICATOR_H
#define ATTN_DIST_COMMUNICATOR_H

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace attn::dist {

struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// data[0..n) := the sum of every rank's data[0..n), on every rank. `what` names the
  /// collective in a Fault ("the gradients of step 12").
  virtual void allReduceSum(float *data, size_t n, const std::string &what) = 0;
  /// Returns once every rank has called it, within `timeoutSeconds` (not the communicator's
  /// timeout: a rank may wait here for another's long compile). `what` names what is waited
  /// for ("rank 0's compile").
  virtual void barrier(const std::string &what, double timeoutSeconds) = 0;
  /// Ends every rank of the run with `code` (after an error on this one). Never returns.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// The world this process was launched into: MPI's when a launcher started it (mpirun sets
/// OMPI_COMM_WORLD_SIZE; PMI_SIZE / PMIX_RANK for others), else nullptr (one process, no
/// MPI at all). `timeoutSeconds` bounds every wait for another rank. Throws when the
/// launcher is there but this build has no MPI.
std::unique_ptr<Communicator> fromEnvironment(double timeoutSeconds);

} // namespace attn::dist

#endif // ATTN_DIST_COMMUNICATOR_H
