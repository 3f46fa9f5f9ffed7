// The tuned neighbours' word on a prediction (Dispatcher::TryPredicted): the model's own
// nearest training workloads contest a pick they measured slow; this asks the same of the
// records, which may be newer than the model (layers tuned after it was fitted). On the
// H200 the shipped model ranked cuDNN's pick first for a held-out f32 ResNeXt grouped 3x3
// layer at stride 2 (71 us), which the own direct kernel runs in 18; the model had never
// seen a grouped layer, the records of one tuned later had measured the same gap.
#include <cmath>
#include <string>
#include <vector>

#include "core/format.h"
#include "strategies/dispatcher.h"

namespace opsched {

std::optional<std::string> Dispatcher::ContestedByRecords(const Workload& canonical, const Candidate& pick,
                                                          double contested) const {
  for (const records::Neighbour& n : TunedNeighbours(canonical)) {
    const std::vector<const records::RecordEntry*> records = db_->ExactRecordsFor(n.workload->hash(), target_key_);
    const double pick_us = FastestMeasured(records, &pick);
    if (std::isinf(pick_us)) continue;  // not measured there: the next one may have
    const double best_us = FastestMeasured(records, nullptr);
    // The nearest that measured it speaks, one way or the other.
    if (pick_us < contested * best_us) return std::nullopt;
    return fmt::format("contested by the records: the tuned workload '{}' (distance {:.2f}) ran it in {:.2f} us, "
                       "{:.2f}x its best",
                       n.workload->ToString(), n.distance, pick_us, pick_us / best_us);
  }
  return std::nullopt;
}

}  // namespace opsched
