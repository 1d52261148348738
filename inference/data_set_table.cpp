#include "inference/data_set_table.hpp"

#include "common/csv_field.hpp"
#include "common/json_number.hpp"

#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

namespace bfhpo::inference {
namespace {

std::string csv_number(double value) {
  if (std::isnan(value)) return "NA";
  std::ostringstream out;
  out << std::setprecision(6) << value;
  return out.str();
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

}  // namespace

DataSetRow DataSetRow::of(const std::string& dataset, const ResponseMatrix& data, const DataSetInference& result,
                          double seconds, std::vector<std::string> warnings) {
  DataSetRow row;
  row.warnings = std::move(warnings);
  row.dataset = dataset;
  row.seed = result.posterior.seed;
  row.persons = data.responses.size(0);
  row.items = data.responses.size(1);
  row.missing_share = data.missing_share();
  row.pareto_k = result.pareto_k;
  row.item_coverage_loss = result.item_coverage_loss;
  row.path = result.path();
  row.needs_chains = result.needs_chains();
  if (result.predictive) row.misfitting_items = result.predictive->misfitting_items();
  if (result.summary_space) row.summary_space_p = result.summary_space->p_value;
  row.seconds = seconds;
  return row;
}

DataSetRow DataSetRow::failed(const std::string& dataset, const std::string& error, double seconds) {
  DataSetRow row;
  row.dataset = dataset;
  row.path = "failed";
  row.error = error;
  row.seconds = seconds;
  return row;
}

nlohmann::json DataSetRow::to_json() const {
  return {{"dataset", dataset},
          {"seed", seed ? nlohmann::json(*seed) : nlohmann::json()},
          {"persons", persons},
          {"items", items},
          {"missing_share", number_or_null(missing_share)},
          {"pareto_k", number_or_null(pareto_k)},
          {"item_coverage_loss", number_or_null(item_coverage_loss)},
          {"path", path},
          {"needs_chains", needs_chains},
          {"misfitting_items", misfitting_items},
          {"summary_space_p", number_or_null(summary_space_p)},
          {"seconds", seconds},
          {"warnings", warnings},
          {"error", error.empty() ? nlohmann::json() : nlohmann::json(error)}};
}

std::string data_set_table_header() {
  return "dataset,seed,persons,items,missing_share,pareto_k,item_coverage_loss,path,needs_chains,misfitting_items,summary_space_p,seconds,"
         "warnings,error\n";
}

std::string data_set_table_line(const DataSetRow& row) {
  std::ostringstream out;
  out << csv_field(row.dataset) << "," << (row.seed ? std::to_string(*row.seed) : "NA") << "," << row.persons << "," << row.items << "," << csv_number(row.missing_share) << ","
      << csv_number(row.pareto_k) << "," << csv_number(row.item_coverage_loss) << "," << row.path << "," << (row.needs_chains ? "true" : "false") << ","
      << csv_field(joined(row.misfitting_items, ";")) << "," << csv_number(row.summary_space_p) << ","
      << csv_number(row.seconds) << "," << csv_field(joined(row.warnings, " | ")) << "," << csv_field(row.error) << "\n";
  return out.str();
}

std::vector<std::string> closing_lines(const std::vector<DataSetRow>& rows) {
  std::map<std::string, std::pair<int, double>> paths;  // path -> (data sets, seconds)
  int needs_chains = 0, misfitting = 0, outside = 0, checked = 0;
  for (const auto& row : rows) {
    auto& [count, seconds] = paths[row.path];
    ++count;
    seconds += row.seconds;
    needs_chains += row.needs_chains ? 1 : 0;
    misfitting += row.misfitting_items.empty() ? 0 : 1;
    if (!std::isnan(row.summary_space_p)) {
      ++checked;
      outside += row.summary_space_p < kSummaryOutsideLevel ? 1 : 0;
    }
  }
  std::ostringstream paths_line;
  paths_line << std::fixed << std::setprecision(1) << "paths:";
  const char* separator = " ";
  for (const char* path : {"amortized", "importance", "mcmc", "failed"}) {
    const auto found = paths.find(path);
    if (found == paths.end()) continue;
    paths_line << separator << found->second.first << " " << path << " (" << found->second.second << " s)";
    separator = ", ";
  }
  if (needs_chains > 0)
    paths_line << "; " << needs_chains << " with amortized draws that a diagnostic distrusts (--refine auto runs "
               << "chains on them)";
  std::vector<std::string> lines{paths_line.str()};
  if (checked > 0)
    lines.push_back("model check: " + std::to_string(misfitting) + " of " + std::to_string(checked) +
                    " data sets with misfitting items; " + std::to_string(outside) +
                    " with a summary outside the trained space");
  return lines;
}

std::string with_dataset_column(const std::string& csv, const std::string& dataset, bool with_header) {
  std::string out;
  const std::string prefix = csv_field(dataset) + ",";
  size_t start = 0;
  bool header = true;
  while (start < csv.size()) {
    const size_t end = csv.find('\n', start);
    const size_t stop = end == std::string::npos ? csv.size() : end + 1;
    if (header) {
      if (with_header) out += "dataset," + csv.substr(start, stop - start);
      header = false;
    } else {
      out += prefix + csv.substr(start, stop - start);
    }
    start = stop;
  }
  return out;
}

}  // namespace bfhpo::inference
