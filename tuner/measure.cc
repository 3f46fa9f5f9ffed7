#include "tuner/measure.h"

#include <chrono>
#include <cmath>

#include "core/gpu/gpu_backend.h"

namespace opsched {

StatusOr<std::vector<double>> MeasureSamples(SampleClock& clock, const MeasureOptions& options, int* warmups_run) {
  std::vector<double> warm;
  std::vector<double> samples;
  const auto hopeless = [&](double us) { return options.cutoff_us > 0 && us > options.cutoff_us; };
  int warmups = 0;
  if (options.warmups > 0) {
    OPSCHED_RETURN_IF_ERROR(clock.Sample(1, &warm));
    warmups = 1;
    if (hopeless(warm[0])) {
      // A slow first run may be a cold start (plans, module loading): one warm timed run
      // decides whether the candidate is really hopeless.
      OPSCHED_RETURN_IF_ERROR(clock.Sample(1, &samples));
      if (hopeless(samples[0])) {
        if (warmups_run != nullptr) *warmups_run = warmups;
        return samples;
      }
    } else if (options.warmups > 1) {
      OPSCHED_RETURN_IF_ERROR(clock.Sample(options.warmups - 1, &warm));
      warmups = options.warmups;
    }
  }
  if (warmups_run != nullptr) *warmups_run = warmups;
  double total_ms = 0;
  for (double us : samples) total_ms += us / 1000.0;
  int batch = std::max(1, options.min_repeats - static_cast<int>(samples.size()));
  while (true) {
    const size_t before = samples.size();
    OPSCHED_RETURN_IF_ERROR(clock.Sample(batch, &samples));
    for (size_t i = before; i < samples.size(); ++i) total_ms += samples[i] / 1000.0;
    const int n = static_cast<int>(samples.size());
    if (n >= options.max_repeats || total_ms >= options.max_total_ms) break;
    if (n >= options.min_repeats && total_ms >= options.min_total_ms) break;
    if (hopeless(Summarize(std::vector<double>(samples.begin() + before, samples.end()), 0).median_us)) break;
    // Enough repetitions to reach the minimum total time at the rate seen so far.
    const double per_ms = total_ms / std::max(n, 1);
    const double missing_ms = options.min_total_ms - total_ms;
    int want = per_ms > 0 ? static_cast<int>(std::ceil(missing_ms / per_ms)) : n;
    want = std::max(want, options.min_repeats - n);
    batch = std::clamp(want, 1, options.max_repeats - n);
  }
  return samples;
}

StatusOr<Stats> MeasureUntil(SampleClock& clock, const MeasureOptions& options) {
  int warmups = 0;
  OPSCHED_ASSIGN_OR_RETURN(std::vector<double> samples, MeasureSamples(clock, options, &warmups));
  Stats stats = Summarize(std::move(samples), warmups);
  stats.host_us = Median(clock.host_samples());
  stats.l2_flush = clock.l2_flush();
  return stats;
}

DeviceClock::DeviceClock(Trial* trial, const Implementation* impl, Config config,
                         const MeasureOptions& options)
    : trial_(trial), impl_(impl), config_(std::move(config)), options_(options) {}

Status DeviceClock::Prepare() {
  if (prepared_) return absl::OkStatus();
  OPSCHED_RETURN_IF_ERROR(trial_->Prepare(*impl_, config_));
  const Stream& stream = trial_->stream();
  if (stream.device().is_gpu() && options_.l2_flush != L2Flush::kNone) {
    StatusOr<Target> t = QueryTarget(stream.device());
    OPSCHED_ASSIGN_OR_RETURN(flusher_, L2Flusher::Create(options_.l2_flush, stream, t.ok() ? t->l2_bytes : 0));
  }
  prepared_ = true;
  return absl::OkStatus();
}

namespace {

// Repetitions queued at most before the host waits for the device (DeviceClock::Sample).
// Each queues a flush, two events and the candidate's launches: far below the depth of
// the launch queue, and enough to keep the device busy while the host submits.
constexpr int kHostWindow = 16;

}  // namespace

std::string DeviceClock::l2_flush() const {
  if (!prepared_ || !trial_->stream().device().is_gpu()) return "";
  return std::string(L2FlushName(flusher_.kind()));
}

Status DeviceClock::Sample(int count, std::vector<double>* us) {
  OPSCHED_RETURN_IF_ERROR(Prepare());
  const Stream& stream = trial_->stream();
  if (stream.device().is_cpu()) {
    for (int i = 0; i < count; ++i) {
      const auto start = std::chrono::steady_clock::now();
      OPSCHED_RETURN_IF_ERROR(trial_->Launch(*impl_, config_));
      const auto end = std::chrono::steady_clock::now();
      us->push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
    return absl::OkStatus();
  }
  while (static_cast<int>(starts_.size()) < count) {
    OPSCHED_ASSIGN_OR_RETURN(Event a, Event::Create(stream.device()));
    OPSCHED_ASSIGN_OR_RETURN(Event b, Event::Create(stream.device()));
    starts_.push_back(std::move(a));
    ends_.push_back(std::move(b));
  }
  for (int i = 0; i < count; ++i) {
    if (i > 0 && i % kHostWindow == 0) {
      // Never more than a window of repetitions queued: with the device's launch queue
      // full, the host would wait for room in every call and time the device's pace.
      OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
    }
    // Outside the events: only the candidate's own work is timed, on a cold L2.
    OPSCHED_RETURN_IF_ERROR(flusher_.Flush(stream, i));
    OPSCHED_RETURN_IF_ERROR(starts_[i].Record(stream));
    const auto host_start = std::chrono::steady_clock::now();
    OPSCHED_RETURN_IF_ERROR(trial_->Launch(*impl_, config_));
    host_us_.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - host_start).count());
    OPSCHED_RETURN_IF_ERROR(ends_[i].Record(stream));
  }
  OPSCHED_RETURN_IF_ERROR(stream.Synchronize());
  for (int i = 0; i < count; ++i) {
    OPSCHED_ASSIGN_OR_RETURN(double ms, Event::ElapsedMs(starts_[i], ends_[i]));
    us->push_back(ms * 1000.0);
  }
  return absl::OkStatus();
}

}  // namespace opsched
