// Fuzz target: the baseline JSON of `opsched bench` (ParseBaseline) and the verdict
// computed against its entries.
// Properties: no crash, no undefined behaviour, no exception; an accepted baseline's
// medians can be judged (finite, above 0), and it prints and parses back the same.
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "bench/lib/baseline.h"
#include "bench/lib/verdict.h"
#include "tests/fuzz/fuzz_check.h"

FUZZ_INITIALIZE_QUIETLY()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opsched::bench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  opsched::StatusOr<Baseline> b = ParseBaseline(text, "fuzz.json");
  if (!b.ok()) return 0;
  for (const BaselineEntry& e : b->entries()) {
    FUZZ_CHECK(std::isfinite(e.median_us()) && e.median_us() > 0, "an accepted median cannot be judged");
    const MedianEstimate current = EstimateMedian({e.median_us() * 0.9, e.median_us(), e.median_us() * 1.3});
    FUZZ_CHECK(Judge(current, e.median_us(), 0.05, 0.5) != Verdict::kNew, "an accepted entry judged as new");
  }
  std::string json;
  FUZZ_CHECK(google::protobuf::util::MessageToJsonString(*b, &json).ok(), "printing an accepted baseline");
  opsched::StatusOr<Baseline> back = ParseBaseline(json, "printed.json");
  FUZZ_CHECK(back.ok() && back->entries_size() == b->entries_size(), "a printed baseline does not parse back");
  return 0;
}
