#include "inference/many_data_sets.hpp"

#include "common/user_error.hpp"

#include <chrono>

namespace bfhpo::inference {

void infer_many(TrainedModel& model, DataSetSources& sources, const InferenceOptions& options, const OnDataSet& on_each) {
  SummarySpaceReferences references;
  for (size_t index = 0; index < sources.size(); ++index) {
    const auto start = std::chrono::steady_clock::now();
    const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    DataSetOutcome outcome;
    auto read = sources.read(index);
    if (!read.data) {
      outcome.row = DataSetRow::failed(sources.name(index), read.error, seconds());
      on_each(index, outcome);
      continue;
    }
    std::vector<std::string> warnings;
    try {
      outcome.result = infer_data_set(model, *read.data, options, [&](const std::string& line) {
        if (line.rfind("warning: ", 0) == 0) warnings.push_back(line.substr(9));
      }, &references);
    } catch (const UserError& error) {
      outcome.row = DataSetRow::failed(sources.name(index), error.what(), seconds());
      on_each(index, outcome);
      continue;
    }
    outcome.row = DataSetRow::of(sources.name(index), *read.data, *outcome.result, seconds(), std::move(warnings));
    on_each(index, outcome);
  }
}

}  // namespace bfhpo::inference
