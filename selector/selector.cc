#include "selector/selector.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/format.h"
#include "selector/model_file.h"

namespace opsched {

StatusOr<std::unique_ptr<Selector>> Selector::Load(const std::string& path) {
  OPSCHED_ASSIGN_OR_RETURN(selector::SelectorModelProto model, selector::ReadModel(path));
  StatusOr<std::unique_ptr<Selector>> selector = FromProto(model);
  if (!selector.ok()) return Annotate(selector.status(), path);
  return selector;
}

StatusOr<std::unique_ptr<Selector>> Selector::FromProto(const selector::SelectorModelProto& model) {
  auto s = std::unique_ptr<Selector>(new Selector());
  s->info_ = model;
  s->info_.clear_ops();
  if (model.target_kind().empty() || model.arch().empty()) {
    return absl::InvalidArgumentError("selector model names no target kind or arch");
  }
  for (const selector::OpModel& m : model.ops()) {
    OpEntry e;
    e.model = m;
    e.model.clear_booster();
    e.model.clear_time_booster();
    e.model.clear_forest();
    e.model.clear_time_forest();
    e.encoding = CandidateEncoding::FromProto(m);
    if (static_cast<size_t>(m.columns()) != e.encoding.columns() ||
        m.feature_mean_size() != m.workload_width() || m.feature_scale_size() != m.workload_width()) {
      return absl::DataLossError(fmt::format("selector model of {} is inconsistent ({} columns, encoding has {})",
                                             m.op(), m.columns(), e.encoding.columns()));
    }
    // Features that vary over the training workloads: the distance is averaged over
    // these, so that columns constant for the op (padding, attributes it never varied)
    // do not dilute a large step in the few that matter. A constant feature still adds
    // its difference (in units of 1) when a workload departs from it.
    for (int i = 0; i < m.workload_width(); ++i) {
      bool varies = false;
      for (int j = 1; j < m.workloads_size() && !varies; ++j) {
        varies = i < m.workloads(j).features_size() && i < m.workloads(0).features_size() &&
                 m.workloads(j).features(i) != m.workloads(0).features(i);
      }
      e.varying += varies;
    }
    e.ranker = std::make_unique<Booster>(Booster::Params{.threads = 1});
    e.timer = std::make_unique<Booster>(Booster::Params{.threads = 1});
    const std::string where = fmt::format("selector model of {}", m.op());
    // Files since format 2 carry the trees alone, laid out for prediction and checked
    // against XGBoost when trained. Older files carry XGBoost's model, and its trees where
    // trained after them (checked here, and used: XGBoost's own predictor costs several
    // times more a first decision); without them they predict through XGBoost.
    for (auto [bytes, forest, booster] : {std::tuple{&m.booster(), &m.forest(), e.ranker.get()},
                                          std::tuple{&m.time_booster(), &m.time_forest(), e.timer.get()}}) {
      if (bytes->empty() && forest->roots_size() == 0) {
        return absl::DataLossError(fmt::format("{} has no trees (neither their layout nor XGBoost's model)", where));
      }
      if (!bytes->empty()) OPSCHED_RETURN_IF_ERROR(Annotate(booster->Load(*bytes, e.encoding.columns()), where));
      if (forest->roots_size() == 0) continue;
      StatusOr<Forest> f = Forest::FromProto(*forest);
      if (!f.ok()) return Annotate(f.status(), where);
      if (f->columns_needed() > e.encoding.columns()) {
        return absl::DataLossError(fmt::format("{}: the trees split on feature {}, the rows have {} columns", where,
                                               f->columns_needed() - 1, e.encoding.columns()));
      }
      OPSCHED_RETURN_IF_ERROR(Annotate(bytes->empty() ? booster->LoadForest(*std::move(f), e.encoding.columns())
                                                      : booster->UseForest(*std::move(f)),
                                       where));
    }
    s->ops_.push_back(std::move(e));
  }
  return s;
}

Status Selector::Serves(const Target& target, bool allow_transfer) const {
  if (target.arch_key() != info_.arch()) {
    return absl::FailedPreconditionError(
        fmt::format("the selector model was trained on {}, the target is {} (models never cross arches)", info_.arch(),
                    target.arch_key()));
  }
  if (!OtherLibraries(target).has_value() && !allow_transfer) {
    return absl::FailedPreconditionError(fmt::format(
        "the selector model was trained on other {} devices or library versions ({}); allow transferred records to "
        "use it",
        info_.arch(), fmt::join(info_.devices(), ", ")));
  }
  return absl::OkStatus();
}

std::optional<LibraryUse> Selector::OtherLibraries(const Target& target) const {
  const uint64_t fp = target.fingerprint();
  if (std::find(info_.fingerprints().begin(), info_.fingerprints().end(), fp) != info_.fingerprints().end()) {
    return LibraryUse{.cublas = false, .cudnn = false};
  }
  // The training target of this platform whose libraries differ least (cuBLAS counts for
  // cuDNN's users too: only a cuDNN version apart is the common case, PyTorch's).
  const uint64_t platform = target.platform_fingerprint();
  std::optional<LibraryUse> best;
  for (const selector::TrainingTarget& t : info_.training_targets()) {
    if (t.platform() == 0 || t.platform() != platform) continue;
    const LibraryUse other =
        DifferingLibraries(t.cublas_version(), t.cudnn_version(), target.cublas_version, target.cudnn_version);
    if (!best || int(other.cublas) + int(other.cudnn) < int(best->cublas) + int(best->cudnn)) best = other;
  }
  return best;
}

const Selector::OpEntry* Selector::Find(std::string_view op) const {
  for (const OpEntry& e : ops_) {
    if (e.model.op() == op) return &e;
  }
  return nullptr;
}

bool Selector::HasOp(std::string_view op) const { return Find(op) != nullptr; }

bool Selector::KnowsImplementation(std::string_view op, std::string_view implementation) const {
  const OpEntry* e = Find(op);
  return e != nullptr && e->encoding.Knows(implementation);
}

std::vector<double> Selector::Features(const OpDef& op, const OpEntry& e, const Workload& canonical) const {
  std::vector<double> f = op.ModelFeatures(canonical);
  f.resize(static_cast<size_t>(e.model.workload_width()), 0.0);
  return f;
}

StatusOr<std::vector<double>> Selector::Rank(const Registry& registry, const Workload& canonical, const Target& target,
                                             const std::vector<Candidate>& candidates) const {
  OPSCHED_ASSIGN_OR_RETURN(const Encoded encoded, EncodeCandidates(registry, canonical, target, candidates));
  return Predict(*encoded.entry->ranker, encoded, candidates.size());
}

StatusOr<std::vector<double>> Selector::Time(const Registry& registry, const Workload& canonical, const Target& target,
                                             const std::vector<Candidate>& candidates) const {
  OPSCHED_ASSIGN_OR_RETURN(const Encoded encoded, EncodeCandidates(registry, canonical, target, candidates));
  return Predict(*encoded.entry->timer, encoded, candidates.size());
}

StatusOr<Selector::Predictions> Selector::RankAndTime(const Registry& registry, const Workload& canonical,
                                                      const Target& target,
                                                      const std::vector<Candidate>& candidates) const {
  OPSCHED_ASSIGN_OR_RETURN(const Encoded encoded, EncodeCandidates(registry, canonical, target, candidates));
  Predictions p;
  OPSCHED_ASSIGN_OR_RETURN(p.slowdown, Predict(*encoded.entry->ranker, encoded, candidates.size()));
  OPSCHED_ASSIGN_OR_RETURN(p.us, Predict(*encoded.entry->timer, encoded, candidates.size()));
  return p;
}

StatusOr<Selector::Encoded> Selector::EncodeCandidates(const Registry& registry, const Workload& canonical,
                                                       const Target& target,
                                                       const std::vector<Candidate>& candidates) const {
  const OpEntry* entry = Find(canonical.op());
  if (entry == nullptr) {
    return absl::NotFoundError(fmt::format("the selector model has no model of {}", canonical.op()));
  }
  const OpEntry& e = *entry;
  const OpDef* op = registry.FindOp(canonical.op());
  if (op == nullptr) return absl::NotFoundError(fmt::format("the registry has no op {}", canonical.op()));
  const std::vector<double> wf = Features(*op, e, canonical);
  const size_t columns = e.encoding.columns();
  Encoded out;
  out.entry = entry;
  out.rows.resize(candidates.size() * columns);
  out.known.reserve(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    float* row = out.rows.data() + out.known.size() * columns;
    std::optional<LaunchShape> launch;
    if (e.encoding.launch_features()) {
      const Implementation* impl = registry.FindImplementation(candidates[i].implementation);
      if (impl != nullptr) launch = impl->MainLaunch(canonical, candidates[i].config, target);
    }
    if (e.encoding.Encode(wf, target.sm_count, target.l2_bytes, candidates[i], launch, row)) out.known.push_back(i);
  }
  return out;
}

StatusOr<std::vector<double>> Selector::Predict(const Booster& booster, const Encoded& encoded, size_t candidates) {
  std::vector<double> us(candidates, std::nan(""));
  if (encoded.known.empty()) return us;
  std::vector<float> out(encoded.known.size());
  OPSCHED_RETURN_IF_ERROR(booster.PredictDense(encoded.rows.data(), encoded.known.size(), out.data()));
  for (size_t j = 0; j < encoded.known.size(); ++j) us[encoded.known[j]] = std::exp(static_cast<double>(out[j]));
  return us;
}

std::vector<Selector::Neighbour> Selector::Nearest(const OpDef& op, const Workload& canonical, int k) const {
  std::vector<Neighbour> out;
  const OpEntry* e = Find(canonical.op());
  if (e == nullptr) return out;
  const std::vector<double> wf = Features(op, *e, canonical);
  const int width = e->model.workload_width();
  for (const selector::TrainingWorkload& t : e->model.workloads()) {
    double sum = 0;
    for (int i = 0; i < width && i < t.features_size(); ++i) {
      const double d = (wf[i] - t.features(i)) / e->model.feature_scale(i);
      sum += d * d;
    }
    out.push_back(Neighbour{t.key(), std::sqrt(sum / std::max(e->varying, 1)), t.best_us(),
                            std::vector<std::string>(t.top().begin(), t.top().end()),
                            std::vector<double>(t.top_slowdown().begin(), t.top_slowdown().end())});
  }
  const size_t keep = std::min<size_t>(out.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(out.begin(), out.begin() + keep, out.end(),
                    [](const Neighbour& a, const Neighbour& b) { return a.distance < b.distance; });
  out.resize(keep);
  return out;
}

std::string Selector::Describe() const {
  int64_t records = 0;
  std::vector<std::string> ops;
  for (const OpEntry& e : ops_) {
    records += e.model.records();
    ops.push_back(e.model.op());
  }
  return fmt::format("selector model: {} ops ({}), {} records of {} ({})", ops_.size(), fmt::join(ops, ", "), records,
                     info_.arch(), fmt::join(info_.devices(), ", "));
}

}  // namespace opsched
