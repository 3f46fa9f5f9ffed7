// The learned selector end to end on the CPU: records of the test op "scale" are fitted,
// the dispatcher serves an untuned shape by prediction (provenance predicted, with the
// runner-up and the nearest training workloads in explain), falls back to the rule far
// from the training data, and a model file that is corrupt, of another version or of
// another arch is refused with a clear error while the Runtime goes on serving. The
// holdout study (opsched study --holdout) judges the chain offline.
#include <cmath>
#include <memory>

#include <gtest/gtest.h>

#include "core/format.h"
#include "opsched/runtime.h"
#include "selector/model_file.h"
#include "selector/selector.h"
#include "selector/train.h"
#include "strategies/dispatcher.h"
#include "strategies/neighbour_blend.h"
#include "tests/records/record_factory.h"
#include "tests/strategies/test_op.h"
#include "tests/test_files.h"
#include "tests/test_util.h"
#include "tuner/holdout.h"

namespace opsched {
namespace {

using records::testing::MakeRecord;
using namespace opsched::testing;  // TempPath, WriteBytes

std::string Line(int64_t n) { return fmt::format("scale x=f32[{}] factor=2.0", n); }

// A made-up machine on which the blocked implementation with the smallest block wins for
// every n >= 4096 (the op's rule picks block=1024 there), and the loop only for small n.
double Us(int64_t n, const std::string& impl, int knob) {
  const double x = static_cast<double>(n);
  if (impl == "scale_cpu_loop") return 1 + x / 1000 * (1 + 0.1 * (4 - knob));
  const double per = knob == 64 ? 1.0 : knob == 256 ? 1.4 : 1.9;
  return 3 + x / 4000 * per;
}

class SelectorTest : public ::testing::Test {
 protected:
  SelectorTest() {
    testing::RegisterScaleOp(&registry_, &runs_);
    // Training workloads: n = 2^12 .. 2^20, every candidate measured.
    for (int e = 12; e <= 20; ++e) AddAll(int64_t{1} << e);
  }
  // Records of every candidate of n, or of one, in db (db_ when null).
  void AddAll(int64_t n, records::Database* db = nullptr) {
    for (int u : {1, 2, 4}) Add(n, "scale_cpu_loop", u, db);
    for (int b : {64, 256, 1024}) Add(n, "scale_cpu_blocked", b, db);
  }
  void Add(int64_t n, const std::string& impl, int knob, records::Database* db = nullptr) {
    const std::string config = impl == "scale_cpu_loop" ? fmt::format("unroll={}", knob) : fmt::format("block={}", knob);
    OPSCHED_ASSERT_OK((db ? db : &db_)->Add(MakeRecord(Line(n), cpu_, impl, config, Us(n, impl, knob))));
  }
  selector::SelectorModelProto Train(TrainOptions options = {}, const records::Database* db = nullptr) {
    options.target_kind = "cpu";
    options.booster = {.rounds = 80, .max_depth = 4, .eta = 0.3, .threads = 1, .seed = 1};
    StatusOr<selector::SelectorModelProto> model = TrainSelector(registry_, {db ? db : &db_}, options);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *model : selector::SelectorModelProto();
  }
  std::unique_ptr<Selector> Load(const selector::SelectorModelProto& proto) {
    StatusOr<std::unique_ptr<Selector>> s = Selector::FromProto(proto);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  Workload W(int64_t n) { return *registry_.ParseCanonical(Line(n)); }

  Registry registry_;
  testing::ScaleRuns runs_;
  records::Database db_;
  const Target cpu_ = CpuTarget();
};

TEST_F(SelectorTest, UntunedShapeIsServedByPrediction) {
  std::unique_ptr<Selector> model = Load(Train());
  ASSERT_NE(model, nullptr);
  OPSCHED_EXPECT_OK(model->Serves(cpu_, false));
  records::Database none;
  Dispatcher d(registry_, cpu_, &none, DispatchOptions{}, model.get());
  // 24576 lies between two training workloads and was never measured.
  StatusOr<const CachedDecision*> got = d.Decide(W(24576));
  ASSERT_TRUE(got.ok()) << got.status();
  const Decision& decision = (*got)->decision;
  EXPECT_EQ(decision.provenance, Provenance::kPredicted) << decision.reason;
  EXPECT_EQ(decision.implementation->name(), "scale_cpu_blocked");
  EXPECT_EQ(decision.config.ToString(), "block=64");
  // The predicted time is near the made-up truth (within a factor 1.5).
  const double truth = Us(24576, "scale_cpu_blocked", 64);
  EXPECT_GT(decision.predicted_us, truth / 1.5);
  EXPECT_LT(decision.predicted_us, truth * 1.5);
  // The rule would have taken block=1024: the prediction beats it.
  StatusOr<Decision> rule = d.Heuristic(W(24576));
  ASSERT_TRUE(rule.ok());
  EXPECT_EQ(rule->config.ToString(), "block=1024");

  // Cached: the same entry, no second prediction.
  StatusOr<const CachedDecision*> again = d.Decide(W(24576));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *got);

  // explain: the predicted time, the runner-up and the nearest training workloads.
  StatusOr<Explanation> e = d.Explain(W(24576));
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string text = e->ToString();
  EXPECT_NE(text.find("predicted"), std::string::npos) << text;
  EXPECT_NE(text.find("runner-up: scale_cpu_blocked block=256"), std::string::npos) << text;
  EXPECT_NE(text.find("training workload at distance"), std::string::npos) << text;
  EXPECT_NE(text.find(Line(16384)), std::string::npos) << text;
}

TEST_F(SelectorTest, FarFromTheTrainingDataTheRuleDecides) {
  std::unique_ptr<Selector> model = Load(Train());
  ASSERT_NE(model, nullptr);
  Dispatcher d(registry_, cpu_, nullptr, DispatchOptions{}, model.get());
  // 2^30 elements: ten octaves beyond the largest training workload.
  StatusOr<Explanation> e = d.Explain(W(int64_t{1} << 30));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << e->ToString();
  EXPECT_NE(e->ToString().find("not trusted"), std::string::npos) << e->ToString();
  // A wider trust radius lets the model decide.
  Dispatcher wide(registry_, cpu_, nullptr, DispatchOptions{.model_max_distance = 100}, model.get());
  StatusOr<const CachedDecision*> got = wide.Decide(W(int64_t{1} << 30));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->decision.provenance, Provenance::kPredicted);
  // Switched off, the model is never asked.
  Dispatcher off(registry_, cpu_, nullptr, DispatchOptions{.use_model = false}, model.get());
  got = off.Decide(W(24576));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->decision.provenance, Provenance::kHeuristic);
}

