// The model's slowdowns tempered by what its nearest training workloads measured
// (Dispatcher::TryPredicted): each candidate's predicted slowdown is blended (geometric
// mean) with its slowdown on those workloads, weighted by closeness. Where a candidate
// was not among a workload's fastest, that workload's slowest kept one stands in (a lower
// bound), but only where the candidate can run there at all: a workload where its config
// is outside the space (two images a GEMM on a batch of one) measured nothing about it.
#pragma once

#include <vector>

#include "core/target.h"
#include "registry/registry.h"
#include "selector/candidate_encoding.h"
#include "selector/selector.h"

namespace opsched {

// [neighbour][candidate]: whether the candidate can run on that training workload (it is
// among the workload's fastest, or its implementation applies there and its config is in
// the space there). A workload whose text no longer parses counts every candidate as
// running there.
std::vector<std::vector<char>> RunsAtNeighbours(const Registry& registry, const Target& target,
                                                const std::vector<Selector::Neighbour>& near,
                                                const std::vector<Candidate>& candidates);

// Blends each known (not NaN) slowdown with the neighbours' where runs[n][i] (above).
void BlendWithNeighbours(const std::vector<Selector::Neighbour>& near, const std::vector<Candidate>& candidates,
                         const std::vector<std::vector<char>>& runs, std::vector<double>* slowdowns);

}  // namespace opsched
