#include "tuner/fleet_mpi.h"

#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "records/convert.h"
#include "records/database.h"
#include "selector/selector.h"
#include "strategies/dispatcher.h"
#include "tuner/fleet.pb.h"
#include "tuner/record_sink.h"
#include "tuner/suite.h"
#include "tuner/worker.h"
#include "tuner/workload_tuner.h"

namespace opsched {
namespace {

using Clock = std::chrono::steady_clock;

enum Tag : int { kHello = 1, kTask = 2, kStop = 3, kRecord = 4, kResult = 5, kHeartbeat = 6 };

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// Every MPI call of a process goes through one lock: the tuning ranks' heartbeat thread
// and their main thread share the library (enough with MPI_THREAD_SERIALIZED).
class Comm {
 public:
  void Send(int dest, Tag tag, const std::string& bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
  }
  // A waiting message, if any: its source, tag and bytes.
  bool Poll(int* source, int* tag, std::string* bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (!flag) return false;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    bytes->resize(static_cast<size_t>(count));
    MPI_Recv(bytes->data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    *source = status.MPI_SOURCE;
    *tag = status.MPI_TAG;
    return true;
  }

 private:
  std::mutex mu_;
};

// A tuning rank's records go to rank 0.
class MpiSink : public RecordSink {
 public:
  explicit MpiSink(Comm* comm) : comm_(comm) {}
  Status Append(const records::Record& record) override {
    comm_->Send(0, kRecord, record.SerializeAsString());
    return absl::OkStatus();
  }