// A training workload none of whose fastest candidates can run here (another layout's
// kernels, in conv2d) says nothing about which candidate wins here: it does not make the
// model trusted; the nearest one with a candidate legal here must be within the distance.
TEST_F(SelectorTest, ANeighbourWithNoCandidateLegalHereDoesNotMakeTheModelTrusted) {
  // Small workloads, n = 2^4 .. 2^10, where the loop wins, every candidate measured; and
  // 2^16 measured with the blocked implementation only. 2^16 + 1 is no multiple of 64:
  // the blocked implementation does not apply there.
  records::Database db;
  for (int e = 4; e <= 10; ++e) AddAll(int64_t{1} << e, &db);
  const int64_t big = int64_t{1} << 16;
  for (int b : {64, 256, 1024}) Add(big, "scale_cpu_blocked", b, &db);
  std::unique_ptr<Selector> model = Load(Train({}, &db));
  ASSERT_NE(model, nullptr);
  const std::vector<Selector::Neighbour> near = model->Nearest(*registry_.FindOp("scale"), W(big + 1), 2);
  ASSERT_EQ(near.size(), 2u);
  ASSERT_EQ(near[0].workload, Line(big));
  ASSERT_LT(near[0].distance, 0.01);
  ASSERT_GT(near[1].distance, 1.0);
  Dispatcher d(registry_, cpu_, nullptr, DispatchOptions{}, model.get());
  StatusOr<Explanation> e = d.Explain(W(big + 1));
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string text = e->ToString();
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << text;
  EXPECT_EQ(e->decision.implementation->name(), "scale_cpu_loop") << text;
  EXPECT_NE(text.find("not trusted: the nearest training workload with a candidate legal here is at distance"),
            std::string::npos)
      << text;
  // Where that neighbour's candidates are legal (2^16 + 64, never measured), its distance
  // counts: the pick is not refused for distance (the loop-measured neighbours contest
  // the blocked pick instead).
  StatusOr<Explanation> legal = d.Explain(W(big + 64));
  ASSERT_TRUE(legal.ok()) << legal.status();
  EXPECT_EQ(legal->ToString().find("candidate legal here is at distance"), std::string::npos) << legal->ToString();
  EXPECT_NE(legal->ToString().find("[predicted] scale_cpu_blocked"), std::string::npos) << legal->ToString();
}

// A rule may say where its implementation fits at all (the scatter slice kernels: dense
// updates): a prediction outside it is contested, and the floor decides.
// A training workload where a candidate cannot run (its config is outside the space
// there) measured nothing about it: it does not stand in with its slowest kept candidate,
// as it does for a candidate that runs there but was not among its fastest.
TEST_F(SelectorTest, ANeighbourWhereACandidateCannotRunSaysNothingAboutIt) {
  // 12544 = 256 x 49: block=1024 does not divide it; 16384: every block does.
  Selector::Neighbour odd{.workload = Line(12544), .distance = 0.0,
                          .top = {"scale_cpu_blocked block=64", "scale_cpu_blocked block=256"},
                          .top_slowdown = {1.0, 3.0}};
  Selector::Neighbour even{.workload = Line(16384), .distance = 0.0,
                           .top = {"scale_cpu_blocked block=64", "scale_cpu_blocked block=256"},
                           .top_slowdown = {1.0, 2.0}};
  const std::vector<Candidate> candidates = {{"scale_cpu_blocked", Config().Set("block", int64_t(1024))},
                                             {"scale_cpu_blocked", Config().Set("block", int64_t(256))},
                                             {"scale_cpu_loop", Config().Set("unroll", int64_t(2))}};
  const std::vector<std::vector<char>> runs = RunsAtNeighbours(registry_, cpu_, {odd, even}, candidates);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (std::vector<char>{0, 1, 1}));
  EXPECT_EQ(runs[1], (std::vector<char>{1, 1, 1}));

  // Alone, the odd workload leaves block=1024 at the model's slowdown; the loop (it runs
  // there, not among the fastest) gets its slowest kept, 3.0: sqrt(1 * 3).
  std::vector<double> slowdowns = {1.0, 1.0, 1.0};
  BlendWithNeighbours({odd}, candidates, RunsAtNeighbours(registry_, cpu_, {odd}, candidates), &slowdowns);
  EXPECT_DOUBLE_EQ(slowdowns[0], 1.0);
  EXPECT_DOUBLE_EQ(slowdowns[1], std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(slowdowns[2], std::sqrt(3.0));
  // With both (equally near), block=1024 hears only from the even one: sqrt(1 * 2).
  slowdowns = {1.0, 1.0, 1.0};
  BlendWithNeighbours({odd, even}, candidates, runs, &slowdowns);
  EXPECT_DOUBLE_EQ(slowdowns[0], std::sqrt(2.0));
  EXPECT_NEAR(slowdowns[1], std::sqrt(std::sqrt(6.0)), 1e-12);
}

TEST_F(SelectorTest, APickWhereTheRulesSayItDoesNotFitIsContested) {
  std::unique_ptr<Selector> model = Load(Train());
  ASSERT_NE(model, nullptr);
  Dispatcher d(registry_, cpu_, nullptr, DispatchOptions{}, model.get());
  StatusOr<const CachedDecision*> got = d.Decide(W(24576));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*got)->decision.provenance, Provenance::kPredicted);
  ASSERT_EQ((*got)->decision.config.ToString(), "block=64");

  Registry fits;
  testing::ScaleRuns runs;
  testing::RegisterScaleOp(&fits, &runs, "blocks of 256 or more",
                           [](const Workload&, const Target&, const Config& c) { return c.GetInt("block", 0) >= 256; });
  Dispatcher confined(fits, cpu_, nullptr, DispatchOptions{}, model.get());
  StatusOr<Explanation> e = confined.Explain(W(24576));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << e->ToString();
  EXPECT_EQ(e->decision.config.ToString(), "block=1024") << e->ToString();
  EXPECT_NE(e->ToString().find("contested: scale_cpu_blocked block=64 fits only where blocks of 256 or more"),
            std::string::npos)
      << e->ToString();
}

