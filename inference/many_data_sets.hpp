// Many data sets through one loaded estimator: each data set of `sources`
// read, inferred (infer_data_set: the amortized draws, the path its
// diagnostics choose, the model check, person scores) and handed to
// `on_each` with its row, then dropped, so memory holds the data sets in
// flight and their results whatever their number. A data set that cannot be read or inferred
// (a UserError: a category the model does not know, too large for memory)
// gets a failed row saying why and the others go on. The lines
// infer_data_set says are kept on the row as its warnings. Data sets of one
// shape share the summary-space check's simulations (SummarySpaceReferences)
// and the spread calibration's (ShapeSpreads).
//
// `at_once` data sets run side by side (0: one a core), each on one thread
// (its stages' own workers run one after another inside it:
// trials::for_each_on_workers), and start only while the memory each needs
// (inference_memory_mb) fits beside the others' in infer's budget: memory
// is bounded by the data sets in flight, not by their number. `on_each` is
// called in index order, one call at a time, from whichever thread
// finished the data set it waited on; the results are the same whatever
// `at_once` is (each data set's draws from its own generator). Data set k
// (from 0, in the sources' order) draws with seed + k
// (InferenceOptions::data_set): alone with that seed it gives the same. A row's
// seconds are its data set's wall time, beside the others in flight.
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

void infer_many(TrainedModel& model, DataSetSources& sources, const InferenceOptions& options, const OnDataSet& on_each,
                int64_t at_once = 0);

}  // namespace bfhpo::inference
