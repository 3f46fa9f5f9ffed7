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

}  // namespace
}  // namespace opsched