TEST_F(SelectorTest, APickThatANearTrainingWorkloadMeasuredSlowIsContestedAndTheFloorDecides) {
  // n = 26000, the nearest training workload of 24576: there the loop wins and every
  // blocked config takes 1.6x its time or more; everywhere else blocked block=64 wins and
  // the loop takes 2.5x or more. Whatever the model ranks first, a near neighbour
  // measured it at 1.5x its best or slower: the neighbours disagree, the floor decides.
  const int64_t odd = 26000;
  for (int u : {1, 2, 4}) {
    OPSCHED_ASSERT_OK(db_.Add(MakeRecord(Line(odd), cpu_, "scale_cpu_loop", fmt::format("unroll={}", u), 14.0 - u)));
  }
  for (int b : {64, 256, 1024}) {
    OPSCHED_ASSERT_OK(db_.Add(MakeRecord(Line(odd), cpu_, "scale_cpu_blocked", fmt::format("block={}", b), 16.0 + b / 64)));
  }
  std::unique_ptr<Selector> model = Load(Train());
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->Nearest(*registry_.FindOp("scale"), W(24576), 1).front().workload, Line(odd));
  Dispatcher d(registry_, cpu_, nullptr, DispatchOptions{}, model.get());
  StatusOr<Explanation> e = d.Explain(W(24576));
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string text = e->ToString();
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << text;
  EXPECT_EQ(e->decision.config.ToString(), "block=1024") << text;
  EXPECT_NE(text.find("contested: "), std::string::npos) << text;
  EXPECT_NE(text.find(Line(odd)), std::string::npos) << text;
  // Nor does a neighbour's record decide: with the records at hand, the floor still does.
  Dispatcher with_records(registry_, cpu_, &db_, DispatchOptions{}, model.get());
  StatusOr<const CachedDecision*> got = with_records.Decide(W(24576));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->decision.provenance, Provenance::kHeuristic) << (*got)->decision.reason;
  // Without the odd workload the same shape is predicted (UntunedShapeIsServedByPrediction).
}

// Records tuned after the model was fitted speak too: where the nearest tuned workload
// that measured the model's pick ran it at 1.5x its best or slower, the pick is contested
// and the floor decides; where it ran it near its best, the prediction stands.
TEST_F(SelectorTest, APickThatTheNearestTunedWorkloadMeasuredSlowIsContestedByTheRecords) {
  std::unique_ptr<Selector> model = Load(Train());  // never saw n = 26000
  ASSERT_NE(model, nullptr);
  const int64_t odd = 26000;
  // A machine on which the loop wins at n = 26000 and blocked block=64 takes 2.1x its time.
  records::Database newer;
  for (int u : {1, 2, 4}) {
    OPSCHED_ASSERT_OK(newer.Add(MakeRecord(Line(odd), cpu_, "scale_cpu_loop", fmt::format("unroll={}", u), 9.0 - u)));
  }
  for (int b : {64, 256, 1024}) {
    OPSCHED_ASSERT_OK(
        newer.Add(MakeRecord(Line(odd), cpu_, "scale_cpu_blocked", fmt::format("block={}", b), 10.0 + b / 64)));
  }
  Dispatcher d(registry_, cpu_, &newer, DispatchOptions{}, model.get());
  StatusOr<Explanation> e = d.Explain(W(24576));
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string text = e->ToString();
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << text;
  EXPECT_EQ(e->decision.config.ToString(), "block=1024") << text;
  EXPECT_NE(text.find("contested by the records: the tuned workload '" + Line(odd) +
                      "' (distance 0.08) ran it in 11.00 us, 2.20x its best"),
            std::string::npos)
      << text;

  // The same workload measured block=64 at 1.2x its best: the prediction stands.
  records::Database near_best;
  OPSCHED_ASSERT_OK(near_best.Add(MakeRecord(Line(odd), cpu_, "scale_cpu_loop", "unroll=4", 10.0)));
  OPSCHED_ASSERT_OK(near_best.Add(MakeRecord(Line(odd), cpu_, "scale_cpu_blocked", "block=64", 12.0)));
  Dispatcher stands(registry_, cpu_, &near_best, DispatchOptions{}, model.get());
  StatusOr<const CachedDecision*> got = stands.Decide(W(24576));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->decision.provenance, Provenance::kPredicted) << (*got)->decision.reason;
  EXPECT_EQ((*got)->decision.config.ToString(), "block=64") << (*got)->decision.reason;

  // Records that never measured the pick say nothing: predicted as without them.
  records::Database other;
  OPSCHED_ASSERT_OK(other.Add(MakeRecord(Line(odd), cpu_, "scale_cpu_loop", "unroll=4", 1.0)));
  Dispatcher unmeasured(registry_, cpu_, &other, DispatchOptions{}, model.get());
  StatusOr<const CachedDecision*> still = unmeasured.Decide(W(24576));
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ((*still)->decision.provenance, Provenance::kPredicted) << (*still)->decision.reason;
}

// No nearest training workload's fastest is legal here, so the model ranks every legal
// candidate; but it never saw the implementation the rule would run, so it cannot say its
// pick beats the floor: the floor decides. (The model here learned the loop only, from
// configs outside today's space, unroll=3 and 5; the rule takes blocked block=1024.)
TEST_F(SelectorTest, AModelThatNeverSawTheRulesImplementationDoesNotOverruleIt) {
  records::Database db;
  for (int e = 12; e <= 20; ++e) {
    const int64_t n = int64_t{1} << e;
    for (int u : {3, 5}) {
      OPSCHED_ASSERT_OK(db.Add(MakeRecord(Line(n), cpu_, "scale_cpu_loop", fmt::format("unroll={}", u), Us(n, "scale_cpu_loop", u))));
    }
  }
  std::unique_ptr<Selector> model = Load(Train({}, &db));
  ASSERT_NE(model, nullptr);
  ASSERT_TRUE(model->KnowsImplementation("scale", "scale_cpu_loop"));
  ASSERT_FALSE(model->KnowsImplementation("scale", "scale_cpu_blocked"));
  Dispatcher d(registry_, cpu_, nullptr, DispatchOptions{}, model.get());
  StatusOr<Explanation> e = d.Explain(W(24576));
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string text = e->ToString();
  EXPECT_NE(text.find("ranked all"), std::string::npos) << text;  // the whole space: no neighbour's fastest legal
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << text;
  EXPECT_EQ(e->decision.implementation->name(), "scale_cpu_blocked") << text;
  EXPECT_EQ(e->decision.config.ToString(), "block=1024") << text;
  EXPECT_NE(text.find("not trusted: the model never saw scale_cpu_blocked, which the rule would run"),
            std::string::npos)
      << text;
  // Below 4096 the rule runs the loop, which the model knows: it ranks the loop's configs.
  StatusOr<Explanation> small = d.Explain(W(3000));
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->decision.provenance, Provenance::kPredicted) << small->ToString();
}

