// Many data sets through one loaded estimator: each data set of `sources`
// read, inferred (infer_data_set: the amortized draws, the path its
// diagnostics choose, the model check, person scores) and handed to
// `on_each` with its row, then dropped, so memory holds one data set and its
// results whatever their number. A data set that cannot be read or inferred
// (a UserError: a category the model does not know, too large for memory)
// gets a failed row saying why and the others go on. The lines
// infer_data_set says are kept on the row as its warnings. Data sets of one
// shape share the summary-space check's simulations (SummarySpaceReferences).
#pragma once

#include "inference/data_set_sources.hpp"
#include "inference/data_set_table.hpp"

#include <functional>
#include <optional>

namespace bfhpo::inference {

struct DataSetOutcome {
  DataSetRow row;
  std::optional<DataSetInference> result;   // none when it failed
};

using OnDataSet = std::function<void(size_t index, const DataSetOutcome& outcome)>;

void infer_many(TrainedModel& model, DataSetSources& sources, const InferenceOptions& options, const OnDataSet& on_each);

}  // namespace bfhpo::inference