 private:
  Comm* comm_;
};

int LocalRank() {
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int rank = 0;
  MPI_Comm_rank(local, &rank);
  MPI_Comm_free(&local);
  return rank;
}

StatusOr<Target> RankTarget(const std::string& flag, int local_rank) {
  if (!flag.empty()) {
    OPSCHED_ASSIGN_OR_RETURN(Device device, ParseDevice(flag));
    return QueryTarget(device);
  }
  const int gpus = gpu::DeviceCount();
  if (gpus == 0) return CpuTarget();
  return QueryTarget(Device{gpu::BackendKind(), local_rank % gpus});
}

// ---- a tuning rank ----

int Tune(const Registry& registry, const MpiTuneOptions& options, Comm& comm, int rank, int local_rank,
         bool heartbeat, bool* rank_died) {
  StatusOr<Target> target = RankTarget(options.target, local_rank);
  tuner::FleetHello hello;
  if (target.ok()) {
    *hello.mutable_target() = records::ToProto(*target);
    hello.set_device(target->device().ToString());
  } else {
    fmt::print(stderr, "opsched tune: rank {}: {}\n", rank, target.status().message());
  }
  hello.set_host(HostName());
  comm.Send(0, kHello, hello.SerializeAsString());
  // Rank 0 sees a hello without a target, gives this rank no work and reports it; exit
  // cleanly so that mpirun does not end the other ranks.
  if (!target.ok()) return 0;

  std::atomic<bool> done{false};
  std::thread beat;
  if (heartbeat) {
    beat = std::thread([&] {
      while (!done.load()) {
        comm.Send(0, kHeartbeat, "");
        for (int i = 0; i < 20 && !done.load(); ++i) {
          std::this_thread::sleep_for(std::chrono::duration<double>(options.heartbeat_s / 20));
        }
      }
    });
  }
  // What a Runtime on this rank would load besides the workload's own records: the
  // transfer logs (seeds and the guided policy's transfer learning).
  records::Database served, transfer;
  for (const std::string& path : options.tune.transfer_logs) {
    Status loaded = served.Load(path);
    if (loaded.ok()) loaded = transfer.Load(path);
    if (!loaded.ok()) fmt::print(stderr, "opsched tune: rank {}: {}\n", rank, loaded.message());
  }
  // The model serves this rank's target, or (trained on another device of the arch)
  // gives seeds only.
  std::unique_ptr<Selector> selector;
  bool model_serves = false;
  if (!options.tune.model_file.empty()) {
    StatusOr<std::unique_ptr<Selector>> loaded = Selector::Load(options.tune.model_file);
    Status serves = loaded.ok() ? (*loaded)->Serves(*target, false) : loaded.status();
    model_serves = serves.ok();
    if (serves.ok() || (loaded.ok() && (*loaded)->Serves(*target, true).ok())) selector = *std::move(loaded);
    if (!serves.ok()) {
      fmt::print(stderr, "opsched tune: rank {}: the model does not serve this target: {}{}\n", rank, serves.message(),
                 selector != nullptr ? " (its choices are measured first, as seeds)" : "");
    }
  }
  const std::unique_ptr<Dispatcher> other_devices = OtherDevicesDispatcher(registry, *target, &served, selector.get());
  WorkerEvaluator evaluator(target->device(), options.timeout_s);
  MpiSink sink(&comm);
  Progress progress(1, false);
  int code = 0;
  while (true) {
    int source = 0, tag = 0;
    std::string bytes;
    if (!comm.Poll(&source, &tag, &bytes)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    if (tag == kStop) {
      *rank_died = bytes == "died";
      break;
    }
    if (tag != kTask) continue;
    tuner::FleetTask task;
    if (!task.ParseFromString(bytes)) {
      code = 2;
      break;
    }
    SuiteEntry entry;
    entry.line = task.line();
    entry.text = task.workload();
    StatusOr<Workload> w = registry.ParseCanonical(task.workload());
    entry.error = w.status();
    if (w.ok()) entry.workload = *w;
    records::Database known;
    for (const std::string& payload : task.records()) {
      records::Record r;
      if (r.ParseFromString(payload)) {
        (void)known.Add(r);
        (void)served.Add(r);
      }
    }
    WorkloadContext ctx;
    ctx.registry = &registry;
    ctx.options = &options.tune;
    ctx.target = *target;
    ctx.evaluator = &evaluator;
    ctx.sink = &sink;
    ctx.known = &known;
    ctx.progress = &progress;
    ctx.session_id = options.tune.session_id;
    ctx.time_budget_s = task.time_budget_s();
    if (w.ok()) {
      const Dispatcher dispatcher(registry, *target, &served, DispatchOptions{}, model_serves ? selector.get() : nullptr);
      ctx.seeds = SeedCandidates(dispatcher, *w, other_devices.get());
      ctx.transfer = TransferExamples(transfer, *target, *w);
    }
    StatusOr<WorkloadResult> r = TuneWorkload(entry, task.index(), ctx);
    tuner::FleetResult result;
    result.set_index(task.index());
    if (!r.ok()) {
      result.set_error(std::string(Message(r.status())));
    } else {
      result.set_error(r->error);
      result.set_best_implementation(r->best_implementation);
      result.set_best_config(r->best_config);
      result.set_best_us(r->best_us);
      result.set_heuristic(r->heuristic);
      result.set_heuristic_us(r->heuristic_us);
      result.set_candidates(r->candidates);
      result.set_over_budget(r->over_budget);
      result.set_trials(r->trials);
      result.set_resumed(r->resumed);
      result.set_measured(r->measured);
      result.set_failures(r->failures);
      result.set_seconds(r->seconds);
    }
    comm.Send(0, kResult, result.SerializeAsString());
  }
  done = true;
  if (beat.joinable()) beat.join();
  return code;
}

// ---- rank 0 ----

struct RankState {
  bool alive = true;
  bool ready = false;     // said hello with a usable target
  bool stopped = false;   // was sent kStop
  int task = -1;          // suite index in flight
  records::TargetProto target;
  std::string device, host;
  Clock::time_point last_seen;
  int workloads = 0;
  int measured = 0;
};

int Coordinate(const Registry& registry, const MpiTuneOptions& options, Comm& comm, int size, bool* rank_died) {
  const TuneOptions& o = options.tune;
  const auto start = Clock::now();
  StatusOr<std::vector<SuiteEntry>> suite_or = ReadSuite(o.suite_path, registry);
  records::Database live;  // the log so far, records of this run added as they arrive
  Status opened = suite_or.status();
  if (opened.ok()) {
    // The whole suite parses before anything is measured (as `opsched tune` without --mpi).
    opened = CheckSuite(*suite_or, stderr);
  }
  if (opened.ok() && access(o.records_path.c_str(), F_OK) == 0) {
    opened = Annotate(live.Load(o.records_path), "resuming");
  }
  StatusOr<std::unique_ptr<LogSink>> sink = opened.ok() ? LogSink::Open(o.records_path)
                                                        : StatusOr<std::unique_ptr<LogSink>>(opened);
  if (!sink.ok()) {
    fmt::print(stderr, "opsched tune: {}\n", sink.status().message());
    for (int r = 1; r < size; ++r) comm.Send(r, kStop, "");
    return 2;
  }
  const std::vector<SuiteEntry>& suite = *suite_or;
  if (const char* recovery = std::getenv("OMPI_MCA_orte_enable_recovery"); recovery == nullptr ||
                                                                           std::string(recovery) != "1") {
    fmt::print(stderr,
               "opsched tune: mpirun runs without --enable-recovery: a rank that dies ends the whole run "
               "(records sent before are kept; the same command resumes)\n");
  }
  TuneReport report;
  report.session_id = o.session_id;
  report.workloads.resize(suite.size());
  std::deque<int> queue;
  for (size_t i = 0; i < suite.size(); ++i) {
    WorkloadResult& w = report.workloads[i];
    w.line = suite[i].line;
    if (suite[i].error.ok()) {
      w.workload = suite[i].workload.ToString();
      queue.push_back(static_cast<int>(i));
    } else {
      w.workload = suite[i].text;
      w.error = std::string(Message(suite[i].error));
    }
  }
  std::vector<RankState> ranks(static_cast<size_t>(size));
  for (RankState& r : ranks) r.last_seen = Clock::now();
  std::vector<std::string> deaths;
  size_t finished = suite.size() - queue.size();
  Progress progress(static_cast<int>(suite.size()), o.progress);

  auto give_work = [&](int r) {
    RankState& rank = ranks[r];
    if (queue.empty()) {
      // While another rank is busy this one stays idle (and heartbeating): should the
      // busy one die, its workload is re-queued and needs a rank to take it.
      for (int other = 1; other < size; ++other) {
        if (other != r && ranks[other].alive && ranks[other].task >= 0) return;
      }
      if (!rank.stopped) comm.Send(r, kStop, deaths.empty() ? "" : "died");
      rank.stopped = true;
      return;
    }
    const int index = queue.front();
    queue.pop_front();
    const SuiteEntry& entry = suite[index];
    tuner::FleetTask task;
    task.set_index(index);
    task.set_line(entry.line);
    task.set_workload(entry.workload.ToString());
    for (const records::RecordEntry* e :
         live.RecordsFor(entry.workload.hash(), rank.target.fingerprint())) {
      if (StatusOr<std::string> payload = live.Payload(*e); payload.ok()) task.add_records(*payload);
    }
    if (o.time_budget_s > 0) {
      int working = 0;
      for (const RankState& s : ranks) working += s.alive && s.ready;
      const double left = o.time_budget_s - Since(start);
      task.set_time_budget_s(std::max(1e-3, left * working / static_cast<double>(suite.size() - finished)));
    }
    rank.task = index;
    comm.Send(r, kTask, task.SerializeAsString());
  };

  int errors = 0;
  while (true) {
    int source = 0, tag = 0;
    std::string bytes;
    bool got = comm.Poll(&source, &tag, &bytes);
    if (got && source > 0 && source < size && ranks[source].alive) {
      RankState& rank = ranks[source];
      rank.last_seen = Clock::now();
      if (tag == kHello) {
        tuner::FleetHello hello;
        if (hello.ParseFromString(bytes) && hello.has_target()) {
          rank.target = hello.target();
          rank.device = hello.device();
          rank.host = hello.host();
          rank.ready = true;
          give_work(source);
        } else {
          rank.alive = false;  // it could not pick a device: it has exited
          deaths.push_back(fmt::format("rank {} on {} has no usable device", source, hello.host()));
        }
      } else if (tag == kRecord && rank.task >= 0) {
        records::Record r;
        if (!r.ParseFromString(bytes)) continue;
        Status appended = (*sink)->Append(r);
        if (appended.ok()) appended = live.Add(r);
        if (!appended.ok()) {
          fmt::print(stderr, "opsched tune: {}\n", appended.message());
          ++errors;
          break;
        }
        ++rank.measured;
      } else if (tag == kResult && rank.task >= 0) {
        tuner::FleetResult result;
        if (result.ParseFromString(bytes) && result.index() == rank.task) {
          WorkloadResult& w = report.workloads[result.index()];
          w.error = result.error();
          w.best_implementation = result.best_implementation();
          w.best_config = result.best_config();
          w.best_us = result.best_us();
          w.heuristic = result.heuristic();
          w.heuristic_us = result.heuristic_us();
          w.candidates = result.candidates();
          w.over_budget = result.over_budget();
          w.trials = result.trials();
          w.resumed = result.resumed();
          w.measured = result.measured();
          w.failures = result.failures();
          w.seconds = result.seconds();
          w.device = fmt::format("rank {} {} {}", source, rank.host, rank.device);
          ++finished;
          ++rank.workloads;
          progress.StartWorkload(result.index(), w.workload, 0);
          progress.FinishWorkload(w.best_us > 0 ? fmt::format("{}: {} {} {:.2f} us ({} trials, {})", w.workload,
                                                              w.best_implementation, w.best_config, w.best_us,
                                                              w.trials, w.device)
                                                : fmt::format("{}: {} ({})", w.workload, w.error, w.device));
        }
        rank.task = -1;
        give_work(source);
      }
    }
    // A rank silent for too long is gone: its workload goes back in the queue with what
    // it recorded so far, and nothing more is taken from it.
    for (int r = 1; r < size; ++r) {
      RankState& rank = ranks[r];
      if (!rank.alive || rank.stopped || Since(rank.last_seen) < options.dead_after_s) continue;
      rank.alive = false;
      std::string what = "no workload in flight";
      if (rank.task >= 0) {
        const SuiteEntry& entry = suite[rank.task];
        what = fmt::format("re-queued line {} ({})", entry.line, entry.workload.ToString());
        queue.push_front(rank.task);
        rank.task = -1;
      }
      deaths.push_back(fmt::format("rank {} ({} {}) died: no message for {:.0f} s; {}", r, rank.host, rank.device,
                                   options.dead_after_s, what));
      fmt::print(stderr, "opsched tune: {}\n", deaths.back());
      // An idle live rank takes the re-queued workload.
      for (int other = 1; other < size; ++other) {
        if (ranks[other].alive && ranks[other].ready && ranks[other].task < 0 && !ranks[other].stopped) {
          give_work(other);
          break;
        }
      }
    }
    bool busy = false, any_alive = false;
    for (int r = 1; r < size; ++r) {
      busy |= ranks[r].alive && ranks[r].task >= 0;
      any_alive |= ranks[r].alive && !ranks[r].stopped && (ranks[r].ready || Since(start) < options.dead_after_s);
    }
    if (!busy && queue.empty() && finished == suite.size()) {
      // Stop the ranks still waiting for work (hello after the queue emptied, or idle).
      bool waiting = false;
      for (int r = 1; r < size; ++r) {
        if (ranks[r].alive && !ranks[r].ready) waiting = true;
        if (ranks[r].alive && ranks[r].ready && !ranks[r].stopped) give_work(r);
      }
      if (!waiting) break;
    }
    if (!any_alive && !queue.empty()) {
      deaths.push_back(fmt::format("no rank is left to tune {} workloads", queue.size()));
      break;
    }
    if (!got) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int r = 1; r < size; ++r) {
    if (ranks[r].alive && !ranks[r].stopped) comm.Send(r, kStop, deaths.empty() ? "" : "died");
  }
  for (int r = 1; r < size; ++r) *rank_died |= !ranks[r].alive;
  for (const WorkloadResult& w : report.workloads) report.measured += w.measured;
  report.seconds = Since(start);
  std::fputs(report.ToString(options.table_width).c_str(), stdout);
  for (int r = 1; r < size; ++r) {
    const RankState& rank = ranks[r];
    fmt::print("rank {}: {} {}: {} workloads, {} records{}\n", r, rank.host.empty() ? "?" : rank.host,
               rank.device.empty() ? "-" : rank.device, rank.workloads, rank.measured, rank.alive ? "" : " (died)");
  }
  for (const std::string& d : deaths) fmt::print("{}\n", d);
  fmt::print("records appended to {} by rank 0 ({} ranks)\n", o.records_path, size);
  if (errors > 0) return 2;
  for (const WorkloadResult& w : report.workloads) {
    if (w.best_us == 0) return 1;
  }
  return 0;
}

}  // namespace

bool MpiAvailable() { return true; }

int RunMpiTune(const Registry& registry, const MpiTuneOptions& options) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int local_rank = LocalRank();  // collective: every rank calls it
  Comm comm;
  int code = 0;
  bool rank_died = false;  // a rank died: MPI_Finalize would wait for it forever
  MpiTuneOptions o = options;
  if (o.tune.session_id.empty()) {
    // One session id for every rank's records.
    char id[17] = {};
    if (rank == 0) {
      std::random_device rd;
      std::snprintf(id, sizeof id, "%08x%08x", rd(), rd());
    }
    MPI_Bcast(id, sizeof id, MPI_CHAR, 0, MPI_COMM_WORLD);
    o.tune.session_id = id;
  }
  if (size == 1) {
    StatusOr<Target> target = RankTarget(o.target, 0);
    StatusOr<std::vector<SuiteEntry>> suite = ReadSuite(o.tune.suite_path, registry);
    // The whole suite parses before anything is measured (as `opsched tune` without --mpi).
    const Status checked = suite.ok() ? CheckSuite(*suite, stderr) : absl::OkStatus();
    if (!target.ok()) {
      fmt::print(stderr, "opsched tune: {}\n", target.status().message());
      code = 2;
    } else if (!suite.ok()) {
      fmt::print(stderr, "opsched tune: {}\n", suite.status().message());
      code = 2;
    } else if (!checked.ok()) {
      fmt::print(stderr, "opsched tune: {}\n", checked.message());
      code = 2;
    } else {
      o.tune.target = *target;
      WorkerEvaluator evaluator(target->device(), o.timeout_s);
      StatusOr<TuneReport> report = TuneSession(registry, o.tune, &evaluator).Run();
      if (!report.ok()) {
        fmt::print(stderr, "opsched tune: {}\n", report.status().message());
        code = 2;
      } else {
        std::fputs(report->ToString(o.table_width).c_str(), stdout);
        for (const WorkloadResult& w : report->workloads) code = w.best_us == 0 ? 1 : code;
      }
    }
  } else if (rank == 0) {
    code = Coordinate(registry, o, comm, size, &rank_died);
  } else {
    code = Tune(registry, o, comm, rank, local_rank, provided >= MPI_THREAD_SERIALIZED, &rank_died);
  }
  if (rank_died) {
    // MPI_Finalize waits for every rank, the dead one too: the survivors end without it
    // (mpirun --enable-recovery accepts that) once their output is out.
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
  }
  MPI_Finalize();
  return code;
}

}  // namespace opsched