// The ranking model and the time model are trained on the same records; where they
// disagree (the time model predicts the ranking model's pick at 1.5x the pool's fastest
// or slower) neither is trusted and the floor decides. Made here by a time model of a
// machine on which the loop is fast and every blocked config ten times slower.
TEST_F(SelectorTest, APickTheTimeModelPredictsSlowIsContestedAndTheFloorDecides) {
  const selector::SelectorModelProto agreeing = Train();
  records::Database inverted;
  for (int e = 12; e <= 20; ++e) {
    const int64_t n = int64_t{1} << e;
    for (int u : {1, 2, 4}) {
      OPSCHED_ASSERT_OK(
          inverted.Add(MakeRecord(Line(n), cpu_, "scale_cpu_loop", fmt::format("unroll={}", u), 1.0 + u)));
    }
    for (int b : {64, 256, 1024}) {
      OPSCHED_ASSERT_OK(
          inverted.Add(MakeRecord(Line(n), cpu_, "scale_cpu_blocked", fmt::format("block={}", b), 50.0 + b / 64)));
    }
  }
  selector::SelectorModelProto disagreeing = agreeing;
  const selector::SelectorModelProto other = Train({}, &inverted);
  ASSERT_EQ(other.ops(0).columns(), agreeing.ops(0).columns());
  disagreeing.mutable_ops(0)->set_time_booster(other.ops(0).time_booster());
  *disagreeing.mutable_ops(0)->mutable_time_forest() = other.ops(0).time_forest();

  std::unique_ptr<Selector> good = Load(agreeing);
  ASSERT_NE(good, nullptr);
  Dispatcher served(registry_, cpu_, nullptr, DispatchOptions{}, good.get());
  StatusOr<const CachedDecision*> got = served.Decide(W(24576));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->decision.provenance, Provenance::kPredicted) << (*got)->decision.reason;

  std::unique_ptr<Selector> bad = Load(disagreeing);
  ASSERT_NE(bad, nullptr);
  Dispatcher d(registry_, cpu_, nullptr, DispatchOptions{}, bad.get());
  StatusOr<Explanation> e = d.Explain(W(24576));
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string text = e->ToString();
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << text;
  EXPECT_EQ(e->decision.config.ToString(), "block=1024") << text;
  EXPECT_NE(text.find("contested: the time model predicts it at"), std::string::npos) << text;
  EXPECT_NE(text.find("the fastest of the pool (scale_cpu_loop"), std::string::npos) << text;

  // With a vendor's pick (here the loop, as a study records it offline), the floor weighs
  // the rule's pick against it by the ranking: the ranking model prefers the rule's blocked
  // config and decides; that the time model predicts it at 1.5x the loop or slower is said.
  const Workload w = W(24576);
  OfflineSpace space;
  for (int u : {1, 2, 4}) {
    space.candidates.push_back(Candidate{"scale_cpu_loop", *ParseConfig(fmt::format("unroll={}", u))});
  }
  for (int b : {64, 256, 1024}) {
    space.candidates.push_back(Candidate{"scale_cpu_blocked", *ParseConfig(fmt::format("block={}", b))});
  }
  space.rule = Candidate{"scale_cpu_blocked", *ParseConfig("block=1024")};
  space.vendor = Candidate{"scale_cpu_loop", *ParseConfig("unroll=2")};
  DispatchOptions offline;
  offline.offline = [&](const Workload& c) { return c == w ? &space : nullptr; };
  Dispatcher floor(registry_, cpu_, nullptr, offline, bad.get());
  StatusOr<Explanation> f = floor.Explain(w);
  ASSERT_TRUE(f.ok()) << f.status();
  const std::string floor_text = f->ToString();
  EXPECT_EQ(f->decision.provenance, Provenance::kHeuristic) << floor_text;
  EXPECT_EQ(f->decision.config.ToString(), "block=1024") << floor_text;
  EXPECT_NE(floor_text.find("the models disagree: ranked first, predicted slower; the ranking decides"),
            std::string::npos)
      << floor_text;
}

