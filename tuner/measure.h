// Measuring a candidate: warm up, then repeat until both a minimum count and a minimum
// total time are reached (or a maximum of either), and summarise; a candidate far slower
// than the best so far is cut short (MeasureOptions::cutoff_us). The clock is
// abstract: a DeviceClock times a Trial with CUDA events (emptying L2 before each
// repetition: tuner/l2_flusher.h) or the steady clock on the CPU; tests drive the policy with a synthetic
// clock.
#pragma once

#include <vector>

#include "core/buffer.h"
#include "core/event.h"
#include "core/l2_flush.h"
#include "core/status.h"
#include "tuner/l2_flusher.h"
#include "tuner/stats.h"
#include "tuner/trial.h"

namespace opsched {

struct MeasureOptions {
  int warmups = 3;
  int min_repeats = 10;
  double min_total_ms = 20;  // keep repeating until this much measured time
  int max_repeats = 1000;
  double max_total_ms = 1000;
  // GPU: how L2 is emptied before each repetition (core/l2_flush.h); recorded in
  // Stats::l2_flush.
  L2Flush l2_flush = L2Flush::kRead;
  // Cut a hopeless candidate short: when the first warm-up, or the median of a timed
  // round, is above this many microseconds, stop after one more timed repetition (or
  // that round). The summary then has fewer repetitions, and says so in `repeats`; such
  // a candidate is far from winning. 0: off. The tuner sets it to a multiple of the
  // workload's best time so far (TuneOptions::cutoff_factor).
  double cutoff_us = 0;
};

class SampleClock {
 public:
  virtual ~SampleClock() = default;
  // Runs `count` timed repetitions and appends their durations in microseconds.
  virtual Status Sample(int count, std::vector<double>* us) = 0;
  // The host time of each repetition so far (warm-ups included), where the clock's
  // samples are device times; empty where they are host times already.
  virtual const std::vector<double>& host_samples() const {
    static const std::vector<double> kNone;
    return kNone;
  }
  // The L2 flush before each repetition ("read", "overwrite", "none"; core/l2_flush.h),
  // once a repetition ran; empty on a CPU.
  virtual std::string l2_flush() const { return ""; }
};

// The timed samples (warm-ups excluded) of one measurement.
// `warmups_run`, when given, receives the warm-ups actually run.
StatusOr<std::vector<double>> MeasureSamples(SampleClock& clock, const MeasureOptions& options,
                                             int* warmups_run = nullptr);
// MeasureSamples, summarised; with the median of the clock's host samples as host_us and
// the clock's L2 flush.
StatusOr<Stats> MeasureUntil(SampleClock& clock, const MeasureOptions& options);

// Times one implementation and config on a Trial's device. On a GPU it also times the
// host side of each call: from entering the implementation to its return, with the
// device still busy with the L2 flush queued before it. So a call that waits for the
// device (an internal synchronising allocation) shows that wait, and a call whose
// submission outlasts its kernels shows its overhead. At most a few repetitions are
// queued at a time, so that the host never waits for room in the launch queue.
class DeviceClock : public SampleClock {
 public:
  DeviceClock(Trial* trial, const Implementation* impl, Config config, const MeasureOptions& options);
  Status Sample(int count, std::vector<double>* us) override;
  const std::vector<double>& host_samples() const override { return host_us_; }
  std::string l2_flush() const override;

 private:
  Status Prepare();

  Trial* trial_;
  const Implementation* impl_;
  Config config_;
  MeasureOptions options_;
  bool prepared_ = false;
  L2Flusher flusher_;
  std::vector<Event> starts_, ends_;
  std::vector<double> host_us_;
};

}  // namespace opsched
