#include "bench/lib/bench_runner.h"

#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include "bench/lib/verdict.h"
#include "core/atomic_file.h"
#include "core/event.h"
#include "core/format.h"
#include "core/table.h"
#include "core/gpu/gpu_backend.h"
#include "core/version.h"
#include "opsched/runtime.h"
#include "records/convert.h"
#include "records/database.h"
#include "strategies/dispatcher.h"
#include "tuner/l2_flusher.h"
#include "tuner/progress.h"
#include "tuner/suite.h"
#include "tuner/trial.h"

namespace opsched::bench {
namespace {

// Calls before the wall-time loop starts its clock.
constexpr int kWallWarmupCalls = 3;

// Times Runtime::Run on a Trial's tensors: what a consumer's call costs on the device.
class RuntimeClock : public SampleClock {
 public:
  RuntimeClock(Runtime* runtime, Trial* trial, const MeasureOptions& options)
      : runtime_(runtime), trial_(trial), options_(options) {}

  Status Sample(int count, std::vector<double>* us) override {
    const Stream& stream = trial_->stream();
    if (stream.device().is_cpu()) {
      for (int i = 0; i < count; ++i) {
        const auto start = std::chrono::steady_clock::now();
        OPSCHED_RETURN_IF_ERROR(runtime_->Run(trial_->workload(), trial_->tensors(), stream));
        us->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      }
      return absl::OkStatus();
    }
    if (!flusher_) {
      OPSCHED_ASSIGN_OR_RETURN(flusher_, L2Flusher::Create(options_.l2_flush, stream, runtime_->target().l2_bytes));
    }
    while (static_cast<int>(starts_.size()) < count) {
      OPSCHED_ASSIGN_OR_RETURN(Event a, Event::Create(stream.device()));
      OPSCHED_ASSIGN_OR_RETURN(Event b, Event::Create(stream.device()));
      starts_.push_back(std::move(a));
      ends_.push_back(std::move(b));
    }
    for (int i = 0; i < count; ++i) {
      OPSCHED_RETURN_IF_ERROR(flusher_->Flush(stream, i));
      OPSCHED_RETURN_IF_ERROR(starts_[i].Record(stream));
      OPSCHED_RETURN_IF_ERROR(runtime_->Run(trial_->workload(), trial_->tensors(), stream));
      OPSCHED_RETURN_IF_ERROR(ends_[i].Record(stream));
    }
    OPSCHED_RETURN_IF_ERROR(runtime_->Synchronize(stream));
    for (int i = 0; i < count; ++i) {
      OPSCHED_ASSIGN_OR_RETURN(double ms, Event::ElapsedMs(starts_[i], ends_[i]));
      us->push_back(ms * 1000);
    }
    return absl::OkStatus();
  }