// Where the rule and the vendor's heuristic pick differently and the model's pick is
// contested (here: a rule says block=64 does not fit), the nearest tuned workload that
// measured both (the rule's pick there and the vendor's candidate) decides when one was
// 1.1x faster there, whatever the model ranks; closer than that, or without such records,
// the model's ranking does, as before.
TEST_F(SelectorTest, TheNearestTunedWorkloadThatMeasuredBothFloorPicksDecidesBetweenThem) {
  std::unique_ptr<Selector> model = Load(Train());  // blocked block=64 wins for large n
  ASSERT_NE(model, nullptr);
  Registry fits;
  testing::ScaleRuns runs;
  testing::RegisterScaleOp(&fits, &runs, "blocks of 256 or more",
                           [](const Workload&, const Target&, const Config& c) { return c.GetInt("block", 0) >= 256; });
  const Workload w = W(24576);  // the nearest tuned workload: n = 32768 (distance 0.42)
  OfflineSpace space;
  for (int u : {1, 2, 4}) space.candidates.push_back(Candidate{"scale_cpu_loop", *ParseConfig(fmt::format("unroll={}", u))});
  for (int b : {64, 256, 1024}) {
    space.candidates.push_back(Candidate{"scale_cpu_blocked", *ParseConfig(fmt::format("block={}", b))});
  }
  space.rule = Candidate{"scale_cpu_blocked", *ParseConfig("block=1024")};
  space.vendor = Candidate{"scale_cpu_loop", *ParseConfig("unroll=2")};
  DispatchOptions offline;
  offline.offline = [&](const Workload& c) { return c == w ? &space : nullptr; };
  auto decide = [&](const records::Database* db) {
    Dispatcher d(fits, cpu_, db, offline, model.get());
    StatusOr<Explanation> e = d.Explain(w);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? *e : Explanation{};
  };
  // db_: the loop is 2.2x slower than block=1024 at n = 32768.
  const Explanation rule = decide(&db_);
  EXPECT_NE(rule.ToString().find("contested: scale_cpu_blocked block=64 fits only where"), std::string::npos)
      << rule.ToString();
  EXPECT_EQ(rule.decision.provenance, Provenance::kHeuristic) << rule.ToString();
  EXPECT_EQ(rule.decision.config.ToString(), "block=1024") << rule.ToString();
  EXPECT_NE(rule.decision.reason.find("the nearest tuned workload that measured both, 'scale x=f32[32768]"),
            std::string::npos)
      << rule.decision.reason;
  EXPECT_NE(rule.decision.reason.find("ran the rule's pick (scale_cpu_blocked block=1024) in 18.56 us and the "
                                      "vendor's in 40.32 us"),
            std::string::npos)
      << rule.decision.reason;
  // A machine on which the loop was the faster there: the vendor's pick, though the model
  // (trained on db_) ranks the rule's first.
  records::Database loop_fast;
  OPSCHED_ASSERT_OK(loop_fast.Add(MakeRecord(Line(32768), cpu_, "scale_cpu_loop", "unroll=2", 9.0)));
  OPSCHED_ASSERT_OK(loop_fast.Add(MakeRecord(Line(32768), cpu_, "scale_cpu_blocked", "block=1024", 12.0)));
  const Explanation vendor = decide(&loop_fast);
  EXPECT_EQ(vendor.decision.provenance, Provenance::kVendor) << vendor.ToString();
  EXPECT_NE(vendor.decision.reason.find("in 12.00 us and the vendor's in 9.00 us"), std::string::npos)
      << vendor.decision.reason;
  // The nearest workload hidden (as a study hides a fold): the next nearest, n = 16384,
  // decides (10.78 against 20.66 us).
  DispatchOptions hiding = offline;
  hiding.hidden_workloads = {W(32768).hash()};
  Dispatcher hidden(fits, cpu_, &db_, hiding, model.get());
  StatusOr<Explanation> next = hidden.Explain(w);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_NE(next->decision.reason.find("'scale x=f32[16384] factor=2.0' (distance 0.58)"), std::string::npos)
      << next->decision.reason;
  EXPECT_NE(next->decision.reason.find("in 10.78 us and the vendor's in 20.66 us"), std::string::npos)
      << next->decision.reason;
  // Within 1.1x of each other there, where the nearest workload did not measure the
  // vendor's candidate, or without records: the model's ranking, which takes the rule's.
  records::Database close, one_sided;
  OPSCHED_ASSERT_OK(close.Add(MakeRecord(Line(32768), cpu_, "scale_cpu_loop", "unroll=2", 10.5)));
  OPSCHED_ASSERT_OK(close.Add(MakeRecord(Line(32768), cpu_, "scale_cpu_blocked", "block=1024", 10.0)));
  OPSCHED_ASSERT_OK(one_sided.Add(MakeRecord(Line(32768), cpu_, "scale_cpu_loop", "unroll=4", 9.0)));
  OPSCHED_ASSERT_OK(one_sided.Add(MakeRecord(Line(32768), cpu_, "scale_cpu_blocked", "block=1024", 12.0)));
  for (const records::Database* db : std::vector<const records::Database*>{&close, &one_sided, nullptr}) {
    const Explanation ranked = decide(db);
    EXPECT_EQ(ranked.decision.provenance, Provenance::kHeuristic) << ranked.ToString();
    EXPECT_EQ(ranked.decision.reason.find("the nearest tuned workload"), std::string::npos) << ranked.decision.reason;
    EXPECT_NE(ranked.decision.reason.find("against"), std::string::npos) << ranked.decision.reason;
  }
}

TEST_F(SelectorTest, HoldoutStudyJudgesTodaysRulesWhereTheRecordsShowTheirPick) {
  // n = 2^21: today's rule's pick (block=1024) was never measured, only block=64 and the
  // loop, so the study cannot judge it: unknown, and the reason says what the rule takes
  // (the rule's pick recorded at tuning time, unroll=1, is not what today's code serves).
  const int64_t odd = int64_t{1} << 21;
  for (int u : {1, 2, 4}) Add(odd, "scale_cpu_loop", u);
  Add(odd, "scale_cpu_blocked", 64);
  records::Record seed = MakeRecord(Line(odd), cpu_, "scale_cpu_loop", "unroll=1", Us(odd, "scale_cpu_loop", 1));
  seed.mutable_provenance()->set_search_policy("heuristic");
  OPSCHED_ASSERT_OK(db_.Add(seed));
  // Rules only: every workload n >= 4096 is decided by today's rule, blocked block=1024.
  HoldoutOptions options;
  options.dispatch.use_model = false;
  options.dispatch.use_nearest_records = false;
  StatusOr<HoldoutReport> report = RunHoldout(registry_, db_, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->entries.size(), 10u);
  double log_sum = 0, worst = 0;
  for (const HoldoutEntry& e : report->entries) {
    const int64_t n = std::stoll(e.workload.substr(e.workload.find('[') + 1));
    double best = INFINITY;
    for (int u : {1, 2, 4}) best = std::min(best, Us(n, "scale_cpu_loop", u));
    for (int b : {64, 256, 1024}) {
      if (n != odd || b == 64) best = std::min(best, Us(n, "scale_cpu_blocked", b));
    }
    EXPECT_FLOAT_EQ(e.best_us, best) << e.workload;  // times are kept as floats
    if (n == odd) {
      EXPECT_EQ(e.provenance, "none");
      EXPECT_EQ(e.served, "today's rule 'n >= 4096' takes scale_cpu_blocked block=1024, never measured for it (offline)");
      EXPECT_EQ(e.served_us, 0);
      continue;
    }
    EXPECT_EQ(e.provenance, "heuristic") << e.workload;
    const double served = Us(n, "scale_cpu_blocked", 1024);
    EXPECT_EQ(e.served, "scale_cpu_blocked block=1024") << e.workload;
    EXPECT_FLOAT_EQ(e.served_us, served) << e.workload;
    log_sum += std::log(served / best);
    worst = std::max(worst, served / best);
  }
  EXPECT_EQ(report->unknown, 1);
  EXPECT_NEAR(report->geomean, std::exp(log_sum / 9), 1e-6);
  EXPECT_NEAR(report->worst, worst, 1e-6);
  const std::string text = report->ToString();
  const std::string last = fmt::format("holdout: 10 workloads, geomean served/best {:.3f}, worst {:.3f}, unknown 1\n",
                                       report->geomean, report->worst);
  ASSERT_GE(text.size(), last.size());
  EXPECT_EQ(text.substr(text.size() - last.size()), last) << text;

  // With the model (one per fold, trained without it), block=64 is served where it is
  // the best, which the rule is not.
  options.dispatch = DispatchOptions{};
  options.folds = 5;
  report = RunHoldout(registry_, db_, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->entries.size(), 10u);
  EXPECT_LT(report->geomean, std::exp(log_sum / 9));
}

