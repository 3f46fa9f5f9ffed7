// Fuzz target: the workload text parser and everything a workload line meets before a
// kernel runs — suites (ParseSuite), canonicalisation by each op, the dispatcher's
// explanation (`opsched explain`) and a trial's memory need.
// Properties: no crash, no undefined behaviour, no exception; a suite line prints
// without control characters; the canonical line parses back to the same workload.
#include <cstdint>
#include <string>

#include "core/target.h"
#include "registry/registry.h"
#include "strategies/dispatcher.h"
#include "strategies/register_all.h"
#include "tests/fuzz/fuzz_check.h"
#include "tuner/memory_need.h"
#include "tuner/suite.h"

FUZZ_INITIALIZE_QUIETLY()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opsched;
  static const bool registered = RegisterAll().ok();
  FUZZ_CHECK(registered, "the built-in ops register");
  static const Registry& registry = Registry::Global();
  static const Dispatcher* dispatcher =
      new Dispatcher(registry, CpuTarget(), nullptr, DispatchOptions{});
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const SuiteEntry& e : ParseSuite(text, "fuzz.txt", registry)) {
    for (char c : e.text) {
      FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f, "a suite line prints a control character");
    }
    if (!e.error.ok()) continue;
    const std::string line = e.workload.ToString();
    StatusOr<Workload> back = registry.ParseCanonical(line);
    FUZZ_CHECK(back.ok(), line.c_str());
    FUZZ_CHECK(back->hash() == e.workload.hash() && back->ToString() == line, line.c_str());
    (void)dispatcher->Explain(e.workload);
    if (const OpDef* op = registry.FindOp(e.workload.op())) (void)TrialMemoryNeed(*op, e.workload);
  }
  return 0;
}