 private:
  Runtime* runtime_;
  Trial* trial_;
  MeasureOptions options_;
  std::optional<L2Flusher> flusher_;  // created at the first GPU sample
  std::vector<Event> starts_, ends_;
};

void Fill(Timing* t, std::string implementation, std::string config, const std::vector<double>& samples) {
  const MedianEstimate m = EstimateMedian(samples);
  t->set_implementation(std::move(implementation));
  t->set_config(std::move(config));
  t->set_median_us(m.median);
  t->set_ci_low_us(m.low);
  t->set_ci_high_us(m.high);
  t->set_samples(m.samples);
}

// Text for a double-quoted gnuplot string shown in enhanced mode (also a quoted string of
// a data file, which gnuplot reads the same way): "_" would start a subscript, "^" a
// superscript, and so on; each is escaped to print as itself.
std::string GnuplotText(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\'';  // neither may end or escape the quoted string
    } else if (std::string_view("_^@&{}~").find(c) != std::string_view::npos) {
      out += "\\\\";
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A bound of a timing's 95% confidence interval (its median when the interval is unknown).
double Bound(const Timing& t, bool high) {
  const double b = high ? t.ci_high_us() : t.ci_low_us();
  return b > 0 ? b : t.median_us();
}

// " value low high" for the chart's data file; NaN (no bar) where there is no value.
std::string ChartRatio(double value, double low, double high) {
  if (!(value > 0) || !std::isfinite(value)) return " NaN NaN NaN";
  if (!(low > 0) || !std::isfinite(low)) low = value;
  if (!(high > 0) || !std::isfinite(high)) high = value;
  return fmt::format(" {:.4f} {:.4f} {:.4f}", value, std::min(low, value), std::max(high, value));
}

std::string ChartTime(const Timing& t) { return ChartRatio(t.median_us(), Bound(t, false), Bound(t, true)); }

double GeoMean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / v.size());
}

std::string Json(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(m, &out, o);
  return out;
}

// The host time per call of kHeldCalls Runtime calls queued while a host function holds
// the stream for kHoldMs (the device runs none of them meanwhile): the Runtime's own cost.
constexpr int kHeldCalls = 20;
constexpr int kHoldMs = 30;

StatusOr<double> HostUsPerCall(Runtime& runtime, const Workload& w, Trial& trial) {
  const Stream& stream = trial.stream();
  OPSCHED_RETURN_IF_ERROR(gpu::LaunchHostFunc(
      stream.native(), [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(kHoldMs)); }, nullptr));
  const auto start = std::chrono::steady_clock::now();
  Status ran = absl::OkStatus();
  for (int i = 0; i < kHeldCalls && ran.ok(); ++i) ran = runtime.Run(w, trial.tensors(), stream);
  const double elapsed = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  OPSCHED_RETURN_IF_ERROR(runtime.Synchronize(stream));  // the hold and the calls, before anything else
  OPSCHED_RETURN_IF_ERROR(ran);
  return elapsed / kHeldCalls;
}