TEST_F(SelectorTest, RecordsComeBeforeThePrediction) {
  std::unique_ptr<Selector> model = Load(Train());
  ASSERT_NE(model, nullptr);
  OPSCHED_ASSERT_OK(db_.Add(MakeRecord(Line(24576), cpu_, "scale_cpu_loop", "unroll=4", 2.0)));
  Dispatcher d(registry_, cpu_, &db_, DispatchOptions{}, model.get());
  StatusOr<const CachedDecision*> got = d.Decide(W(24576));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->decision.provenance, Provenance::kExactRecord);
  EXPECT_EQ((*got)->decision.config.ToString(), "unroll=4");
}

TEST_F(SelectorTest, ExcludedWorkloadsAreNotTrainedOn) {
  TrainOptions options;
  options.exclude.insert(W(65536).hash());
  std::unique_ptr<Selector> model = Load(Train(options));
  ASSERT_NE(model, nullptr);
  const OpDef* op = registry_.FindOp("scale");
  for (const Selector::Neighbour& n : model->Nearest(*op, W(65536), 20)) {
    EXPECT_NE(n.workload, Line(65536));
    EXPECT_GT(n.distance, 0);
  }
  EXPECT_EQ(model->Nearest(*op, W(65536), 20).size(), 8u);
}

TEST_F(SelectorTest, ModelsNeverCrossArchesAndDevicesOnlyWithTransfer) {
  std::unique_ptr<Selector> model = Load(Train());
  ASSERT_NE(model, nullptr);
  Target other_arch = cpu_;
  other_arch.arch = "riscv64";
  const Status arch = model->Serves(other_arch, true);
  EXPECT_FALSE(arch.ok());
  EXPECT_NE(arch.message().find("never cross arches"), std::string::npos) << arch;
  Target other_device = cpu_;
  other_device.device_name = "Another CPU of the same arch";
  EXPECT_FALSE(model->Serves(other_device, false).ok());
  OPSCHED_EXPECT_OK(model->Serves(other_device, true));
}

// A process with another cuDNN than the training records' (PyTorch's) is the same
// platform: the model serves it for the candidates that call no library whose version
// differs, and leaves a workload to the floor where a neighbour's fastest calls one.
TEST_F(SelectorTest, AModelServesAnotherCudnnOfItsPlatformForCandidatesThatDoNotCallIt) {
  std::unique_ptr<Selector> model = Load(Train());
  ASSERT_NE(model, nullptr);
  Target torch_process = cpu_;
  torch_process.cudnn_version = 91900;
  OPSCHED_EXPECT_OK(model->Serves(torch_process, false));
  ASSERT_TRUE(model->OtherLibraries(torch_process).has_value());
  EXPECT_TRUE(model->OtherLibraries(torch_process)->cudnn);
  EXPECT_FALSE(model->OtherLibraries(torch_process)->cublas);
  EXPECT_FALSE(model->OtherLibraries(cpu_)->cudnn);  // its own target: nothing differs
  Target other_driver = torch_process;
  other_driver.driver_version = 13010;  // another platform
  EXPECT_FALSE(model->OtherLibraries(other_driver).has_value());
  EXPECT_FALSE(model->Serves(other_driver, false).ok());

  // The scale implementations call no vendor library: predicted as on the training target.
  records::Database none;
  Dispatcher d(registry_, torch_process, &none, DispatchOptions{}, model.get());
  StatusOr<const CachedDecision*> got = d.Decide(W(24576));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)->decision.provenance, Provenance::kPredicted) << (*got)->decision.reason;
  EXPECT_EQ((*got)->decision.config.ToString(), "block=64");

  // Were the blocked implementation a cuDNN call, its records (the fastest of every
  // neighbour) were measured with another cuDNN: the floor decides.
  runs_.blocked_calls_cudnn = true;
  Dispatcher vendor(registry_, torch_process, &none, DispatchOptions{}, model.get());
  StatusOr<Explanation> e = vendor.Explain(W(24576));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->decision.provenance, Provenance::kHeuristic) << e->ToString();
  EXPECT_NE(e->ToString().find("calls a vendor library the model measured with other versions"), std::string::npos)
      << e->ToString();
  // On the training target itself the model still decides.
  Dispatcher own(registry_, cpu_, &none, DispatchOptions{}, model.get());
  StatusOr<const CachedDecision*> same = own.Decide(W(24576));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)->decision.provenance, Provenance::kPredicted);
  runs_.blocked_calls_cudnn = false;
}

// A format-1 file (XGBoost's models beside the trees, as every file before format 2)
// still loads and predicts as the format-2 file of the same training.
TEST_F(SelectorTest, AFormatOneFileStillLoads) {
  TrainOptions keep;
  keep.keep_xgboost = true;
  std::string older = selector::SerializeModel(Train(keep));
  older[8] = 1;  // the format version (the checksum covers the payload only)
  const std::string path = TempPath("format1.opsm");
  WriteBytes(path, older);
  StatusOr<std::unique_ptr<Selector>> loaded = Selector::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::unique_ptr<Selector> compact = Load(Train());
  const std::vector<Candidate> c = {Candidate{"scale_cpu_loop", *ParseConfig("unroll=2")},
                                    Candidate{"scale_cpu_blocked", *ParseConfig("block=64")}};
  StatusOr<Selector::Predictions> a = (*loaded)->RankAndTime(registry_, W(24576), cpu_, c);
  StatusOr<Selector::Predictions> b = compact->RankAndTime(registry_, W(24576), cpu_, c);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->slowdown, b->slowdown);
  EXPECT_EQ(a->us, b->us);
}

