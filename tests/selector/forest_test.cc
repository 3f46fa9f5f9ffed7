// Forest (selector/forest.h) against the XGBoost booster it is laid out from: equal
// predictions to the bit on fresh random rows with missing features and on rows at the
// splits, through the proto and back; and every way a forest can be wrong refused.
#include "selector/forest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "selector/booster.h"
#include "tests/test_util.h"

namespace opsched {
namespace {

constexpr size_t kColumns = 6;

// Rows of kColumns features, a sixth of them missing, and a target that depends on
// several of them (so that the trees split on every column, missing ones included).
std::vector<std::vector<float>> Rows(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4, 4);
  std::vector<std::vector<float>> x(n, std::vector<float>(kColumns));
  for (auto& row : x) {
    for (float& v : row) v = rng() % 6 == 0 ? std::nanf("") : std::round(u(rng) * 8) / 8;
  }
  return x;
}

float Target(const std::vector<float>& row) {
  const auto at = [&](size_t i) { return std::isnan(row[i]) ? -1.0f : row[i]; };
  return at(0) * at(1) + (at(2) > 0.5f ? 3 : 0) + std::sin(at(3)) - 0.5f * at(4) + (std::isnan(row[5]) ? 2 : 0);
}

std::unique_ptr<Booster> Trained(uint32_t seed, int rounds = 40) {
  const std::vector<std::vector<float>> x = Rows(2000, seed);
  std::vector<float> y;
  for (const auto& row : x) y.push_back(Target(row));
  auto b = std::make_unique<Booster>(Booster::Params{.rounds = rounds, .max_depth = 7, .eta = 0.2, .threads = 1});
  EXPECT_TRUE(b->Fit(x, y).ok());
  return b;
}

std::vector<float> Flat(const std::vector<std::vector<float>>& x) {
  std::vector<float> flat;
  for (const auto& row : x) flat.insert(flat.end(), row.begin(), row.end());
  return flat;
}

void ExpectBitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u) << "of " << a.size() << " predictions";
}

TEST(ForestTest, PredictsAsXgboostToTheBit) {
  std::unique_ptr<Booster> booster = Trained(1);
  StatusOr<Forest> forest = booster->LayOut();
  ASSERT_TRUE(forest.ok()) << forest.status();
  EXPECT_EQ(forest->trees(), 40u);
  // Fresh rows (another seed), every block size's tail included (1 to 37 rows).
  for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{37}, size_t{500}}) {
    const std::vector<std::vector<float>> x = Rows(n, 100 + n);
    StatusOr<std::vector<float>> theirs = booster->Predict(x);
    ASSERT_TRUE(theirs.ok());
    std::vector<float> ours(n, std::nanf(""));
    OPSCHED_ASSERT_OK(forest->Predict(Flat(x).data(), n, kColumns, ours.data()));
    ExpectBitEqual(ours, *theirs);
  }
  // Rows at the thresholds, just below them and missing: the comparison's edge.
  const std::vector<float> probe = forest->ProbeRows(kColumns, 300);
  const size_t rows = probe.size() / kColumns;
  EXPECT_GT(rows, 90u);
  std::vector<std::vector<float>> x(rows);
  for (size_t r = 0; r < rows; ++r) x[r].assign(probe.begin() + r * kColumns, probe.begin() + (r + 1) * kColumns);
  StatusOr<std::vector<float>> theirs = booster->Predict(x);
  ASSERT_TRUE(theirs.ok());
  std::vector<float> ours(rows);
  OPSCHED_ASSERT_OK(forest->Predict(probe.data(), rows, kColumns, ours.data()));
  ExpectBitEqual(ours, *theirs);
}

TEST(ForestTest, RoundTripsThroughItsProtoAndServesALoadedBooster) {
  std::unique_ptr<Booster> trained = Trained(2);
  StatusOr<Forest> forest = trained->LayOut();
  ASSERT_TRUE(forest.ok());
  StatusOr<Forest> back = Forest::FromProto(forest->ToProto());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->nodes(), forest->nodes());

  StatusOr<std::string> bytes = trained->Save();
  ASSERT_TRUE(bytes.ok());
  Booster loaded(Booster::Params{.threads = 1});
  OPSCHED_ASSERT_OK(loaded.Load(*bytes, kColumns));
  const std::vector<std::vector<float>> x = Rows(64, 7);
  std::vector<float> before(x.size()), after(x.size());
  OPSCHED_ASSERT_OK(loaded.PredictDense(Flat(x).data(), x.size(), before.data()));
  EXPECT_FALSE(loaded.has_forest());
  OPSCHED_ASSERT_OK(loaded.UseForest(*std::move(back)));
  EXPECT_TRUE(loaded.has_forest());
  OPSCHED_ASSERT_OK(loaded.PredictDense(Flat(x).data(), x.size(), after.data()));
  ExpectBitEqual(after, before);
}

