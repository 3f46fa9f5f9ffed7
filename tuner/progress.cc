#include "tuner/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace opsched {
namespace {

std::string Clock(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(int workloads, bool enabled, std::FILE* out)
    : workloads_(workloads), enabled_(enabled), tty_(isatty(fileno(out))), out_(out) {
  session_start_ = std::chrono::steady_clock::now();
}

void Progress::StartWorkload(int index, const std::string& line, int planned_trials) {
  index_ = index;
  line_ = line.size() > 60 ? line.substr(0, 57) + "..." : line;
  planned_ = planned_trials;
  trials_ = 0;
  best_us_ = 0;
  best_.clear();
  workload_start_ = std::chrono::steady_clock::now();
  Draw(true);
}

void Progress::Update(int trials, double best_us, const std::string& best) {
  ++trials_total_;
  trials_ = trials;
  best_us_ = best_us;
  best_ = best;
  Draw(false);
}

void Progress::FinishWorkload(const std::string& summary) {
  if (!enabled_) return;
  if (tty_) std::fputs("\r\033[K", out_);
  fmt::print(out_, "[{}/{}] {}\n", index_ + 1, workloads_, summary);
  std::fflush(out_);
}

void Progress::Draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (!force && since < (tty_ ? 0.1 : 10.0)) return;
  last_draw_ = now;
  // ETA: this workload's remaining trials and the remaining workloads, at the session's
  // pace so far.
  const double elapsed = std::chrono::duration<double>(now - session_start_).count();
  const double per_trial = trials_total_ > 0 ? elapsed / trials_total_ : 0;
  const int remaining = std::max(planned_ - trials_, 0) + planned_ * (workloads_ - index_ - 1);
  const int width = 20;
  const int filled = planned_ > 0 ? std::min(width, trials_ * width / planned_) : 0;
  const std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
  const std::string best =
      best_us_ > 0 ? fmt::format("best {:.2f} us {}", best_us_, best) : std::string("no result yet");
  const std::string text = fmt::format("[{}/{}] {} [{}] {}/{} trials, {}, ETA {}", index_ + 1,
                                       workloads_, line_, bar, trials_, planned_, best,
                                       per_trial > 0 ? Clock(per_trial * remaining) : "?");
  if (tty_) {
    fmt::print(out_, "\r\033[K{}", text);
  } else {
    fmt::print(out_, "{}\n", text);
  }
  std::fflush(out_);
}

}  // namespace opsched
