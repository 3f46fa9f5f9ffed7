#include "selector/train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "core/format.h"
#include "core/version.h"
#include "records/convert.h"
#include "selector/candidate_encoding.h"

namespace opsched {
namespace {

struct Row {
  const Workload* workload;
  uint64_t fingerprint;
  Candidate candidate;
  int sm_count;
  int64_t l2_bytes;
  double log_us;
  std::optional<LaunchShape> launch;
};

struct OpData {
  std::vector<Row> rows;
  std::map<uint64_t, selector::TrainingWorkload> workloads;
  std::map<std::string, int> per_implementation;
  // Per workload: (median us, "implementation config") of its ok records.
  std::map<uint64_t, std::map<std::string, double>> times;
};

// How many of each training workload's fastest candidates the model keeps.
constexpr size_t kTopPerWorkload = 8;

std::string ArchKeyOf(const records::TargetProto& t) { return t.kind() + "/" + t.arch(); }

}  // namespace

StatusOr<selector::SelectorModelProto> TrainSelector(const Registry& registry,
                                                     const std::vector<const records::Database*>& dbs,
                                                     const TrainOptions& options, std::string* summary) {
  // The arch: the one asked for, else the one with the most ok records of the kind.
  std::string arch = options.arch;
  if (arch.empty()) {
    std::map<std::string, int> counts;
    for (const records::Database* db : dbs) {
      for (const records::RecordEntry& e : db->entries()) {
        const records::TargetProto& t = db->target(e.target);
        if (e.status == records::OK && t.kind() == options.target_kind) ++counts[ArchKeyOf(t)];
      }
    }
    int most = 0;
    for (const auto& [key, n] : counts) {
      if (n > most) {
        most = n;
        arch = key;
      }
    }
    if (arch.empty()) {
      return absl::NotFoundError(fmt::format("no ok {} records to train on", options.target_kind));
    }
  }
  selector::SelectorModelProto model;
  model.set_format_version(1);
  model.set_opsched_version(kVersion);
  model.set_target_kind(options.target_kind);
  model.set_arch(arch);
  model.set_created_unix_s(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  // The training targets by fingerprint: the record's, and as a Target (nullopt where it
  // does not convert; MainLaunch then sees an empty Target).
  std::map<uint64_t, std::pair<const records::TargetProto*, std::optional<Target>>> targets;
  std::map<std::string, OpData> ops;
  int skipped_ops = 0;
  for (const records::Database* db : dbs) {
    for (const records::RecordEntry& e : db->entries()) {
      const records::TargetProto& t = db->target(e.target);
      if (e.status != records::OK || t.kind() != options.target_kind || ArchKeyOf(t) != arch || !(e.call_us > 0)) {
        continue;
      }
      const Workload& w = db->workload(e.workload);
      if (options.exclude.count(w.hash())) continue;
      const OpDef* op = registry.FindOp(w.op());
      if (op == nullptr) {
        ++skipped_ops;
        continue;
      }
      auto [target, fresh] = targets.try_emplace(t.fingerprint(), &t, std::nullopt);
      if (fresh) {
        StatusOr<Target> converted = records::FromProto(t);
        if (converted.ok()) target->second.second = *std::move(converted);
      }
      OpData& data = ops[w.op()];
      Candidate candidate{db->implementation(e.implementation), db->config(e.config)};
      const std::string key = CandidateKey(candidate);
      std::optional<LaunchShape> launch;
      if (options.launch_features) {
        const Implementation* impl = registry.FindImplementation(candidate.implementation);
        if (impl != nullptr) launch = impl->MainLaunch(w, candidate.config, target->second.second.value_or(Target{}));
      }
      data.rows.push_back(Row{&w, t.fingerprint(), std::move(candidate), t.sm_count(), t.l2_bytes(),
                              std::log(static_cast<double>(e.call_us)), launch});
      ++data.per_implementation[db->implementation(e.implementation)];
      auto [it, inserted] = data.workloads.try_emplace(w.hash());
      selector::TrainingWorkload& tw = it->second;
      if (inserted) {
        tw.set_key(w.ToString());
        tw.set_hash(w.hash());
        for (double f : op->ModelFeatures(w)) tw.add_features(f);
        tw.set_best_us(e.call_us);
      }
      auto [t_it, t_new] = data.times[w.hash()].try_emplace(key, e.call_us);
      if (!t_new) t_it->second = std::min<double>(t_it->second, e.call_us);
      tw.set_records(tw.records() + 1);
      tw.set_best_us(std::min<double>(tw.best_us(), e.call_us));
    }
  }
  if (ops.empty()) return absl::NotFoundError(fmt::format("no ok {} records of {} to train on", options.target_kind, arch));
  for (const auto& [fp, both] : targets) {
    const auto& [t, target] = both;
    model.add_fingerprints(fp);
    model.add_devices(t->device_name());
    selector::TrainingTarget* tt = model.add_training_targets();
    tt->set_platform(target ? target->platform_fingerprint() : 0);
    tt->set_cublas_version(t->cublas_version());
    tt->set_cudnn_version(t->cudnn_version());
  }
  std::string text = fmt::format("trained on {} ({} targets)\n", arch, targets.size());
  for (auto& [name, data] : ops) {
    const OpDef& op = *registry.FindOp(name);
    size_t width = 0;
    for (const auto& [hash, tw] : data.workloads) width = std::max<size_t>(width, tw.features_size());
    CandidateEncoding encoding(width, options.launch_features);
    for (const Row& r : data.rows) encoding.Learn(r.candidate);
    selector::OpModel* m = model.add_ops();
    m->set_op(name);
    encoding.ToProto(m);
    // Spread of each feature over the training workloads, for the distance of new ones.
    std::vector<double> mean(width, 0), sq(width, 0);
    for (const auto& [hash, tw] : data.workloads) {
      for (size_t i = 0; i < width; ++i) {
        const double f = i < static_cast<size_t>(tw.features_size()) ? tw.features(i) : 0.0;
        mean[i] += f;
        sq[i] += f * f;
      }
    }
    const double n = static_cast<double>(data.workloads.size());
    for (size_t i = 0; i < width; ++i) {
      mean[i] /= n;
      const double var = std::max(0.0, sq[i] / n - mean[i] * mean[i]);
      m->add_feature_mean(mean[i]);
      m->add_feature_scale(var > 1e-12 ? std::sqrt(var) : 1.0);
    }
    for (auto& [hash, tw] : data.workloads) {
      std::vector<std::pair<double, std::string>> by_time;
      for (const auto& [key, us] : data.times[hash]) by_time.emplace_back(us, key);
      std::sort(by_time.begin(), by_time.end());
      for (size_t i = 0; i < by_time.size() && i < kTopPerWorkload; ++i) {
        tw.add_top(by_time[i].second);
        tw.add_top_slowdown(by_time[i].first / by_time[0].first);
      }
      tw.mutable_features()->Resize(static_cast<int>(width), 0.0);
      *m->add_workloads() = tw;
    }
    for (const auto& [impl, count] : data.per_implementation) {
      selector::ImplementationStats* s = m->add_implementations_seen();
      s->set_implementation(impl);
      s->set_records(count);
    }
    // Two models: one of each record's time over its workload's best (what decides: it
    // ranks the candidates of one workload, whatever its size), one of the time itself
    // (what explain reports).
    std::map<std::pair<uint64_t, uint64_t>, double> best_log;  // (workload, target) -> log best
    for (const Row& r : data.rows) {
      auto [it, inserted] = best_log.emplace(std::make_pair(r.workload->hash(), r.fingerprint), r.log_us);
      if (!inserted) it->second = std::min(it->second, r.log_us);
    }
    std::vector<std::vector<float>> x;
    std::vector<float> relative, absolute;
    x.reserve(data.rows.size());
    for (const Row& r : data.rows) {
      std::vector<float> row(encoding.columns());
      std::vector<double> wf = op.ModelFeatures(*r.workload);
      encoding.Encode(wf, r.sm_count, r.l2_bytes, r.candidate, r.launch, row.data());
      x.push_back(std::move(row));
      absolute.push_back(static_cast<float>(r.log_us));
      relative.push_back(static_cast<float>(r.log_us - best_log.at({r.workload->hash(), r.fingerprint})));
    }
    Booster ranker(options.booster), timer(options.booster);
    OPSCHED_RETURN_IF_ERROR(Annotate(ranker.Fit(x, relative), fmt::format("training the model of {}", name)));
    OPSCHED_RETURN_IF_ERROR(Annotate(timer.Fit(x, absolute), fmt::format("training the model of {}", name)));
    OPSCHED_ASSIGN_OR_RETURN(std::vector<float> fitted, ranker.Predict(x));
    double se = 0;
    for (size_t i = 0; i < relative.size(); ++i) se += (fitted[i] - relative[i]) * (fitted[i] - relative[i]);
    m->set_train_rmse(std::sqrt(se / static_cast<double>(relative.size())));
    m->set_records(static_cast<int64_t>(data.rows.size()));
    // The trees laid out for prediction, checked against XGBoost to the bit here so that
    // serving needs no XGBoost model: the file keeps them alone (a fifth of the bytes),
    // and XGBoost's own model only where asked.
    for (auto [booster, forest, bytes] : {std::tuple{&ranker, m->mutable_forest(), m->mutable_booster()},
                                          std::tuple{&timer, m->mutable_time_forest(), m->mutable_time_booster()}}) {
      OPSCHED_ASSIGN_OR_RETURN(Forest laid_out, booster->LayOut());
      *forest = laid_out.ToProto();
      OPSCHED_RETURN_IF_ERROR(
          Annotate(booster->UseForest(std::move(laid_out)), fmt::format("laying out the model of {}", name)));
      if (!options.keep_xgboost) continue;
      OPSCHED_ASSIGN_OR_RETURN(*bytes, booster->Save());
    }
    text += fmt::format("  {}: {} records of {} workloads, {} implementations, {} columns, rmse of log slowdown {:.3f}\n",
                        name, data.rows.size(), data.workloads.size(), data.per_implementation.size(),
                        encoding.columns(), m->train_rmse());
  }
  if (skipped_ops > 0) text += fmt::format("  {} records of ops this build does not have were left out\n", skipped_ops);
  if (summary != nullptr) *summary = text;
  return model;
}

}  // namespace opsched
