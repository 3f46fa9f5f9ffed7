// Measurement in a worker process: a crash, a GPU fault or a hang ends the worker, not
// the tuning session. The session talks to the worker over its stdin/stdout (framed
// WorkerRequest / WorkerReply); a candidate that kills the worker is recorded as
// crashed, one that outlives its timeout as timeout, and the next candidate gets a
// fresh worker.
//
// Any binary can serve as the worker: its main() calls MaybeRunWorker() first, which
// takes over when argv[1] is "__opsched_worker" (the opsched CLI and the tuner tests
// do this).
#pragma once

#include <sys/types.h>

#include <string>

#include "tuner/evaluator.h"
#include "tuner/worker.pb.h"

namespace opsched {

inline constexpr const char* kWorkerFlag = "__opsched_worker";

// When argv asks for worker mode: serves requests until stdin closes, then returns true
// with the exit code in *exit_code. Otherwise returns false.
bool MaybeRunWorker(int argc, char** argv, int* exit_code);

// The worker side of one request, in this process.
tuner::WorkerReply ServeRequest(const tuner::WorkerRequest& request, LocalEvaluator** evaluator,
                                bool* exit_after);

class WorkerClient {
 public:
  // `executable` runs the worker when given kWorkerFlag (default: this program).
  explicit WorkerClient(std::string executable = "/proc/self/exe");
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Sends `request`, waits up to `timeout_s` for the reply. On a crash, a broken pipe or
  // a timeout, the worker is killed and the reply says so (crashed / timeout).
  tuner::WorkerReply Call(const tuner::WorkerRequest& request, double timeout_s);
  // Number of workers started so far.
  int starts() const { return starts_; }

 private:
  Status Start();
  void Stop();

  std::string executable_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  int starts_ = 0;
};

// A CandidateEvaluator that evaluates in a WorkerClient's process.
class WorkerEvaluator : public CandidateEvaluator {
 public:
  WorkerEvaluator(Device device, double timeout_s, std::string executable = "/proc/self/exe")
      : device_(device), timeout_s_(timeout_s), client_(std::move(executable)) {}
  Evaluation Evaluate(const Workload& canonical, const Candidate& candidate,
                      const EvaluateOptions& options) override;
  int worker_starts() const { return client_.starts(); }

 private:
  Device device_;
  double timeout_s_;
  WorkerClient client_;
};

}  // namespace opsched
