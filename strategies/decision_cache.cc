#include "strategies/decision_cache.h"

namespace opsched {

DecisionCache::Table::Table(size_t capacity)
    : mask(capacity - 1), slots(new std::atomic<const CachedDecision*>[capacity]) {
  for (size_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
}

DecisionCache::DecisionCache() {
  tables_.push_back(std::make_unique<Table>(64));
  table_.store(tables_.back().get(), std::memory_order_release);
}

DecisionCache::~DecisionCache() = default;

const CachedDecision* DecisionCache::Find(uint64_t hash, const Workload& workload) const {
  const Table* table = table_.load(std::memory_order_acquire);
  for (size_t i = hash & table->mask;; i = (i + 1) & table->mask) {
    const CachedDecision* e = table->slots[i].load(std::memory_order_acquire);
    if (e == nullptr) return nullptr;
    if (e->hash == hash && e->workload == workload) return e;
  }
}

void DecisionCache::Place(Table& table, const CachedDecision* entry) {
  size_t i = entry->hash & table.mask;
  while (table.slots[i].load(std::memory_order_relaxed) != nullptr) i = (i + 1) & table.mask;
  table.slots[i].store(entry, std::memory_order_release);
}

const CachedDecision* DecisionCache::Insert(std::unique_ptr<CachedDecision> entry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const CachedDecision* present = Find(entry->hash, entry->workload)) return present;
  Table* table = tables_.back().get();
  if (2 * (entries_.size() + 1) > table->mask + 1) {
    // Grow: fill a table twice as large completely before publishing it.
    auto bigger = std::make_unique<Table>(2 * (table->mask + 1));
    for (const auto& e : entries_) Place(*bigger, e.get());
    table = bigger.get();
    tables_.push_back(std::move(bigger));
  }
  const CachedDecision* added = entry.get();
  entries_.push_back(std::move(entry));
  Place(*table, added);
  table_.store(table, std::memory_order_release);
  return added;
}

size_t DecisionCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace opsched
