#include "trials/memory_ladder.hpp"

#include "report/trial_facts.hpp"

#include <limits>
#include <tuple>

namespace bfhpo::trials {
namespace {

constexpr int64_t kWhole = std::numeric_limits<int64_t>::max();

// Rungs compare by what they cut: items first, then persons, then whether
// checkpointing is off. A smaller key is cheaper in memory.
std::tuple<int64_t, int64_t, bool> cut(const models::MemoryConfig& memory) {
  return {memory.item_chunk_size.value_or(kWhole), memory.person_chunk_size.value_or(kWhole),
          !memory.gradient_checkpointing};
}

std::optional<ConfigProblem> decreasing(const std::string& field, const std::vector<int64_t>& ladder,
                                        const std::string& example) {
  for (std::size_t i = 0; i < ladder.size(); ++i)
    if (ladder[i] < 1 || (i > 0 && ladder[i] >= ladder[i - 1]))
      return ConfigProblem{field, "expected strictly decreasing whole numbers >= 1", "give e.g. " + example};
  return std::nullopt;
}

}  // namespace

std::optional<ConfigProblem> MemoryLadder::problem() const {
  if (item_chunks.empty())
    return ConfigProblem{"item_chunk_ladder", "is empty", "give at least one chunk size, e.g. [16, 8, 4, 2, 1]"};
  if (auto problem = decreasing("item_chunk_ladder", item_chunks, "[16, 8, 4, 2, 1]")) return problem;
  return decreasing("person_chunk_ladder", person_chunks, "[1024, 256, 64], or [] for none");
}

std::vector<models::MemoryConfig> MemoryLadder::rungs() const {
  std::vector<models::MemoryConfig> rungs;
  for (const int64_t chunk : item_chunks) rungs.push_back({chunk, true, std::nullopt});
  if (!item_chunks.empty())
    for (const int64_t persons : person_chunks) rungs.push_back({item_chunks.back(), true, persons});
  return rungs;
}

std::vector<models::MemoryConfig> MemoryLadder::rungs_at(const memory::StepShape& shape) const {
  std::vector<models::MemoryConfig> cutting;
  for (const auto& rung : rungs())
    if (rung.person_chunk_size ? *rung.person_chunk_size < shape.n_persons : *rung.item_chunk_size < shape.n_items)
      cutting.push_back(rung);
  return cutting;
}

std::optional<models::MemoryConfig> MemoryLadder::below(const models::MemoryConfig& current,
                                                        const memory::StepShape& shape) const {
  for (auto rung : rungs_at(shape)) {
    if (!(cut(rung) < cut(current))) continue;
    if (current.person_chunk_size && *current.person_chunk_size < rung.person_chunk_size.value_or(kWhole))
      rung.person_chunk_size = current.person_chunk_size;
    return rung;
  }
  return std::nullopt;
}

std::string describe(const models::MemoryConfig& memory) { return report::memory_in_words(models::to_json(memory)); }

}  // namespace bfhpo::trials
