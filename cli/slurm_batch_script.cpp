#include "cli/slurm_batch_script.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

namespace bfhpo::cli {
namespace {

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "1:30:00" -> {"1", "30", "00"}
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

// Seconds of a time limit in Slurm's format (sbatch --time); none for a malformed one.
std::optional<long> slurm_time_seconds(const std::string& limit) {
  const auto dash = limit.find('-');
  const bool has_days = dash != std::string::npos;
  const std::vector<std::string> clock = split(has_days ? limit.substr(dash + 1) : limit, ':');
  if (clock.empty() || clock.size() > 3 || !std::all_of(clock.begin(), clock.end(), all_digits)) return std::nullopt;
  std::vector<long> values;
  for (const auto& part : clock) values.push_back(std::stol(part));
  long seconds = 0;
  if (has_days) {
    const std::string days = limit.substr(0, dash);
    if (!all_digits(days)) return std::nullopt;
    // D-H, D-H:M, D-H:M:S
    const long units[] = {3600, 60, 1};
    for (size_t i = 0; i < values.size(); ++i) seconds += values[i] * units[i];
    return std::stol(days) * 86400 + seconds;
  }
  // M, M:S, H:M:S
  if (values.size() == 1) return values[0] * 60;
  if (values.size() == 2) return values[0] * 60 + values[1];
  return values[0] * 3600 + values[1] * 60 + values[2];
}

bool is_unlimited(const std::string& limit) { return limit == "UNLIMITED" || limit == "INFINITE"; }

bool has_control_character(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// One word for the shell, whatever it holds.
std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Slurm job names: letters, digits, '.', '_', '-'.
std::string job_name(const std::string& study_name) {
  std::string name = "bfhpo-" + study_name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return name;
}

}  // namespace

std::optional<ConfigProblem> SlurmLaunch::problem() const {
  // Every value the script holds: a line break in one would end its line and
  // start a command of its own (and sbatch reads no #SBATCH line after it).
  std::vector<std::pair<std::string, std::optional<std::string>>> written = {
      {"bfhpo", bfhpo.string()},   {"STUDY.json", study_file.string()}, {"STUDY.json", log_pattern.string()},
      {"name", study_name},        {"--storage", storage},              {"--time", time_limit},
      {"--partition", partition},  {"--account", account}};
  for (const auto& arg : sbatch_args) written.emplace_back("--sbatch-arg", arg);
  for (const auto& [field, value] : written)
    if (value && has_control_character(*value))
      return ConfigProblem{field, nlohmann::json(*value).dump() + " holds a control character (a line break, a tab), "
                                  "which would split the batch script's line into lines of their own",
                           "give it without one (a file: rename it, or the folder that has one)"};
  for (const auto& [field, value] : {std::pair{"--partition", partition}, std::pair{"--account", account}})
    if (value && (value->empty() || value->find(' ') != std::string::npos))
      return ConfigProblem{field, "'" + *value + "' is not one Slurm name (an #SBATCH line splits it at a space)",
                           "give the name sinfo or sacctmgr shows"};
  if (workers < 1)
    return ConfigProblem{"--workers", std::to_string(workers) + " is not a number of workers", "give --workers 1 or more"};
  if (gpus_per_worker < 0 || gpus_per_worker > 1)
    return ConfigProblem{"--gpus-per-worker", std::to_string(gpus_per_worker) + ": a worker trains on one device",
                         "give 0 (CPU) or 1, and as many --workers as GPUs to use"};
  if (cpus_per_worker && *cpus_per_worker < 1)
    return ConfigProblem{"--cpus-per-worker", std::to_string(*cpus_per_worker) + " is not a number of CPUs",
                         "give --cpus-per-worker 1 or more"};
  if (grace_s < 1)
    return ConfigProblem{"--grace", std::to_string(grace_s) + " is not a positive number of seconds",
                         "give e.g. --grace 120 (seconds between SIGTERM and the time limit)"};
  if (time_limit && !is_unlimited(*time_limit)) {
    const auto seconds = slurm_time_seconds(*time_limit);
    if (!seconds)
      return ConfigProblem{"--time", "'" + *time_limit + "' is not a Slurm time limit",
                           "give minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S, e.g. --time 4:00:00"};
    if (*seconds <= grace_s)
      return ConfigProblem{"--time", *time_limit + " (" + std::to_string(*seconds) + " s) leaves no time before the SIGTERM " +
                                         std::to_string(grace_s) + " s ahead of it (--grace)",
                           "give a longer --time or a shorter --grace"};
  }
  const std::string log_folder = log_pattern.parent_path().string();
  constexpr const char* kNotInOutputLine = "%\"\\ ";
  if (log_folder.find_first_of(kNotInOutputLine) != std::string::npos)
    return ConfigProblem{"STUDY.json", "its folder " + log_folder +
                                           " holds a space, quote, backslash or %, which an #SBATCH --output line cannot take",
                         "move the study to a folder whose path has none"};
  const std::string log_name = log_pattern.filename().string();
  if (log_name.substr(0, log_name.rfind(kSlurmLogSuffix)).find_first_of(kNotInOutputLine) != std::string::npos)
    return ConfigProblem{"STUDY.json", "its name " + study_file.filename().string() +
                                           " holds a space, quote, backslash or %, which the logs' #SBATCH --output "
                                           "line cannot take",
                         "rename the study file to a name without them"};
  for (const auto& arg : sbatch_args)
    if (arg.empty() || arg[0] != '-')
      return ConfigProblem{"--sbatch-arg", "'" + arg + "' is not one sbatch option",
                           "give one option a --sbatch-arg, e.g. --sbatch-arg=--qos=long"};
  return std::nullopt;
}

std::string slurm_batch_script(const SlurmLaunch& launch) {
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "# bfhpo launch: " << launch.workers << " workers of study '" << launch.study_name << "' ("
      << launch.study_file.string() << ")\n"
      << "#SBATCH --job-name=" << job_name(launch.study_name) << "\n"
      << "#SBATCH --array=0-" << launch.workers - 1 << "\n"
      << "#SBATCH --output=" << launch.log_pattern.string() << "\n"
      << "#SBATCH --open-mode=append\n"
      << "#SBATCH --signal=B:TERM@" << launch.grace_s << "\n"
      << "#SBATCH --requeue\n";
  if (launch.cpus_per_worker) out << "#SBATCH --cpus-per-task=" << *launch.cpus_per_worker << "\n";
  if (launch.gpus_per_worker > 0) out << "#SBATCH --gres=gpu:" << launch.gpus_per_worker << "\n";
  if (launch.time_limit) out << "#SBATCH --time=" << *launch.time_limit << "\n";
  if (launch.partition) out << "#SBATCH --partition=" << *launch.partition << "\n";
  if (launch.account) out << "#SBATCH --account=" << *launch.account << "\n";
  for (const auto& arg : launch.sbatch_args) out << "#SBATCH " << arg << "\n";
  if (launch.gpus_per_worker == 0)
    out << "# No GPU was asked for: the worker trains on the CPU rather than on a GPU Slurm gave another job.\n"
        << "export CUDA_VISIBLE_DEVICES=\n";
  if (launch.cpus_per_worker) out << "export OMP_NUM_THREADS=" << *launch.cpus_per_worker << "\n";
  out << "# exec: bfhpo replaces this shell, so Slurm's SIGTERM (--signal=B:..., scancel) reaches it\n"
      << "# and the running trial is re-queued for the other workers.\n"
      << "exec " << shell_quoted(launch.bfhpo.string()) << " optimize " << shell_quoted(launch.study_file.string());
  if (launch.storage) out << " --storage " << shell_quoted(*launch.storage);
  out << "\n";
  return out.str();
}

}  // namespace bfhpo::cli