TEST(ForestTest, AForestOfAnotherBoosterIsRefused) {
  std::unique_ptr<Booster> a = Trained(3), b = Trained(4);
  StatusOr<Forest> other = b->LayOut();
  ASSERT_TRUE(other.ok());
  const Status used = a->UseForest(*std::move(other));
  EXPECT_EQ(used.code(), absl::StatusCode::kDataLoss) << used;
  EXPECT_NE(used.message().find("where XGBoost predicts"), std::string::npos) << used;
  EXPECT_FALSE(a->has_forest());
}

TEST(ForestTest, DamagedForestsAreRefusedClearly) {
  std::unique_ptr<Booster> booster = Trained(5, 3);
  StatusOr<Forest> forest = booster->LayOut();
  ASSERT_TRUE(forest.ok());
  const selector::ForestProto good = forest->ToProto();
  size_t split = 0;
  while ((good.features(split) & 0x40000000u) == 0) ++split;
  struct Case {
    std::string name;
    selector::ForestProto proto;
    std::string expect;
  };
  std::vector<Case> cases;
  cases.push_back({"no trees", good, "no tree"});
  cases.back().proto.clear_roots();
  cases.push_back({"short array", good, "differ in length"});
  cases.back().proto.mutable_lefts()->RemoveLast();
  cases.push_back({"root out of range", good, "root"});
  cases.back().proto.set_roots(1, good.values_size());
  cases.push_back({"a loop back to the split", good, "not after it"});
  cases.back().proto.set_lefts(split, static_cast<int32_t>(split));
  cases.push_back({"children past the end", good, "not after it"});
  cases.back().proto.set_lefts(split, good.values_size() - 1);
  for (const Case& c : cases) {
    StatusOr<Forest> f = Forest::FromProto(c.proto);
    ASSERT_FALSE(f.ok()) << c.name;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kDataLoss) << c.name;
    EXPECT_NE(f.status().message().find(c.expect), std::string::npos) << c.name << ": " << f.status();
  }
  // Rows narrower than the features it splits on.
  std::vector<float> row(2, 0.0f);
  float out = 0;
  EXPECT_EQ(forest->Predict(row.data(), 1, 2, &out).code(), absl::StatusCode::kFailedPrecondition);
}

// A one-split model in XGBoost's JSON form, with one piece replaced.
std::string Model(const std::string& objective = "reg:squarederror", const std::string& left = "[1, -1, -1]",
                  const std::string& split_type = "[0, 0, 0]", const std::string& parallel = "1") {
  return R"({"learner": {"learner_model_param": {"base_score": "5E-1", "num_class": "0", "num_target": "1"},
    "objective": {"name": ")" + objective + R"("},
    "gradient_booster": {"name": "gbtree", "model": {
      "gbtree_model_param": {"num_parallel_tree": ")" + parallel + R"(", "size_leaf_vector": "0"},
      "trees": [{"left_children": )" + left + R"(, "right_children": [2, -1, -1], "split_indices": [1, 0, 0],
                 "split_conditions": [0.25, -1.5, 2.0], "default_left": [0, 0, 0],
                 "split_type": )" + split_type + R"(}]}}}})";
}

TEST(ForestTest, ReadsXgboostsJsonAsXgboostPredicts) {
  StatusOr<Forest> forest = Forest::FromXgboostJson(Model());
  ASSERT_TRUE(forest.ok()) << forest.status();
  // Feature 1 below 0.25 goes left (-1.5), at it or above goes right (2.0), missing goes
  // right (default_left 0); the base score 0.5 is added.
  const float x[] = {9, 0.2f, 9, 0.25f, 9, std::nanf(""), std::nanf(""), 1e9f};
  float out[4];
  OPSCHED_ASSERT_OK(forest->Predict(x, 4, 2, out));
  EXPECT_EQ(out[0], -1.0f);
  EXPECT_EQ(out[1], 2.5f);
  EXPECT_EQ(out[2], 2.5f);
  EXPECT_EQ(out[3], 2.5f);
}

TEST(ForestTest, ModelsItCannotServeAreRefused) {
  EXPECT_EQ(Forest::FromXgboostJson("{not json").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Forest::FromXgboostJson(R"({"learner": {}})").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Forest::FromXgboostJson(Model("binary:logistic")).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Forest::FromXgboostJson(Model("reg:squarederror", "[1, -1, -1]", "[1, 0, 0]")).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Forest::FromXgboostJson(Model("reg:squarederror", "[1, -1, -1]", "[0, 0, 0]", "2")).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Forest::FromXgboostJson(Model("reg:squarederror", "[5, -1, -1]")).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(Forest::FromXgboostJson(Model("reg:squarederror", "[2, -1, -1]")).status().code(),
            absl::StatusCode::kDataLoss);  // both children the same node
  EXPECT_EQ(Forest::FromXgboostJson(Model("reg:squarederror", "[1, -1]")).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace opsched
