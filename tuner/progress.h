// Progress of a tuning session on stderr: one updating line per workload with trials,
// the best so far and an ETA (a plain line every few seconds when stderr is not a
// terminal).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace opsched {

class Progress {
 public:
  Progress(int workloads, bool enabled, std::FILE* out = stderr);
  void StartWorkload(int index, const std::string& line, int planned_trials);
  // After each trial: trials done in this workload, the best median so far (<= 0: none)
  // and what achieved it.
  void Update(int trials, double best_us, const std::string& best);
  void FinishWorkload(const std::string& summary);

 private:
  void Draw(bool force);

  int workloads_;
  bool enabled_;
  bool tty_;
  std::FILE* out_;
  int index_ = 0;
  std::string line_;
  int planned_ = 0;
  int trials_ = 0;
  double best_us_ = 0;
  std::string best_;
  std::chrono::steady_clock::time_point session_start_, workload_start_, last_draw_;
  int trials_total_ = 0;
};

}  // namespace opsched