// One entry: check the tuned choice, then time the three choices in interleaved rounds.
Status BenchOne(const Registry& registry, const BenchOptions& options, Runtime& runtime,
                const Dispatcher& heuristics, const records::Database& db, const Workload& w,
                uint64_t seed, Progress* progress, BenchEntry* entry) {
  TrialOptions to;
  to.generator = options.generator;
  to.seed = seed;
  to.verification = Verification::kAuto;  // inputs and checks on the device where possible
  OPSCHED_ASSIGN_OR_RETURN(auto trial, Trial::Create(registry, w, options.target, to));
  OPSCHED_ASSIGN_OR_RETURN(Decision tuned, runtime.Decide(w));
  entry->set_provenance(std::string(ProvenanceName(tuned.provenance)));
  // The tuned choice must be right before its speed counts.
  OPSCHED_RETURN_IF_ERROR(Annotate(trial->Run(*tuned.implementation, tuned.config), "tuned choice"));
  OPSCHED_RETURN_IF_ERROR(Annotate(trial->Check(*tuned.implementation), "tuned choice"));

  struct Choice {
    const Implementation* impl = nullptr;
    Config config;
    std::vector<double> samples;
  };
  Choice heuristic, oracle;
  if (StatusOr<Decision> h = heuristics.Heuristic(w); h.ok()) {
    heuristic.impl = h->implementation;
    heuristic.config = h->config;
  }
  if (std::optional<records::Match> best = db.Best(w, options.target)) {
    oracle.impl = registry.FindImplementation(db.implementation(best->entry->implementation));
    oracle.config = db.config(best->entry->config);
    if (oracle.impl != nullptr && !oracle.impl->Space(w, options.target).Contains(oracle.config)) {
      oracle.impl = nullptr;  // a stale record
    }
  }
  const bool same = heuristic.impl == oracle.impl && heuristic.config == oracle.config;
  std::vector<double> tuned_samples;
  for (int round = 0; round < std::max(1, options.rounds); ++round) {
    RuntimeClock clock(&runtime, trial.get(), options.measure);
    OPSCHED_ASSIGN_OR_RETURN(std::vector<double> s, MeasureSamples(clock, options.measure));
    tuned_samples.insert(tuned_samples.end(), s.begin(), s.end());
    for (Choice* c : {&heuristic, &oracle}) {
      if (c->impl == nullptr || (c == &oracle && same)) continue;
      DeviceClock device(trial.get(), c->impl, c->config, options.measure);
      OPSCHED_ASSIGN_OR_RETURN(std::vector<double> cs, MeasureSamples(device, options.measure));
      c->samples.insert(c->samples.end(), cs.begin(), cs.end());
    }
    progress->Update(round + 1, EstimateMedian(tuned_samples).median, std::string(tuned.implementation->name()));
  }
  if (same) oracle.samples = heuristic.samples;
  // Wall time per call in a loop, as a consumer calling back to back sees it, in the
  // steady state: after warm-up calls, which decide and prepare the workload and
  // capture the graphs of replayed vendor calls (extern/cudnn/replayed_prepared.h).
  {
    const Stream& stream = trial->stream();
    for (int warmup = 0; warmup < kWallWarmupCalls; ++warmup) {
      OPSCHED_RETURN_IF_ERROR(runtime.Run(w, trial->tensors(), stream));
    }
    OPSCHED_RETURN_IF_ERROR(runtime.Synchronize(stream));
    const bool gpu = !stream.device().is_cpu();
    Event first, last;
    if (gpu) {
      OPSCHED_ASSIGN_OR_RETURN(first, Event::Create(stream.device()));
      OPSCHED_ASSIGN_OR_RETURN(last, Event::Create(stream.device()));
    }
    int calls = 0;
    const auto start = std::chrono::steady_clock::now();
    if (gpu) OPSCHED_RETURN_IF_ERROR(first.Record(stream));
    double elapsed = 0;
    while (calls < 2000 && (calls < 20 || elapsed < 0.02)) {
      OPSCHED_RETURN_IF_ERROR(runtime.Run(w, trial->tensors(), stream));
      ++calls;
      if (calls % 10 == 0) {
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    }
    if (gpu) OPSCHED_RETURN_IF_ERROR(last.Record(stream));
    OPSCHED_RETURN_IF_ERROR(runtime.Synchronize(stream));
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    entry->set_wall_us(elapsed * 1e6 / calls);
    if (gpu) {
      OPSCHED_ASSIGN_OR_RETURN(double ms, Event::ElapsedMs(first, last));
      entry->set_loop_device_us(ms * 1000 / calls);
      OPSCHED_ASSIGN_OR_RETURN(double host, HostUsPerCall(runtime, w, *trial));
      entry->set_host_us(host);
    }
  }
  Fill(entry->mutable_tuned(), std::string(tuned.implementation->name()), tuned.config.ToString(), tuned_samples);
  if (heuristic.impl) {
    Fill(entry->mutable_heuristic(), std::string(heuristic.impl->name()), heuristic.config.ToString(),
         heuristic.samples);
  }
  if (oracle.impl) {
    Fill(entry->mutable_oracle(), std::string(oracle.impl->name()), oracle.config.ToString(), oracle.samples);
  }
  const double t = entry->tuned().median_us();
  if (oracle.impl && t > 0) {
    entry->set_tuned_over_oracle(t / entry->oracle().median_us());
    if (heuristic.impl) entry->set_heuristic_over_oracle(entry->heuristic().median_us() / entry->oracle().median_us());
  }
  if (heuristic.impl && t > 0) entry->set_speedup_over_heuristic(entry->heuristic().median_us() / t);
  entry->set_bytes(registry.FindOp(w.op())->MinBytes(w));
  if (t > 0) entry->set_gbps(entry->bytes() / (t * 1e3));
  return absl::OkStatus();
}

}  // namespace

