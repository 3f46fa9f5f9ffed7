#include "tuner/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/format.h"
#include "core/log.h"
#include "records/convert.h"
#include "registry/registry.h"

extern char** environ;

namespace opsched {
namespace {

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteFrame(int fd, const std::string& payload) {
  char header[4];
  const uint32_t size = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) header[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  return WriteAll(fd, header, 4) && WriteAll(fd, payload.data(), payload.size());
}

// Reads exactly `size` bytes before `deadline` (steady clock); a negative timeout waits
// forever. Returns 1 on success, 0 on end of file or error, -1 on timeout.
int ReadExactly(int fd, char* data, size_t size,
                std::chrono::steady_clock::time_point deadline, bool forever) {
  while (size > 0) {
    if (!forever) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return -1;
      pollfd p{fd, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) return -1;
      if (r < 0) return 0;
    }
    ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 1;
}

int ReadFrame(int fd, std::string* payload, std::chrono::steady_clock::time_point deadline,
              bool forever) {
  char header[4];
  int r = ReadExactly(fd, header, 4, deadline, forever);
  if (r != 1) return r;
  uint32_t size = 0;
  for (int i = 0; i < 4; ++i) size |= uint32_t(static_cast<unsigned char>(header[i])) << (8 * i);
  if (size > (256u << 20)) return 0;
  payload->resize(size);
  return ReadExactly(fd, payload->data(), size, deadline, forever);
}

MeasureOptions FromProto(const tuner::MeasureOptionsProto& p) {
  MeasureOptions m;
  m.warmups = p.warmups();
  m.min_repeats = p.min_repeats();
  m.min_total_ms = p.min_total_ms();
  m.max_repeats = p.max_repeats();
  m.max_total_ms = p.max_total_ms();
  // The coordinator sends a name it parsed itself; an empty or unknown one keeps the default.
  if (StatusOr<L2Flush> f = ParseL2Flush(p.l2_flush()); f.ok()) m.l2_flush = *f;
  m.cutoff_us = p.cutoff_us();
  return m;
}

tuner::MeasureOptionsProto ToProto(const MeasureOptions& m) {
  tuner::MeasureOptionsProto p;
  p.set_warmups(m.warmups);
  p.set_min_repeats(m.min_repeats);
  p.set_min_total_ms(m.min_total_ms);
  p.set_max_repeats(m.max_repeats);
  p.set_max_total_ms(m.max_total_ms);
  p.set_l2_flush(std::string(L2FlushName(m.l2_flush)));
  p.set_cutoff_us(m.cutoff_us);
  return p;
}

tuner::WorkerReply ErrorReply(records::RecordStatus status, std::string message) {
  tuner::WorkerReply reply;
  reply.set_status(status);
  reply.set_message(std::move(message));
  return reply;
}

}  // namespace

tuner::WorkerReply ServeRequest(const tuner::WorkerRequest& request, LocalEvaluator** evaluator,
                                bool* exit_after) {
  *exit_after = false;
  StatusOr<Workload> workload = records::FromProto(request.workload());
  if (!workload.ok()) return ErrorReply(records::NOT_APPLICABLE, std::string(Message(workload.status())));
  StatusOr<Config> config = records::FromProto(request.config());
  if (!config.ok()) return ErrorReply(records::NOT_APPLICABLE, std::string(Message(config.status())));
  if (*evaluator == nullptr) {
    StatusOr<Device> device = ParseDevice(request.device());
    if (!device.ok()) return ErrorReply(records::NOT_APPLICABLE, std::string(Message(device.status())));
    StatusOr<Target> target = QueryTarget(*device);
    if (!target.ok()) return ErrorReply(records::LAUNCH_ERROR, std::string(Message(target.status())));
    *evaluator = new LocalEvaluator(Registry::Global(), *target);
  }
  EvaluateOptions options;
  options.measure = FromProto(request.measure());
  options.generator.index_pattern = request.index_pattern().empty() ? "uniform" : request.index_pattern();
  options.seed = request.seed();
  if (!request.verification().empty()) {
    StatusOr<Verification> verification = ParseVerification(request.verification());
    if (!verification.ok()) return ErrorReply(records::NOT_APPLICABLE, std::string(Message(verification.status())));
    options.verification = *verification;
  }
  const Evaluation e =
      (*evaluator)->Evaluate(*workload, Candidate{request.implementation(), *config}, options);
  tuner::WorkerReply reply;
  reply.set_status(e.status);
  reply.set_message(e.message);
  reply.set_workspace_bytes(e.workspace_bytes);
  *reply.mutable_stats() = ToProto(e.stats);
  *exit_after = (*evaluator)->device_poisoned();
  reply.set_worker_exits(*exit_after);
  return reply;
}

bool MaybeRunWorker(int argc, char** argv, int* exit_code) {
  if (argc < 2 || std::strcmp(argv[1], kWorkerFlag) != 0) return false;
  // Die with the session, even while stuck in a hanging candidate.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return (*exit_code = 1), true;
  LocalEvaluator* evaluator = nullptr;
  std::string payload;
  *exit_code = 0;
  while (ReadFrame(STDIN_FILENO, &payload, {}, /*forever=*/true) == 1) {
    tuner::WorkerRequest request;
    if (!request.ParseFromString(payload)) {
      *exit_code = 2;
      break;
    }
    bool exit_after = false;
    const tuner::WorkerReply reply = ServeRequest(request, &evaluator, &exit_after);
    if (!WriteFrame(STDOUT_FILENO, reply.SerializeAsString())) {
      *exit_code = 3;
      break;
    }
    if (exit_after) break;  // the device may be unusable: the session starts a new worker
  }
  delete evaluator;
  return true;
}

WorkerClient::WorkerClient(std::string executable) : executable_(std::move(executable)) {
  signal(SIGPIPE, SIG_IGN);  // a dead worker shows as a failed write, not a signal
}

WorkerClient::~WorkerClient() { Stop(); }

Status WorkerClient::Start() {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  if (pipe2(from, O_CLOEXEC) != 0) {
    close(to[0]);
    close(to[1]);
    return absl::InternalError("pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from[1], STDOUT_FILENO);
  std::string flag = kWorkerFlag;
  char* argv[] = {executable_.data(), flag.data(), nullptr};
  pid_t pid;
  const int err = posix_spawn(&pid, executable_.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(to[0]);
  close(from[1]);
  if (err != 0) {
    close(to[1]);
    close(from[0]);
    return absl::InternalError(fmt::format("starting the worker {}: {}", executable_, std::strerror(err)));
  }
  pid_ = pid;
  to_worker_ = to[1];
  from_worker_ = from[0];
  ++starts_;
  return absl::OkStatus();
}

void WorkerClient::Stop() {
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

tuner::WorkerReply WorkerClient::Call(const tuner::WorkerRequest& request, double timeout_s) {
  if (pid_ <= 0) {
    Status s = Start();
    if (!s.ok()) return ErrorReply(records::CRASHED, std::string(Message(s)));
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  std::string payload;
  int read = 0;
  if (WriteFrame(to_worker_, request.SerializeAsString())) {
    read = ReadFrame(from_worker_, &payload, deadline, /*forever=*/false);
  }
  tuner::WorkerReply reply;
  if (read == 1 && reply.ParseFromString(payload)) {
    if (reply.worker_exits()) Stop();  // the next call starts a fresh worker
    return reply;
  }
  std::string what;
  if (read == -1) {
    what = fmt::format("no result within {:.1f} s; the worker was killed", timeout_s);
  } else {
    int status = 0;
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    what = WIFSIGNALED(status) ? fmt::format("the worker died of signal {} ({})", WTERMSIG(status),
                                             strsignal(WTERMSIG(status)))
                               : fmt::format("the worker exited with status {}", WEXITSTATUS(status));
  }
  Stop();
  return ErrorReply(read == -1 ? records::TIMEOUT : records::CRASHED, what);
}

Evaluation WorkerEvaluator::Evaluate(const Workload& canonical, const Candidate& candidate,
                                     const EvaluateOptions& options) {
  tuner::WorkerRequest request;
  *request.mutable_workload() = records::ToProto(canonical);
  request.set_device(device_.ToString());
  request.set_implementation(candidate.implementation);
  *request.mutable_config() = records::ToProto(candidate.config);
  request.set_seed(options.seed);
  request.set_index_pattern(options.generator.index_pattern);
  request.set_verification(std::string(VerificationName(options.verification)));
  *request.mutable_measure() = ToProto(options.measure);
  const tuner::WorkerReply reply = client_.Call(request, timeout_s_);
  Evaluation e;
  e.status = reply.status();
  e.message = reply.message();
  e.workspace_bytes = reply.workspace_bytes();
  e.stats = FromProto(reply.stats());
  return e;
}

}  // namespace opsched
