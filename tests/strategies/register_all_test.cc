// RegisterAll: explicit registration of every built-in op. This test links its libraries
// statically (linkstatic) and none of them is alwayslink: whatever reaches the registry
// got there through RegisterAll's calls, not through static initialisers.
#include "strategies/register_all.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "registry/registry.h"

namespace opsched {
namespace {

TEST(RegisterAllTest, FillsARegistryWithEveryOpItsImplementationsAndStrategies) {
  Registry registry;
  ASSERT_TRUE(RegisterAll(registry).ok());
  std::set<std::string> ops;
  for (const OpDef* op : registry.ops()) ops.insert(std::string(op->name()));
  EXPECT_EQ(ops, (std::set<std::string>{"conv2d", "conv2d_backward", "conv2d_bias_act", "pointwise", "reduce",
                                        "scatter"}));
  for (const std::string& op : ops) {
    EXPECT_NE(registry.FindStrategy(op), nullptr) << op;
    int cpu = 0;
    for (const Implementation* impl : registry.ImplementationsOf(op)) {
      cpu += impl->device_kind() == DeviceKind::kCpu;
    }
    EXPECT_GE(cpu, 1) << op << " has no CPU implementation";
  }
  EXPECT_NE(registry.FindImplementation("scatter_cpu_sequential"), nullptr);
  EXPECT_NE(registry.FindImplementation("pointwise_cpu_interpreted"), nullptr);
  EXPECT_TRUE(registry.ParseCanonical("reduce x=f32[4,8] axes=1 op=sum").ok());
}

TEST(RegisterAllTest, ASecondRegistrationIntoTheSameRegistryIsAnError) {
  Registry registry;
  ASSERT_TRUE(RegisterAll(registry).ok());
  const Status again = RegisterAll(registry);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
}

TEST(RegisterAllTest, TheGlobalRegistryIsFilledOnce) {
  EXPECT_TRUE(RegisterAll().ok());
  const size_t ops = Registry::Global().ops().size();
  EXPECT_EQ(ops, 6u);
  EXPECT_TRUE(RegisterAll().ok());  // the first outcome, not a second registration
  EXPECT_EQ(Registry::Global().ops().size(), ops);
}

}  // namespace
}  // namespace opsched
