#include "report/pareto_front_text.hpp"

#include "common/number_format.hpp"
#include "hpo/pareto_front.hpp"
#include "hpo/study_report.hpp"

#include <sstream>

namespace bfhpo::report {

std::string pareto_front_text(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials) {
  const std::vector<hpo::FrozenTrial> front = hpo::pareto_front(trials, spec.directions());
  std::ostringstream out;
  out << "Pareto front (";
  for (std::size_t i = 0; i < spec.objectives.size(); ++i)
    out << (i ? ", " : "") << hpo::to_string(spec.objectives[i].direction) << " " << spec.objectives[i].metric;
  out << "): ";
  if (front.empty()) {
    out << "none yet (no COMPLETE trial" << (spec.constraints.empty() ? "" : " meets the constraints") << ")\n";
    return out.str();
  }
  out << front.size() << (front.size() == 1 ? " trial" : " trials") << "\n";
  for (const hpo::FrozenTrial& t : front) {
    out << "  trial " << t.number << ":";
    for (std::size_t i = 0; i < t.values.size(); ++i)
      out << (i ? ", " : " ") << spec.objectives[i].metric << " " << format_number(t.values[i]);
    out << " params " << hpo::trial_summary_json(spec, t)["params"].dump() << "\n";
  }
  return out.str();
}

}  // namespace bfhpo::report