StatusOr<BenchReport> RunBench(const Registry& registry, const BenchOptions& options) {
  OPSCHED_ASSIGN_OR_RETURN(std::vector<SuiteEntry> suite, ReadSuite(options.suite_path, registry));
  const std::string flush(options.target.kind != DeviceKind::kCpu ? L2FlushName(options.measure.l2_flush) : "");
  std::map<std::string, double> baseline;
  int other_flush = 0;  // baseline entries of this suite measured with another L2 flush: not compared
  if (!options.baseline_path.empty()) {
    StatusOr<Baseline> b = LoadBaseline(options.baseline_path);
    if (b.ok()) {
      std::set<std::string> in_suite;
      for (const SuiteEntry& s : suite) {
        if (s.error.ok()) in_suite.insert(s.workload.ToString());
      }
      int same_flush = 0;
      for (const BaselineEntry& e : b->entries()) {
        const bool ours = in_suite.count(e.workload()) > 0;
        if (BaselineFlush(e, options.target) == flush) {
          baseline[e.workload()] = e.median_us();
          same_flush += ours;
        } else {
          other_flush += ours;
        }
      }
      if (other_flush > 0 && same_flush == 0 && options.require_baseline) {
        // Nothing of this suite left to judge by: as a missing baseline, not a silent pass.
        return absl::NotFoundError(fmt::format(
            "every entry of baseline {} for this suite was measured with another L2 flush than this run's ({}): "
            "--l2-flush compares with them, --update-baseline writes this run's",
            options.baseline_path, flush.empty() ? "none, on a CPU" : flush));
      }
      if (other_flush > 0) {
        fmt::print(stderr,
                   "opsched bench: {} entries of baseline {} for this suite were measured with another L2 flush than "
                   "this run's ({}); they are not compared (--l2-flush, or --update-baseline)\n",
                   other_flush, options.baseline_path, flush.empty() ? "none, on a CPU" : flush);
      }
    } else if (!absl::IsNotFound(b.status()) || options.require_baseline) {
      return absl::IsNotFound(b.status())
                 ? absl::NotFoundError(fmt::format("{} (--update-baseline writes one)", b.status().message()))
                 : b.status();
    }
  }
  RuntimeOptions ro;
  ro.target = options.target;
  ro.record_files = options.records;
  ro.model_file = options.model_file;
  ro.registry = &registry;
  OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> runtime, Runtime::Create(ro));
  if (!runtime->model_status().ok()) return runtime->model_status();
  // Records of another device are never served here: say so before the long measurement.
  if (!runtime->records_note().empty()) fmt::print(stderr, "opsched bench: {}\n", runtime->records_note());
  // The oracle's records: what is served, plus the reference logs.
  records::Database known;
  if (!options.reference_records.empty()) {
    for (const std::string& path : options.records) OPSCHED_RETURN_IF_ERROR(known.Load(path));
    for (const std::string& path : options.reference_records) {
      OPSCHED_RETURN_IF_ERROR(Annotate(known.Load(path), "reference records"));
    }
  }
  const Dispatcher heuristics(registry, options.target, nullptr, DispatchOptions{});
  BenchReport report;
  report.set_opsched_version(kVersion);
  *report.mutable_target() = records::ToProto(options.target);
  report.set_suite(options.suite_path);
  for (const std::string& r : options.records) report.add_records(r);
  report.set_tolerance_pct(options.tolerance * 100);
  report.set_min_change_us(options.min_change_us);
  report.set_baseline(options.baseline_path);
  report.set_l2_flush(flush);
  report.set_timestamp_unix_s(std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count());
  const int rounds = std::max(1, options.rounds);
  Progress progress(static_cast<int>(suite.size()), options.progress, stderr, 1, "rounds", "tuned");
  for (size_t i = 0; i < suite.size(); ++i) {
    const SuiteEntry& s = suite[i];
    BenchEntry* e = report.add_entries();
    e->set_line(s.line);
    if (!s.error.ok()) {
      e->set_workload(s.text);
      e->set_bad_line(true);
      e->set_verdict("error");
      e->set_message(std::string(Message(s.error)));
      progress.StartWorkload(static_cast<int>(i), s.text, 0);
      progress.FinishWorkload(fmt::format("skipped: {}", e->message()));
      continue;
    }
    e->set_workload(s.workload.ToString());
    e->set_op(s.workload.op());
    progress.StartWorkload(static_cast<int>(i), e->workload(), rounds);
    const records::Database& oracle_db = options.reference_records.empty() ? runtime->records() : known;
    Status st = BenchOne(registry, options, *runtime, heuristics, oracle_db, s.workload,
                         options.seed * 7919 + i, &progress, e);
    if (!st.ok()) {
      e->set_verdict("error");
      e->set_message(std::string(Message(st)));
      progress.FinishWorkload(fmt::format("{}: error: {}", e->workload(), e->message()));
      continue;
    }
    auto b = baseline.find(e->workload());
    const double base = b == baseline.end() ? 0 : b->second;
    MedianEstimate m;  // the tuned estimate of this run (pooled rounds)
    m.median = e->tuned().median_us();
    m.low = e->tuned().ci_low_us();
    m.high = e->tuned().ci_high_us();
    m.samples = e->tuned().samples();
    const Verdict v = Judge(m, base, options.tolerance, options.min_change_us);
    e->set_baseline_us(base);
    if (base > 0) e->set_change(m.median / base);
    e->set_verdict(VerdictName(v));
    if (v == Verdict::kRegression) report.set_regressions(report.regressions() + 1);
    progress.FinishWorkload(fmt::format("{}: {} {:.2f} us, {}", e->workload(), e->tuned().implementation(),
                                        m.median, e->verdict()));
  }
  // Per-op geometric means of choice quality.
  std::map<std::string, std::vector<const BenchEntry*>> by_op;
  for (const BenchEntry& e : report.entries()) {
    if (e.verdict() != "error") by_op[e.op()].push_back(&e);
  }
  for (const auto& [op, entries] : by_op) {
    std::vector<double> to, ho, sp;
    for (const BenchEntry* e : entries) {
      if (e->tuned_over_oracle() > 0) to.push_back(e->tuned_over_oracle());
      if (e->heuristic_over_oracle() > 0) ho.push_back(e->heuristic_over_oracle());
      if (e->speedup_over_heuristic() > 0) sp.push_back(e->speedup_over_heuristic());
    }
    OpSummary* s = report.add_ops();
    s->set_op(op);
    s->set_workloads(static_cast<int>(entries.size()));
    s->set_geomean_tuned_over_oracle(GeoMean(to));
    s->set_geomean_heuristic_over_oracle(GeoMean(ho));
    s->set_geomean_speedup_over_heuristic(GeoMean(sp));
  }
  return report;
}

