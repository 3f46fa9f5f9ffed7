// Progress of a long run on stderr (a tuning session, a bench run): one updating line
// with each lane's workload (a lane is a device, or the one loop of a bench), its
// trials, the best so far and an ETA (a plain line every few seconds when stderr is not
// a terminal), and one line per finished workload. Thread-safe: lanes report from their
// own threads.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace opsched {

class Progress {
 public:
  // `unit` names what a lane counts ("trials", "rounds"); `result` names the time shown
  // ("best" so far while tuning, "tuned" for a bench's measurement of the served choice).
  Progress(int workloads, bool enabled, std::FILE* out = stderr, int lanes = 1, std::string unit = "trials",
           std::string result = "best");
  void StartWorkload(int lane, int index, const std::string& line, int planned);
  // After each step: steps done in the lane's workload, the best call time so far (<= 0:
  // none) and what achieved it (for a bench: the served choice's median so far).
  void Update(int lane, int done, double best_us, const std::string& best);
  void FinishWorkload(int lane, const std::string& summary);

  // The one-lane forms.
  void StartWorkload(int index, const std::string& line, int planned) { StartWorkload(0, index, line, planned); }
  void Update(int done, double best_us, const std::string& best) { Update(0, done, best_us, best); }
  void FinishWorkload(const std::string& summary) { FinishWorkload(0, summary); }

 private:
  struct Lane {
    int index = -1;  // workload, -1 when idle
    std::string line;
    int planned = 0;
    int done = 0;
    double best_us = 0;
    std::string best;
  };
  void Draw(bool force);  // needs mu_

  const int workloads_;
  const bool enabled_;
  const bool tty_;
  std::FILE* const out_;
  const std::string unit_;
  const std::string result_;
  std::mutex mu_;
  std::vector<Lane> lanes_;
  int finished_ = 0;
  int started_ = 0;
  int steps_total_ = 0;
  int planned_started_ = 0;  // planned steps of the workloads started so far
  std::chrono::steady_clock::time_point session_start_, last_draw_;
};

}  // namespace opsched
