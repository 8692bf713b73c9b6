// The Communicator over MPI (Open MPI). Every collective is non-blocking and waited for
// with a deadline, so a rank that hangs (stopped, deadlocked, swapped out for minutes) makes
// the others fail with a message rather than wait forever. To name the rank that hangs,
// rank 0 pings every rank when its deadline passes: a rank that is waiting answers from its
// wait loop, one that is stopped (or still busy long after the others) does not.
#include "attn/dist/Communicator.h"

#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <vector>

namespace attn::dist {
namespace {

constexpr int kPingTag = 1, kPongTag = 2;
constexpr double kPingSeconds = 3.0;   // how long rank 0 waits for the answers
constexpr double kGraceSeconds = 10.0; // how much longer the other ranks wait than rank 0

class Mpi final : public Communicator {
public:
  explicit Mpi(double timeoutSeconds) : timeout(timeoutSeconds) {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // Pings travel apart from the collectives' messages.
    MPI_Comm_dup(MPI_COMM_WORLD, &pings);
    if (rank_ != 0)
      MPI_Irecv(&pinged, 1, MPI_INT, 0, kPingTag, pings, &ping);
  }
  ~Mpi() override {
    if (ping != MPI_REQUEST_NULL) {
      MPI_Cancel(&ping);
      MPI_Wait(&ping, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&pings);
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allReduceSum(float *data, size_t n, const std::string &what) override {
    if (size_ == 1)
      return;
    if (n > (size_t)INT_MAX)
      throw std::runtime_error("attn: an all-reduce of " + std::to_string(n) +
                               " values is more than MPI's int count holds");
    MPI_Request sum;
    MPI_Iallreduce(MPI_IN_PLACE, data, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &sum);
    complete(sum, "the all-reduce of " + what, timeout);
  }

  void barrier(const std::string &what, double timeoutSeconds) override {
    if (size_ == 1)
      return;
    MPI_Request all;
    MPI_Ibarrier(MPI_COMM_WORLD, &all);
    complete(all, "the wait for " + what, timeoutSeconds);
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

private:
  // Waits for the collective `request` ("the all-reduce of ...") for `seconds` on rank 0, a
  // little longer on the others; past that, throws a Fault naming the ranks that do not
  // answer (rank 0), or rank 0 (the others: rank 0 would have spoken first).
  void complete(MPI_Request &request, const std::string &collective, double seconds) {
    double limit = rank_ == 0 ? seconds : seconds + kPingSeconds + kGraceSeconds;
    if (wait(request, limit))
      return;
    std::string waited = std::to_string((int)limit) + " s";
    if (rank_ != 0)
      throw Fault(collective + " did not complete within " + waited +
                  ", and rank 0, which names a missing rank sooner, did not: rank 0 hangs or "
                  "is stopped; stopping every rank");
    std::string missing = unresponsive();
    throw Fault((missing.empty() ? std::string("a rank") : missing) + " did not complete " +
                collective + " within " + waited + (missing.empty() ? "" : " and does not answer") +
                " (it hangs, is stopped, or is far slower than the others); stopping every "
                "rank");
  }

  // Polls `request` until it completes (true) or `seconds` pass (false), answering rank 0's
  // pings meanwhile. Open MPI's blocking calls poll as well; this one yields the core after
  // a while, for ranks that share one.
  bool wait(MPI_Request &request, double seconds) {
    using clock = std::chrono::steady_clock;
    auto deadline = clock::now() + std::chrono::duration<double>(seconds);
    for (unsigned spins = 0;; ++spins) {
      int done = 0;
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done)
        return true;
      if (ping != MPI_REQUEST_NULL) {
        int asked = 0;
        MPI_Test(&ping, &asked, MPI_STATUS_IGNORE);
        if (asked) {
          MPI_Send(&pinged, 1, MPI_INT, 0, kPongTag, pings);
          MPI_Irecv(&pinged, 1, MPI_INT, 0, kPingTag, pings, &ping);
        }
      }
      if (spins > 4096)
        sched_yield();
      if ((spins & 255) == 0 && clock::now() > deadline)
        return false;
    }
  }

  // Rank 0: "rank 2, rank 5": the ranks that do not answer a ping within kPingSeconds.
  std::string unresponsive() {
    std::vector<MPI_Request> requests(2 * (size_ - 1));
    std::vector<int> asks(size_), answers(size_);
    for (int r = 1; r < size_; ++r) {
      MPI_Isend(&asks[r], 1, MPI_INT, r, kPingTag, pings, &requests[2 * (r - 1)]);
      MPI_Irecv(&answers[r], 1, MPI_INT, r, kPongTag, pings, &requests[2 * (r - 1) + 1]);
    }
    using clock = std::chrono::steady_clock;
    auto deadline = clock::now() + std::chrono::duration<double>(kPingSeconds);
    std::vector<bool> answered(size_, false);
    while (clock::now() < deadline) {
      bool all = true;
      for (int r = 1; r < size_; ++r) {
        if (!answered[r]) {
          int done = 0;
          MPI_Test(&requests[2 * (r - 1) + 1], &done, MPI_STATUS_IGNORE);
          answered[r] = done;
        }
        all = all && answered[r];
      }
      if (all)
        break;
      sched_yield();
    }
    std::string names;
    for (int r = 1; r < size_; ++r)
      if (!answered[r])
        names += (names.empty() ? "rank " : ", rank ") + std::to_string(r);
    return names; // the requests are left pending: every rank is aborted next
  }

  double timeout;
  int rank_ = 0, size_ = 1;
  MPI_Comm pings = MPI_COMM_NULL;
  MPI_Request ping = MPI_REQUEST_NULL; // ranks > 0: rank 0's next ping
  int pinged = 0;
};

} // namespace

std::unique_ptr<Communicator> makeMpi(double timeoutSeconds) {
  return std::make_unique<Mpi>(timeoutSeconds);
}

} // namespace attn::dist