// A provenance in at most 10 characters for the terminal table.
static std::string ShortProvenance(const std::string& p) {
  if (p == "nearest-workload record") return "nearest";
  if (p == "transferred record") return "transfer";
  if (p == "exact record") return "exact";
  if (p == "vendor heuristic") return "vendor";
  return p.substr(0, 10);
}

std::string FormatTable(const BenchReport& r, size_t width) {
  // t/oracle is the served choice over the best known one (the records' fastest, re-timed).
  Table table({{.header = "line", .right = true},
               {.header = "workload", .min_width = 32, .importance = 2},
               {.header = "tuned implementation"},  // a name to copy: never cut
               {.header = "provenance", .droppable = true, .importance = 1},
               {.header = "tuned us", .right = true, .importance = 6},
               {.header = "wall us", .right = true, .droppable = true, .importance = 0},
               {.header = "loop dev us", .right = true, .droppable = true, .importance = 0},
               {.header = "host us", .right = true, .droppable = true, .importance = 0},
               {.header = "heur. us", .right = true, .droppable = true, .importance = 1},
               {.header = "oracle us", .right = true, .droppable = true, .importance = 1},
               {.header = "t/oracle", .right = true, .importance = 5},
               {.header = "h/oracle", .right = true, .droppable = true, .importance = 2},
               {.header = "baseline", .right = true, .droppable = true, .importance = 3},
               {.header = "change", .right = true, .importance = 5},
               {.header = "verdict", .importance = 6}});
  for (const BenchEntry& e : r.entries()) {
    if (e.verdict() == "error") {
      table.AddRow({std::to_string(e.line()), e.workload(), "error: " + e.message()});
      continue;
    }
    table.AddRow({std::to_string(e.line()), e.workload(), e.tuned().implementation(), ShortProvenance(e.provenance()),
                  Figure(e.tuned().median_us(), "{:.2f}"), Figure(e.wall_us(), "{:.2f}"),
                  Figure(e.loop_device_us(), "{:.2f}"), Figure(e.host_us(), "{:.2f}"),
                  Figure(e.heuristic().median_us(), "{:.2f}"), Figure(e.oracle().median_us(), "{:.2f}"),
                  Figure(e.tuned_over_oracle(), "{:.3f}"), Figure(e.heuristic_over_oracle(), "{:.3f}"),
                  Figure(e.baseline_us(), "{:.2f}"), Figure(e.change(), "{:.3f}x"), e.verdict()});
  }
  std::string out = table.ToString(width);
  for (const OpSummary& s : r.ops()) {
    out += fmt::format("{}: {} workloads, geomean tuned/oracle {:.3f}, heuristic/oracle {:.3f}, "
                       "speedup over heuristic {:.2f}x\n",
                       s.op(), s.workloads(), s.geomean_tuned_over_oracle(), s.geomean_heuristic_over_oracle(),
                       s.geomean_speedup_over_heuristic());
  }
  out += fmt::format("{} regression(s) beyond {:.1f}% and the measured noise\n", r.regressions(),
                     r.tolerance_pct());
  return out;
}

