// What happened to each data set of a many-data-set `bfhpo infer` call, one
// row each (`--datasets-out`), and the closing lines that count the paths
// taken and what each path cost. A failed data set's row says why; its
// numbers are NaN (NA in CSV, null in JSON).
#pragma once

#include "inference/data_set_inference.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::inference {

struct DataSetRow {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string dataset;
  std::optional<uint64_t> seed;  // its draws' (InferenceOptions::data_set); none when it failed
  int64_t persons = 0, items = 0;
  double missing_share = kNaN;
  double pareto_k = kNaN;
  double item_coverage_loss = kNaN;  // ItemJudgement::largest_coverage_loss; NaN: not judged
  std::string path;  // amortized, importance, mcmc; "failed" when it could not be inferred
  bool needs_chains = false;
  std::vector<std::string> misfitting_items;
  double summary_space_p = kNaN;
  double seconds = 0.0;
  std::vector<std::string> warnings;  // what infer_data_set said as warnings
  std::string error;

  static DataSetRow of(const std::string& dataset, const ResponseMatrix& data, const DataSetInference& result,
                       double seconds, std::vector<std::string> warnings);
  static DataSetRow failed(const std::string& dataset, const std::string& error, double seconds);
  nlohmann::json to_json() const;
};

// dataset,seed,persons,items,missing_share,pareto_k,item_coverage_loss,path,needs_chains,misfitting_items,summary_space_p,seconds,
// warnings,error (misfitting items joined by ';', warnings by ' | ').
std::string data_set_table_header();
std::string data_set_table_line(const DataSetRow& row);

// "paths: 950 amortized (12.1 s), 45 importance (3.0 s), 5 mcmc (40.2 s); 3 need chains (--refine auto runs
// them); 1 failed" and, when any check ran, how many data sets had misfitting items or a summary outside.
std::vector<std::string> closing_lines(const std::vector<DataSetRow>& rows);

// `csv` (a header line, then rows) with a first column `dataset`; the header kept only when `with_header`.
std::string with_dataset_column(const std::string& csv, const std::string& dataset, bool with_header);

}  // namespace bfhpo::inference