TEST_F(SelectorTest, ModelFileRoundTripsAndPredictsTheSame) {
  const selector::SelectorModelProto proto = Train();
  const std::string path = TempPath("model.opsm");
  OPSCHED_ASSERT_OK(selector::WriteModel(path, proto));
  StatusOr<std::unique_ptr<Selector>> loaded = Selector::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::unique_ptr<Selector> direct = Load(proto);
  const std::vector<Candidate> c = {Candidate{"scale_cpu_loop", *ParseConfig("unroll=2")},
                                    Candidate{"scale_cpu_blocked", *ParseConfig("block=64")}};
  StatusOr<std::vector<double>> a = (*loaded)->Time(registry_, W(24576), cpu_, c);
  StatusOr<std::vector<double>> b = direct->Time(registry_, W(24576), cpu_, c);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE((*loaded)->Describe().find("1 ops (scale), 54 records"), std::string::npos) << (*loaded)->Describe();
}

// A trained model carries its trees laid out for prediction, and by default nothing else
// (checked against XGBoost when trained); one that keeps XGBoost's model too predicts the
// same, as does a file with XGBoost's model alone (older ones), one whose trees disagree
// with its boosters is refused, and one with no trees at all.
TEST_F(SelectorTest, ATrainedModelPredictsThroughItsForestAsThroughXgboost) {
  const selector::SelectorModelProto compact = Train();
  ASSERT_EQ(compact.ops_size(), 1);
  EXPECT_GT(compact.ops(0).forest().roots_size(), 0);
  EXPECT_EQ(compact.ops(0).time_forest().roots_size(), 80);
  EXPECT_TRUE(compact.ops(0).booster().empty());
  EXPECT_TRUE(compact.ops(0).time_booster().empty());
  TrainOptions keep;
  keep.keep_xgboost = true;
  const selector::SelectorModelProto proto = Train(keep);
  ASSERT_EQ(proto.ops_size(), 1);
  EXPECT_FALSE(proto.ops(0).booster().empty());
  EXPECT_FALSE(proto.ops(0).time_booster().empty());
  EXPECT_EQ(proto.ops(0).forest().SerializeAsString(), compact.ops(0).forest().SerializeAsString());
  EXPECT_LT(compact.ByteSizeLong() * 2, proto.ByteSizeLong());
  selector::SelectorModelProto older = proto;
  older.mutable_ops(0)->clear_forest();
  older.mutable_ops(0)->clear_time_forest();
  std::unique_ptr<Selector> alone = Load(compact), with = Load(proto), without = Load(older);
  ASSERT_TRUE(alone && with && without);
  std::vector<Candidate> c;
  for (int u : {1, 2, 4}) c.push_back(Candidate{"scale_cpu_loop", *ParseConfig(fmt::format("unroll={}", u))});
  for (int b : {64, 256, 1024}) c.push_back(Candidate{"scale_cpu_blocked", *ParseConfig(fmt::format("block={}", b))});
  for (int64_t n : {1000, 24576, 3 << 20}) {
    StatusOr<Selector::Predictions> a = with->RankAndTime(registry_, W(n), cpu_, c);
    StatusOr<Selector::Predictions> b = without->RankAndTime(registry_, W(n), cpu_, c);
    StatusOr<Selector::Predictions> t = alone->RankAndTime(registry_, W(n), cpu_, c);
    ASSERT_TRUE(a.ok() && b.ok() && t.ok());
    EXPECT_EQ(a->slowdown, b->slowdown) << n;
    EXPECT_EQ(a->us, b->us) << n;
    EXPECT_EQ(t->slowdown, b->slowdown) << n;
    EXPECT_EQ(t->us, b->us) << n;
  }
  // Neither trees nor XGBoost's model of the time: refused, by name.
  selector::SelectorModelProto bare = compact;
  bare.mutable_ops(0)->clear_time_forest();
  StatusOr<std::unique_ptr<Selector>> none = Selector::FromProto(bare);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("selector model of scale has no trees"), std::string::npos) << none.status();
  // Trees that split on columns the encoding does not have.
  selector::SelectorModelProto wide = compact;
  selector::ForestProto* trees = wide.mutable_ops(0)->mutable_forest();
  int split = 0;
  while (split < trees->features_size() && (trees->features(split) & 0x40000000u) == 0) ++split;
  ASSERT_LT(split, trees->features_size());
  trees->set_features(split, (trees->features(split) & 0xc0000000u) | 4096u);
  StatusOr<std::unique_ptr<Selector>> too_wide = Selector::FromProto(wide);
  ASSERT_FALSE(too_wide.ok());
  EXPECT_NE(too_wide.status().message().find("the trees split on feature 4096"), std::string::npos)
      << too_wide.status();
  // The time model's trees given to the ranking model: the file is refused, by name.
  selector::SelectorModelProto swapped = proto;
  *swapped.mutable_ops(0)->mutable_forest() = proto.ops(0).time_forest();
  StatusOr<std::unique_ptr<Selector>> refused = Selector::FromProto(swapped);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("selector model of scale"), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("where XGBoost predicts"), std::string::npos) << refused.status();
  // A forest whose nodes loop.
  selector::SelectorModelProto looped = proto;
  looped.mutable_ops(0)->mutable_time_forest()->set_lefts(0, 0);
  StatusOr<std::unique_ptr<Selector>> loops = Selector::FromProto(looped);
  ASSERT_FALSE(loops.ok());
  EXPECT_NE(loops.status().message().find("not after it"), std::string::npos) << loops.status();
}

// Every way a model file can be wrong: a clear error naming the file, never a crash.
TEST_F(SelectorTest, DamagedModelFilesAreRefusedClearly) {
  const std::string good = selector::SerializeModel(Train());
  struct Case {
    std::string name;
    std::string bytes;
    std::string expect;
  };
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5a;
  std::string newer = good;
  newer[8] = static_cast<char>(selector::kModelFormatVersion + 1);
  const std::vector<Case> cases = {
      {"empty", "", "not an opsched selector model"},
      {"records log", "OPSCHEDR" + good.substr(8), "not an opsched selector model"},
      {"truncated header", good.substr(0, 12), "truncated"},
      {"truncated payload", good.substr(0, good.size() - 100), "truncated"},
      {"flipped byte", flipped, "checksum"},
      {"newer version", newer, "version"},
  };
  for (const Case& c : cases) {
    const std::string path = TempPath("bad_" + std::to_string(&c - cases.data()) + ".opsm");
    WriteBytes(path, c.bytes);
    StatusOr<std::unique_ptr<Selector>> s = Selector::Load(path);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_NE(s.status().message().find(c.expect), std::string::npos) << c.name << ": " << s.status();
    EXPECT_NE(s.status().message().find(path), std::string::npos) << c.name << ": " << s.status();
  }
  StatusOr<std::unique_ptr<Selector>> missing = Selector::Load(TempPath("no_such_model.opsm"));
  EXPECT_FALSE(missing.ok());
}

