#include "tuner/progress.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/table.h"

namespace opsched {
namespace {

std::string Clock(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(int workloads, bool enabled, std::FILE* out, int lanes, std::string unit, std::string result)
    : workloads_(workloads),
      enabled_(enabled),
      tty_(isatty(fileno(out))),
      out_(out),
      unit_(std::move(unit)),
      result_(std::move(result)),
      lanes_(static_cast<size_t>(std::max(lanes, 1))) {
  session_start_ = std::chrono::steady_clock::now();
}

void Progress::StartWorkload(int lane, int index, const std::string& line, int planned) {
  std::lock_guard<std::mutex> lock(mu_);
  Lane& l = lanes_.at(lane);
  l = Lane{index, line, planned, 0, 0, ""};
  ++started_;
  planned_started_ += planned;
  Draw(true);
}

void Progress::Update(int lane, int done, double best_us, const std::string& best) {
  std::lock_guard<std::mutex> lock(mu_);
  Lane& l = lanes_.at(lane);
  ++steps_total_;
  l.done = done;
  l.best_us = best_us;
  l.best = best;
  Draw(false);
}

void Progress::FinishWorkload(int lane, const std::string& summary) {
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_;
  lanes_.at(lane).index = -1;
  if (!enabled_) return;
  if (tty_) std::fputs("\r\033[K", out_);
  const std::string who = lanes_.size() > 1 ? fmt::format(" lane {}:", lane) : "";
  fmt::print(out_, "[{}/{}]{} {}\n", finished_, workloads_, who, summary);
  std::fflush(out_);
}

void Progress::Draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (!force && since < (tty_ ? 0.1 : 10.0)) return;
  last_draw_ = now;
  // ETA: the steps left in the running workloads and, at the average plan so far, in
  // those not started, at the pace seen so far over all lanes.
  const double elapsed = std::chrono::duration<double>(now - session_start_).count();
  const double per_step = steps_total_ > 0 ? elapsed / steps_total_ : 0;
  int remaining = 0;
  for (const Lane& l : lanes_) {
    if (l.index >= 0) remaining += std::max(l.planned - l.done, 0);
  }
  const double average_plan = started_ > 0 ? static_cast<double>(planned_started_) / started_ : 0;
  remaining += static_cast<int>(average_plan * std::max(workloads_ - started_, 0));
  const std::string eta = per_step > 0 ? Clock(per_step * remaining) : "?";
  std::string text;
  if (lanes_.size() == 1) {
    const Lane& l = lanes_[0];
    const int width = 20;
    const int filled = l.planned > 0 ? std::min(width, l.done * width / l.planned) : 0;
    const std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
    const std::string best =
        l.best_us > 0 ? fmt::format("{} {:.2f} us {}", result_, l.best_us, l.best) : std::string("no result yet");
    text = fmt::format("[{}/{}] {} [{}] {}/{} {}, {}, ETA {}", l.index + 1, workloads_, TruncateToWidth(l.line, 60), bar,
                       l.done, l.planned, unit_, best, eta);
  } else {
    text = fmt::format("[{}/{} done]", finished_, workloads_);
    for (size_t i = 0; i < lanes_.size(); ++i) {
      const Lane& l = lanes_[i];
      text += l.index < 0 ? fmt::format(" | {}: idle", i)
                          : fmt::format(" | {}: {} {}/{}", i, TruncateToWidth(l.line, 28), l.done, l.planned);
    }
    text += fmt::format(", ETA {}", eta);
  }
  if (tty_) {
    fmt::print(out_, "\r\033[K{}", text);
  } else {
    fmt::print(out_, "{}\n", text);
  }
  std::fflush(out_);
}

}  // namespace opsched