Status WriteReports(const BenchReport& r, const std::string& dir) {
  mkdir(dir.c_str(), 0755);
  OPSCHED_RETURN_IF_ERROR(WriteFileAtomically(dir + "/report.json", Json(r)));
  // Markdown.
  std::string md = fmt::format("# opsched bench: {}\n\nTarget: {} {} ({} SMs), opsched {}, tolerance {:.1f}%\n\n",
                               r.suite(), r.target().device_name(), r.target().arch(), r.target().sm_count(),
                               r.opsched_version(), r.tolerance_pct());
  md += "| line | workload | tuned | provenance | tuned µs | heuristic µs | oracle µs | tuned/oracle | "
        "heuristic/oracle | GB/s | baseline µs | change | verdict |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const BenchEntry& e : r.entries()) {
    if (e.verdict() == "error") {
      md += fmt::format("| {} | `{}` | error: {} |||||||||||\n", e.line(), e.workload(), e.message());
      continue;
    }
    md += fmt::format("| {} | `{}` | {} `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", e.line(),
                      e.workload(), e.tuned().implementation(), e.tuned().config(), e.provenance(),
                      Figure(e.tuned().median_us(), "{:.2f}"), Figure(e.heuristic().median_us(), "{:.2f}"),
                      Figure(e.oracle().median_us(), "{:.2f}"), Figure(e.tuned_over_oracle(), "{:.3f}"),
                      Figure(e.heuristic_over_oracle(), "{:.3f}"), Figure(e.gbps(), "{:.0f}"),
                      Figure(e.baseline_us(), "{:.2f}"), Figure(e.change(), "{:.3f}"), e.verdict());
  }
  md += "\n| op | workloads | geomean tuned/oracle | geomean heuristic/oracle | geomean speedup over heuristic |\n"
        "|---|---|---|---|---|\n";
  for (const OpSummary& s : r.ops()) {
    md += fmt::format("| {} | {} | {} | {} | {} |\n", s.op(), s.workloads(), Figure(s.geomean_tuned_over_oracle(), "{:.3f}"),
                      Figure(s.geomean_heuristic_over_oracle(), "{:.3f}"),
                      Figure(s.geomean_speedup_over_heuristic(), "{:.2f}x"));
  }
  md += fmt::format("\n{} regression(s).\n\n![speedups](speedups.svg)\n", r.regressions());
  OPSCHED_RETURN_IF_ERROR(WriteFileAtomically(dir + "/report.md", md));
  // The chart: gnuplot over a data file, both with relative paths (the script runs from
  // its own folder: cd DIR && gnuplot speedups.gp).
  std::string data =
      "# index, then value, 95% CI low and high of: speedup_over_heuristic, oracle_over_tuned, tuned_us, "
      "heuristic_us, oracle_us; then the label (NaN: no value, no bar)\n";
  int rows = 0;
  for (const BenchEntry& e : r.entries()) {
    if (e.verdict() == "error") continue;
    const Timing& t = e.tuned();
    const Timing& h = e.heuristic();
    const Timing& o = e.oracle();
    data += fmt::format("{}{}{}{}{}{} \"{}\"\n", rows++,
                        ChartRatio(e.speedup_over_heuristic(), Bound(h, false) / Bound(t, true),
                                   Bound(h, true) / Bound(t, false)),
                        ChartRatio(e.tuned_over_oracle() > 0 ? 1 / e.tuned_over_oracle() : 0,
                                   Bound(o, false) / Bound(t, true), Bound(o, true) / Bound(t, false)),
                        ChartTime(t), ChartTime(h), ChartTime(o),
                        GnuplotText(fmt::format("{}:{}", e.op(), e.line())));
  }
  OPSCHED_RETURN_IF_ERROR(WriteFileAtomically(dir + "/speedups.dat", data));
  const std::string script = fmt::format(R"gp(set terminal svg size 1000,900 dynamic enhanced font "sans,11"
set output "speedups.svg"
set datafile missing "NaN"
set multiplot layout 2,1 title "opsched bench on {0}: tuned choice per workload"
# Ratios with their 95% confidence intervals (from the measured medians' intervals).
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "ratio (95% confidence interval)"
set yrange [0:*]
set xtics rotate by -45 scale 0
set key outside top center horizontal
set grid ytics
plot "speedups.dat" using 2:3:4:xtic(17) title "speedup over heuristic", "" using 5:6:7 title "oracle / tuned (1 = best measured)", 1 with lines dashtype 2 lc rgb "#444444" notitle
# Absolute times: medians with their 95% confidence intervals.
set logscale y
set ylabel "median us per call (95% confidence interval)"
set yrange [*:*]
set xrange [-0.5:{1}.5]
plot "speedups.dat" using ($1-0.2):8:9:10:xtic(17) with yerrorbars pt 7 title "tuned", "" using 1:11:12:13 with yerrorbars pt 5 title "heuristic", "" using ($1+0.2):14:15:16 with yerrorbars pt 9 title "oracle"
unset multiplot
)gp",
                                         GnuplotText(r.target().device_name()), rows - 1);
  OPSCHED_RETURN_IF_ERROR(WriteFileAtomically(dir + "/speedups.gp", script));
  if (rows == 0) return absl::OkStatus();  // nothing measured: no chart to draw
  // gnuplot's own messages (a panel with no valid points) go to stderr, after what we
  // printed, never into the report on stdout.
  std::fflush(stdout);
  const int rc = std::system(fmt::format("cd {} && gnuplot speedups.gp 1>&2", ShellQuote(dir)).c_str());
  if (rc != 0) {
    return absl::FailedPreconditionError(
        "gnuplot failed or is missing (tools/setup.sh installs gnuplot-nox); speedups.svg not drawn");
  }
  return absl::OkStatus();
}

}  // namespace opsched::bench
