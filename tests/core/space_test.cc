#include "core/space.h"

#include <gtest/gtest.h>

namespace opsched {
namespace {

// The declared defaults are the default config when legal; else the legal config
// closest to them; a knob without one takes its first value.
TEST(ConfigSpaceTest, DefaultIsTheDeclaredOneOrTheClosestLegal) {
  ConfigSpace space = ConfigSpace().AddInts("block", {64, 128, 256, 512}, 256).AddInts("items", {1, 2, 4, 8}, 4);
  StatusOr<Config> d = space.Default();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->ToString(), "block=256,items=4");
  // Not the first config in enumeration order.
  EXPECT_NE(d->ToString(), space.Enumerate(1).front().ToString());

  space.Constrain("block * items <= 512", [](const Config& c) { return c.GetInt("block", 0) * c.GetInt("items", 0) <= 512; });
  d = space.Default();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(space.Contains(*d)) << d->ToString();
  // One step from the declared defaults (either knob), not the smallest of each.
  EXPECT_TRUE(d->ToString() == "block=128,items=4" || d->ToString() == "block=256,items=2") << d->ToString();

  ConfigSpace undeclared = ConfigSpace().AddInts("unroll", {2, 4}).Add("tile", {std::string("a"), std::string("b")},
                                                                         std::string("b"));
  EXPECT_EQ(undeclared.Default()->ToString(), "tile=b,unroll=2");
  EXPECT_TRUE(ConfigSpace().Default()->empty());

  ConfigSpace empty = ConfigSpace().AddInts("x", {1, 2}).Constrain("never", [](const Config&) { return false; });
  EXPECT_FALSE(empty.Default().ok());
}

// A config that leaves out a knob with a declared default is the config with that default
// (a record written before the knob existed), for the domains and the constraints alike;
// one that leaves out a knob without a default, or sets a knob the space lacks, is not.
TEST(ConfigSpaceTest, AKnobLeftOutCountsAsItsDefault) {
  ConfigSpace space = ConfigSpace()
                          .AddInts("block", {128, 256}, 256)
                          .AddInts("columns_per_thread", {1, 2}, 2)
                          .AddInts("unroll", {2, 4})
                          .Constrain("block * columns_per_thread <= 256", [](const Config& c) {
                            return c.GetInt("block", 0) * c.GetInt("columns_per_thread", 0) <= 256;
                          });
  const auto config = [](std::string text) { return *ParseConfig(text); };
  EXPECT_TRUE(space.Contains(config("block=128,unroll=2")));
  // The default columns_per_thread=2 breaks the constraint with block=256.
  const Status broken = space.Check(config("block=256,unroll=2"));
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(std::string(broken.message()).find("block * columns_per_thread <= 256"), std::string::npos) << broken;
  EXPECT_TRUE(space.Contains(config("block=256,columns_per_thread=1,unroll=4")));
  const Status lacking = space.Check(config("block=128,columns_per_thread=1"));
  EXPECT_NE(std::string(lacking.message()).find("lacks knob 'unroll'"), std::string::npos) << lacking;
  const Status extra = space.Check(config("block=128,unroll=2,vector=4"));
  EXPECT_NE(std::string(extra.message()).find("sets knob 'vector', which the space lacks"), std::string::npos) << extra;
  EXPECT_FALSE(space.Contains(config("block=512,unroll=2")));
}

// A wanted integer the domain lacks (a rule's columns=32 where only 1..16 fit) becomes
// its nearest value, not the first one; in between two values, the nearer in steps; a
// value that cannot be placed costs the whole domain, so the other knobs decide.
TEST(ConfigSpaceTest, ClosestPlacesAnIntegerOutsideTheDomainBetweenItsNeighbours) {
  const ConfigSpace space = ConfigSpace().AddInts("columns", {1, 2, 4, 8, 16}).AddInts("threads", {128, 256, 512});
  auto closest = [&](int64_t columns, int64_t threads) {
    Config want;
    want.Set("columns", columns);
    want.Set("threads", threads);
    StatusOr<Config> c = space.Closest(want);
    return c.ok() ? c->ToString() : c.status().ToString();
  };
  EXPECT_EQ(closest(32, 256), "columns=16,threads=256");
  EXPECT_EQ(closest(1024, 1024), "columns=16,threads=512");
  EXPECT_EQ(closest(0, 64), "columns=1,threads=128");
  EXPECT_EQ(closest(8, 300), "columns=8,threads=256");  // between 256 and 512: the first of the two

  ConfigSpace named = ConfigSpace().AddInts("columns", {1, 2, 4, 8, 16}).Add("tile", {std::string("a"), std::string("b")});
  Config want;
  want.Set("columns", int64_t{12});
  want.Set("tile", std::string("zz"));
  StatusOr<Config> c = named.Closest(want);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->ToString(), "columns=8,tile=a");

  // An unsorted domain cannot place a missing value: every value is equally far.
  const ConfigSpace unsorted = ConfigSpace().AddInts("x", {8, 1, 4});
  Config x;
  x.Set("x", int64_t{2});
  EXPECT_EQ(unsorted.Closest(x)->ToString(), "x=8");
}

}  // namespace
}  // namespace opsched