TEST_F(SelectorTest, RuntimeFallsBackWhenTheModelCannotBeUsed) {
  const std::string corrupt = TempPath("corrupt.opsm");
  std::string bytes = selector::SerializeModel(Train());
  bytes[bytes.size() - 7] ^= 0x01;
  WriteBytes(corrupt, bytes);
  selector::SelectorModelProto riscv = Train();
  riscv.set_arch("cpu/riscv64");
  const std::string other_arch = TempPath("riscv.opsm");
  OPSCHED_ASSERT_OK(selector::WriteModel(other_arch, riscv));
  const std::string good = TempPath("good.opsm");
  OPSCHED_ASSERT_OK(selector::WriteModel(good, Train()));

  for (const std::string& path : {corrupt, other_arch, good}) {
    RuntimeOptions o;
    o.target = cpu_;
    o.registry = &registry_;
    o.model_file = path;
    StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Create(std::move(o));
    ASSERT_TRUE(rt.ok()) << rt.status();
    StatusOr<Decision> d = (*rt)->Decide(W(24576));
    ASSERT_TRUE(d.ok()) << d.status();
    if (path == good) {
      OPSCHED_EXPECT_OK((*rt)->model_status());
      EXPECT_EQ(d->provenance, Provenance::kPredicted);
    } else {
      EXPECT_FALSE((*rt)->model_status().ok()) << path;
      EXPECT_EQ((*rt)->selector(), nullptr);
      EXPECT_EQ(d->provenance, Provenance::kHeuristic) << path;
    }
    // Serving goes on: the op runs and computes the right thing.
    std::vector<float> x = {1, 2, 3}, y(3, -1);
    const Tensor tx{TensorDesc::Contiguous(DType::kF32, {3}), x.data(), Device::Cpu()};
    const Tensor ty{TensorDesc::Contiguous(DType::kF32, {3}), y.data(), Device::Cpu()};
    OPSCHED_EXPECT_OK((*rt)->Run(*registry_.ParseCanonical(Line(3)), {tx, ty}, Stream::Wrap(Device::Cpu(), nullptr)));
    EXPECT_EQ(y, (std::vector<float>{2, 4, 6}));
  }
}

}  // namespace
}  // namespace opsched

namespace opsched {
namespace {

// The launch columns (Implementation::MainLaunch) come after the knobs: log2 of the blocks
// and of the threads, the waves over the device, the last wave's share and the useful
// share; missing (NaN) for a candidate without a launch; absent from an encoding of a
// model trained before them.
TEST(CandidateEncodingTest, LaunchColumnsFollowTheKnobsAndAreMissingWithoutALaunch) {
  CandidateEncoding with(2, true), without(2, false);
  const Candidate c{"k", *ParseConfig("rows=4")};
  with.Learn(c);
  without.Learn(c);
  ASSERT_EQ(with.columns(), 2 + CandidateEncoding::kTargetColumns + 1 + 1 + CandidateEncoding::kLaunchColumns);
  EXPECT_EQ(without.columns(), with.columns() - CandidateEncoding::kLaunchColumns);
  // 256 threads: 8 resident blocks a multiprocessor; 1.25 waves over 132 of them.
  const LaunchShape launch{.blocks = 1320, .threads = 256, .shared_bytes = 0, .useful = 0.875};
  std::vector<float> row(with.columns());
  ASSERT_TRUE(with.Encode({1.0, 2.0}, 132, 1 << 20, c, launch, row.data()));
  const size_t at = with.columns() - CandidateEncoding::kLaunchColumns;
  EXPECT_EQ(row[at - 1], 4.0f);  // the knob
  EXPECT_FLOAT_EQ(row[at], static_cast<float>(std::log2(1321.0)));
  EXPECT_FLOAT_EQ(row[at + 1], static_cast<float>(std::log2(1.0 + 1320.0 * 256)));
  EXPECT_FLOAT_EQ(row[at + 2], 1.25f);
  EXPECT_FLOAT_EQ(row[at + 3], 0.625f);
  EXPECT_FLOAT_EQ(row[at + 4], 0.875f);
  ASSERT_TRUE(with.Encode({1.0, 2.0}, 132, 1 << 20, c, std::nullopt, row.data()));
  for (size_t i = at; i < row.size(); ++i) EXPECT_TRUE(std::isnan(row[i])) << i;
  // The model file keeps whether its rows have the columns.
  selector::OpModel m;
  with.ToProto(&m);
  EXPECT_TRUE(m.launch_features());
  EXPECT_EQ(CandidateEncoding::FromProto(m).columns(), with.columns());
  selector::OpModel old;
  without.ToProto(&old);
  EXPECT_FALSE(old.launch_features());
  EXPECT_EQ(CandidateEncoding::FromProto(old).columns(), without.columns());
}

TEST(LaunchShapeTest, ResidentBlocksWavesAndTheLastWavesShare) {
  EXPECT_EQ(ResidentBlocksPerSm(LaunchShape{.blocks = 1, .threads = 128}), 16);
  EXPECT_EQ(ResidentBlocksPerSm(LaunchShape{.blocks = 1, .threads = 32}), 32);  // the block limit
  EXPECT_EQ(ResidentBlocksPerSm(LaunchShape{.blocks = 1, .threads = 128, .shared_bytes = 48 * 1024}), 4);
  EXPECT_EQ(ResidentBlocksPerSm(LaunchShape{.blocks = 1, .threads = 1024, .shared_bytes = 300 * 1024}), 1);
  const LaunchShape third{.blocks = 132 * 16 / 3, .threads = 128};
  EXPECT_NEAR(Waves(third, 132), 1.0 / 3, 1e-3);
  EXPECT_NEAR(WaveEfficiency(third, 132), 1.0 / 3, 1e-3);
  const LaunchShape two{.blocks = 2 * 132 * 16, .threads = 128};
  EXPECT_DOUBLE_EQ(WaveEfficiency(two, 132), 1.0);
  EXPECT_DOUBLE_EQ(WaveEfficiency(LaunchShape{}, 132), 0.0);
}

}  // namespace
}  // namespace opsched
