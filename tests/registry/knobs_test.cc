// Knobs<T>: one declaration gives the space, the parsing and the default config.
#include "registry/knobs.h"

#include <gtest/gtest.h>

#include <string>

namespace opsched {
namespace {

struct TileKnobs {
  int block = 256;
  int64_t items = 4;
  bool pairs = true;
  std::string order = "rows";
};

Knobs<TileKnobs> Declared() {
  Knobs<TileKnobs> knobs;
  knobs.Int("block", &TileKnobs::block, {64, 128, 256, 512})
      .Int("items", &TileKnobs::items, {1, 2, 4, 8})
      .Int("pairs", &TileKnobs::pairs, {0, 1})
      .Word("order", &TileKnobs::order, {"rows", "columns"})
      .Constrain("block * items <= 1024", [](const TileKnobs& k) { return k.block * k.items <= 1024; });
  return knobs;
}

TEST(KnobsTest, TheSpaceHasTheDomainsTheDefaultsAndTheTypedConstraints) {
  const ConfigSpace space = Declared().Space();
  ASSERT_EQ(space.knobs().size(), 4u);
  EXPECT_EQ(space.CartesianSize(), 4 * 4 * 2 * 2);
  for (const KnobDomain& k : space.knobs()) ASSERT_TRUE(k.preferred.has_value()) << k.name;
  // block * items <= 1024 removes (512, 4), (512, 8), (256, 8) for each pairs and order.
  EXPECT_EQ(space.Enumerate().size(), size_t(4 * 4 * 2 * 2 - 3 * 4));
  const Status broken = space.Check(*ParseConfig("block=512,items=8,order=rows,pairs=1"));
  EXPECT_NE(std::string(broken.message()).find("block * items <= 1024"), std::string::npos) << broken;
  EXPECT_EQ(space.Default()->ToString(), "block=256,items=4,order=rows,pairs=1");
}

TEST(KnobsTest, ParsingGivesTypedValuesAndTakesTheDefaultsOfKnobsLeftOut) {
  const Knobs<TileKnobs> knobs = Declared();
  const StatusOr<TileKnobs> all = knobs.Parse(*ParseConfig("block=64,items=8,order=columns,pairs=0"));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->block, 64);
  EXPECT_EQ(all->items, 8);
  EXPECT_FALSE(all->pairs);
  EXPECT_EQ(all->order, "columns");

  const StatusOr<TileKnobs> some = knobs.Parse(*ParseConfig("items=2"));
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->block, 256);
  EXPECT_EQ(some->items, 2);
  EXPECT_TRUE(some->pairs);
  EXPECT_EQ(some->order, "rows");
}

TEST(KnobsTest, ParsingRefusesUnknownKnobsWrongTypesAndOutOfRangeValues) {
  const Knobs<TileKnobs> knobs = Declared();
  const auto refused = [&](const std::string& text, const std::string& says) {
    const StatusOr<TileKnobs> parsed = knobs.Parse(*ParseConfig(text));
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(std::string(parsed.status().message()).find(says), std::string::npos) << parsed.status();
  };
  refused("block=256,threads=4", "knob 'threads'; the knobs are: block, items, pairs, order");
  refused("block=wide", "block=wide takes an integer");
  refused("order=3", "order=3 takes a word");
  refused("pairs=2", "pairs=2 is a flag");
  refused("block=4294967296", "block=4294967296 is out of range");
}

TEST(KnobsTest, ARequiredKnobMustBeSetAndIsNotPreferred) {
  struct AlgoKnobs {
    std::string algo;
    int streams = 1;
  };
  Knobs<AlgoKnobs> knobs;
  knobs.Word("algo", &AlgoKnobs::algo, {"gemm", "fft"}, KnobPresence::kRequired)
      .Int("streams", &AlgoKnobs::streams, {1, 2});
  const StatusOr<AlgoKnobs> missing = knobs.Parse(*ParseConfig("streams=2"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("lacks knob 'algo'"), std::string::npos);
  const StatusOr<AlgoKnobs> set = knobs.Parse(*ParseConfig("algo=fft"));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->algo, "fft");
  EXPECT_EQ(set->streams, 1);
  const ConfigSpace space = knobs.Space();
  EXPECT_FALSE(space.knobs()[0].preferred.has_value());
  EXPECT_EQ(space.Default()->ToString(), "algo=gemm,streams=1");
}

TEST(KnobsTest, DefaultsOutsideTheWorkloadsDomainBecomeTheClosestLegalConfig) {
  TileKnobs defaults;
  defaults.block = 1024;  // this workload's domain stops at 512
  Knobs<TileKnobs> knobs(defaults);
  knobs.Int("block", &TileKnobs::block, {64, 128, 256, 512}).Int("items", &TileKnobs::items, {1, 2});
  EXPECT_EQ(knobs.Space().Default()->ToString(), "block=512,items=2");
}

TEST(KnobsTest, EveryEnumeratedConfigRoundTripsThroughTheStruct) {
  const Knobs<TileKnobs> knobs = Declared();
  for (const Config& c : knobs.Space().Enumerate()) {
    const StatusOr<TileKnobs> parsed = knobs.Parse(c);
    ASSERT_TRUE(parsed.ok()) << c.ToString() << ": " << parsed.status();
    EXPECT_EQ(knobs.ToConfig(*parsed), c);
  }
  EXPECT_EQ(knobs.ToConfig(knobs.defaults()).ToString(), "block=256,items=4,order=rows,pairs=1");
}

}  // namespace
}  // namespace opsched
