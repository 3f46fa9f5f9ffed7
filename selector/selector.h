// Selector: the learned choice for workloads never tuned. Trained from records
// (`opsched records train`, selector/train.h) and loaded by the Runtime, it predicts the
// time of every legal (implementation, config) candidate of a workload, so that the
// dispatcher can take the best without measuring or compiling anything at call time.
// It also says how far a workload lies from what it was trained on, so the dispatcher
// knows when not to trust it (then the better of the rules and the vendor's heuristic
// decides).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/status.h"
#include "core/target.h"
#include "core/workload.h"
#include "selector/booster.h"
#include "selector/candidate_encoding.h"
#include "selector/selector_model.pb.h"
#include "registry/op_def.h"
#include "registry/registry.h"

namespace opsched {

class Selector {
 public:
  // Loads a model file; errors name the file and what is wrong with it.
  static StatusOr<std::unique_ptr<Selector>> Load(const std::string& path);
  static StatusOr<std::unique_ptr<Selector>> FromProto(const selector::SelectorModelProto& model);

  // OK when this model may serve `target`: trained on its kind and arch, and on its very
  // fingerprint or its platform with other vendor library versions (see OtherLibraries),
  // unless transfer is allowed (the rules records follow).
  Status Serves(const Target& target, bool allow_transfer) const;
  // Which vendor libraries the model's measurements of `target`'s platform ran with other
  // versions of: neither when it was trained on the target itself; nullopt when it was
  // trained on neither the target nor its platform. The dispatcher then ranks only the
  // candidates that call none of those (records::Database::SetLibraryUse's rule).
  std::optional<LibraryUse> OtherLibraries(const Target& target) const;
  bool HasOp(std::string_view op) const;
  bool KnowsImplementation(std::string_view op, std::string_view implementation) const;

  // The predicted slowdown of each candidate of `canonical` on `target` over the
  // workload's best (1 = as fast as the best): what ranks candidates. NaN for a
  // candidate whose implementation the model never saw. Errors when the model has no
  // model of the op or `registry` does not have the op. The registry's implementations
  // give the candidates' launches (Implementation::MainLaunch).
  StatusOr<std::vector<double>> Rank(const Registry& registry, const Workload& canonical, const Target& target,
                                     const std::vector<Candidate>& candidates) const;
  // The predicted microseconds of each candidate (NaN as above).
  StatusOr<std::vector<double>> Time(const Registry& registry, const Workload& canonical, const Target& target,
                                     const std::vector<Candidate>& candidates) const;
  // Both at once, the candidates encoded once (a first decision asks both of its pool).
  struct Predictions {
    std::vector<double> slowdown;  // Rank's
    std::vector<double> us;        // Time's
  };
  StatusOr<Predictions> RankAndTime(const Registry& registry, const Workload& canonical, const Target& target,
                                    const std::vector<Candidate>& candidates) const;

  // The training workloads of the op nearest to `canonical`: distance is the root of the
  // sum of squared differences of their ModelFeatures, each scaled by its spread over the
  // training set, over the number of features that vary in the training set.
  struct Neighbour {
    std::string workload;
    double distance = 0;
    double best_us = 0;
    std::vector<std::string> top;  // its fastest candidates (CandidateKey), fastest first
    std::vector<double> top_slowdown;  // theirs over its best
  };
  std::vector<Neighbour> Nearest(const OpDef& op, const Workload& canonical, int k) const;

  // "selector model: 3 ops, 41,233 records of cuda/sm_90 (NVIDIA H100 80GB HBM3)".
  std::string Describe() const;
  const selector::SelectorModelProto& info() const { return info_; }

 private:
  struct OpEntry {
    selector::OpModel model;  // without the booster bytes
    CandidateEncoding encoding;
    std::unique_ptr<Booster> ranker;
    std::unique_ptr<Booster> timer;
    int varying = 0;  // workload features not constant over the training workloads
  };
  // The op's model and the rows of the candidates it can encode, with their indices.
  struct Encoded {
    const OpEntry* entry = nullptr;
    std::vector<float> rows;
    std::vector<size_t> known;
  };
  // Errors when the model has no model of the op or `registry` does not have the op.
  StatusOr<Encoded> EncodeCandidates(const Registry& registry, const Workload& canonical, const Target& target,
                                     const std::vector<Candidate>& candidates) const;
  // `booster`'s prediction (exp of its log) of each encoded candidate, NaN for the others.
  static StatusOr<std::vector<double>> Predict(const Booster& booster, const Encoded& encoded, size_t candidates);
  const OpEntry* Find(std::string_view op) const;
  std::vector<double> Features(const OpDef& op, const OpEntry& e, const Workload& canonical) const;

  selector::SelectorModelProto info_;  // without the op models
  std::vector<OpEntry> ops_;
};

}  // namespace opsched
