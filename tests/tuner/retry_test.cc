// Timeouts and crashes are measured once more by a later session (tuner/retry.h); a log
// written with a timeout that was too short is no longer poisoned for good.
#include <functional>

#include <gtest/gtest.h>

#include "records/log_reader.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "tuner/retry.h"
#include "tuner/session.h"

namespace opsched {
namespace {

using namespace ::opsched::testing;  // the helpers of tests/test_files.h

TEST(RetryTest, DecisionsFromTheLoggedResultsOfOneCandidate) {
  using records::CRASHED;
  using records::OK;
  using records::TIMEOUT;
  using records::WRONG_RESULT;
  struct Case {
    std::vector<LoggedResult> logged;
    bool no_retry;
    bool measure;
    int attempt;
    double known_us;
  };
  const std::vector<Case> cases = {
      {{}, false, true, 1, 0},                                    // never measured
      {{{OK, 1, 12}, {OK, 1, 10}}, false, false, 1, 10},          // the fastest ok result
      {{{TIMEOUT, 1, 0}, {OK, 2, 9}}, false, false, 1, 9},        // a retry succeeded
      {{{TIMEOUT, 0, 0}}, false, true, 2, 0},                     // before attempts counted
      {{{CRASHED, 1, 0}}, false, true, 2, 0},
      {{{CRASHED, 1, 0}}, true, false, 1, -1},                    // --no-retry
      {{{TIMEOUT, 1, 0}, {TIMEOUT, 2, 0}}, false, false, 1, -1},  // retried once: final
      {{{TIMEOUT, 2, 0}}, false, false, 1, -1},                   // attempt 1 compacted away
      {{{TIMEOUT, 0, 0}, {CRASHED, 0, 0}}, false, false, 1, -1},  // two measurements
      {{{WRONG_RESULT, 1, 0}}, false, false, 1, -1},              // final at once
      {{{TIMEOUT, 1, 0}, {WRONG_RESULT, 2, 0}}, false, false, 1, -1},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const RetryDecision d = DecideRetry(c.logged, c.no_retry);
    EXPECT_EQ(d.measure, c.measure) << "case " << i;
    if (c.measure) {
      EXPECT_EQ(d.attempt, c.attempt) << "case " << i;
    } else {
      EXPECT_EQ(d.known_us, c.known_us) << "case " << i;
    }
  }
}

// Answers with a function of the candidate.
class ScriptedEvaluator : public CandidateEvaluator {
 public:
  explicit ScriptedEvaluator(std::function<Evaluation(const Candidate&)> answer)
      : answer_(std::move(answer)) {}
  Evaluation Evaluate(const Workload&, const Candidate& c, const EvaluateOptions&) override {
    ++calls;
    return answer_(c);
  }
  int calls = 0;

 private:
  std::function<Evaluation(const Candidate&)> answer_;
};

Evaluation TimedOut(const Candidate&) {
  Evaluation e;
  e.status = records::TIMEOUT;
  e.message = "no result within 0.0 s; the worker was killed";
  return e;
}

// bump_tuned's cost is 10 + 20 * (|a - 11| + |b - 5|) µs; the other bump
// implementations fail as they always do.
Evaluation Measured(const Candidate& c) {
  Evaluation e;
  if (c.implementation != "bump_tuned") {
    e.status = records::WRONG_RESULT;
    return e;
  }
  e.status = records::OK;
  e.stats.median_us = 10 + 20 * (std::abs(c.config.GetInt("a", 0) - 11) + std::abs(c.config.GetInt("b", 0) - 5));
  e.stats.repeats = 1;
  return e;
}

TuneOptions Grid(const std::string& suite, const std::string& log) {
  TuneOptions o;
  o.suite_path = suite;
  o.records_path = log;
  o.target = CpuTarget();
  o.policy = "grid";
  o.trials = 1000;
  o.progress = false;
  return o;
}

std::map<int, int> AttemptCounts(const std::string& log) {
  std::map<int, int> out;
  EXPECT_TRUE(records::ReadRecords(log, [&](const records::Record& r, uint64_t) { ++out[r.attempt()]; }).ok());
  return out;
}

TEST(RetryTest, ALogPoisonedByTimeoutsIsMeasuredAgainOnce) {
  const std::string suite = TempPath("poisoned.txt");
  WriteBytes(suite, "bump x=f32[256]\n");
  const std::string log = TempPath("poisoned.log");
  const int kCandidates = 256 + 3;
  {
    ScriptedEvaluator evaluator(TimedOut);  // what --timeout 0.001 did
    StatusOr<TuneReport> r = TuneSession(Registry::Global(), Grid(suite, log), &evaluator).Run();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->workloads[0].best_us, 0);
    EXPECT_EQ(evaluator.calls, kCandidates);
  }
  {
    ScriptedEvaluator evaluator(Measured);
    StatusOr<TuneReport> r = TuneSession(Registry::Global(), Grid(suite, log), &evaluator).Run();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(evaluator.calls, kCandidates);  // every timeout measured again
    EXPECT_EQ(r->workloads[0].resumed, 0);
    EXPECT_EQ(r->workloads[0].best_config, "a=11,b=5");
    EXPECT_DOUBLE_EQ(r->workloads[0].best_us, 10);
  }
  EXPECT_EQ(AttemptCounts(log), (std::map<int, int>{{1, kCandidates}, {2, kCandidates}}));
  {
    ScriptedEvaluator evaluator(Measured);
    StatusOr<TuneReport> r = TuneSession(Registry::Global(), Grid(suite, log), &evaluator).Run();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(evaluator.calls, 0);  // everything is known now
    EXPECT_EQ(r->workloads[0].resumed, kCandidates);
    EXPECT_DOUBLE_EQ(r->workloads[0].best_us, 10);
  }
}

TEST(RetryTest, ATimeoutSeenTwiceIsFinalAndNoRetryMakesTheFirstFinal) {
  const std::string suite = TempPath("twice.txt");
  WriteBytes(suite, "bump x=f32[256]\n");
  const std::string log = TempPath("twice.log");
  TuneOptions o = Grid(suite, log);
  o.trials = 3;
  std::vector<int> calls;
  for (int session = 0; session < 3; ++session) {
    ScriptedEvaluator evaluator(TimedOut);
    ASSERT_TRUE(TuneSession(Registry::Global(), o, &evaluator).Run().ok());
    calls.push_back(evaluator.calls);
  }
  EXPECT_EQ(calls, (std::vector<int>{3, 3, 0}));
  EXPECT_EQ(AttemptCounts(log), (std::map<int, int>{{1, 3}, {2, 3}}));

  const std::string log2 = TempPath("noretry.log");
  o.records_path = log2;
  o.no_retry = true;
  calls.clear();
  for (int session = 0; session < 2; ++session) {
    ScriptedEvaluator evaluator(TimedOut);
    ASSERT_TRUE(TuneSession(Registry::Global(), o, &evaluator).Run().ok());
    calls.push_back(evaluator.calls);
  }
  EXPECT_EQ(calls, (std::vector<int>{3, 0}));
}

}  // namespace
}  // namespace opsched
