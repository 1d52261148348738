// `bfhpo launch`: a study's workers as a Slurm job array (cli/slurm_batch_script.hpp).
// Checks first, writes the script then, submits last: a storage the workers
// of other nodes cannot share, a value the script cannot hold, a script file
// that would replace the study or its journal, a missing sbatch or an unknown
// partition is a UserError, and nothing is written or submitted.
#include "cli/command.hpp"
#include "cli/slurm_batch_script.hpp"
#include "cli/training_exec.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "hpo/storage/journal_file_lock.hpp"
#include "hpo/storage/postgres_url.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace bfhpo::cli {
namespace {

namespace fs = std::filesystem;

// Folders that are each node's own: a journal there is not shared by workers on other nodes.
constexpr const char* kNodeLocalFolders[] = {"/tmp", "/var/tmp", "/dev/shm", "/run"};

// The node-local folder (kNodeLocalFolders) `path` is under, links resolved; none on a shared one.
std::optional<fs::path> node_local_folder(const fs::path& path) {
  const fs::path resolved = fs::weakly_canonical(fs::absolute(path));
  for (const fs::path folder : kNodeLocalFolders) {
    const auto relative = resolved.lexically_relative(folder);
    if (!relative.empty() && *relative.begin() != "..") return folder;
  }
  return std::nullopt;
}

// Whether a host of a PostgreSQL URL is each node's own: localhost, 127.x, ::1,
// a socket folder or none (libpq then takes the local socket).
bool is_local_host(const std::string& host) {
  return host.empty() || host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1" || host == "[::1]" ||
         host[0] == '/' || host.rfind("%2F", 0) == 0 || host.rfind("%2f", 0) == 0;
}

// Whether a PostgreSQL URL reaches a server on the host that runs it: a host
// of its HOST[:PORT][,...] part (after the user's last '@'), or its host= or
// hostaddr= query parameter, is local (is_local_host).
bool names_local_server(const std::string& url) {
  std::string rest = url.substr(url.find("://") + 3);
  if (const auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  const auto query = rest.find('?');
  std::istringstream hosts(rest.substr(0, rest.find_first_of("/?")));
  std::string host;
  bool hosts_local = true;
  while (std::getline(hosts, host, ','))
    hosts_local = hosts_local && is_local_host(host.substr(0, host[0] == '[' ? host.find(']') + 1 : host.find(':')));
  if (query == std::string::npos) return hosts_local;
  std::istringstream parameters(rest.substr(query + 1));
  std::string parameter;
  while (std::getline(parameters, parameter, '&'))
    for (const std::string key : {"host=", "hostaddr="})
      if (parameter.rfind(key, 0) == 0) return is_local_host(parameter.substr(key.size()));
  return hosts_local;
}

constexpr const char* kSharedStorageFix =
    "set \"storage\" to a postgresql:// URL (recommended: every node reaches it) or to a journal on a file system "
    "every node mounts (your home or project folder), or give --storage";

// The study file and the storage every worker opens, refused when workers on
// other nodes could not share them. Returns a note for a PostgreSQL server on localhost.
std::string check_shared_study(const hpo::StudySpec& spec, bool storage_given) {
  const std::string study = spec.source.string();
  if (const auto folder = node_local_folder(spec.source))
    throw UserError::at(study, "", "the study file is under " + folder->string() +
                                       ", which each node has its own of: workers on other nodes would not find it (nor "
                                       "would their logs, written beside it, come back)",
                        "move the study to a file system every node mounts (your home or project folder)");
  if (!storage_given && !spec.document.contains("storage"))
    throw UserError::at(study, "storage",
                        "not set, so the workers would share the default journal " + spec.storage.string() +
                            " beside the study file",
                        kSharedStorageFix);
  const std::string storage = spec.storage.string();
  if (hpo::is_postgres_url(storage)) {
    return names_local_server(storage) ? "note: the storage " + hpo::redacted_postgres_url(storage) +
                       " is on localhost: workers on other nodes reach their own host, not this one\n"
                 : "";
  }
  if (const auto folder = node_local_folder(spec.storage))
    throw UserError::at(study, "storage",
                        "the journal " + storage + " is under " + folder->string() +
                            ", which each node has its own of: workers on other nodes would not share it",
                        kSharedStorageFix);
  const fs::path journal_folder = fs::absolute(spec.storage).parent_path();
  if (!fs::is_directory(journal_folder))
    throw UserError::at(study, "storage", "the journal's folder " + journal_folder.string() + " does not exist",
                        "create it, or set \"storage\" to a journal in a folder that exists");
  return "";
}

// The program's path as execvp would find it on PATH; none when it is not there.
std::optional<fs::path> on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    const fs::path candidate = fs::path(folder.empty() ? "." : folder) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
  }
  return std::nullopt;
}

struct ProgramRun {
  int exit_status = -1;
  std::string output;  // stdout and stderr together
};

ProgramRun run_program(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("bfhpo launch: pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("bfhpo launch: fork failed");
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  ProgramRun run;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) run.output.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// An unknown partition is refused before anything is submitted (sinfo lists them).
void check_partition(const std::string& partition) {
  const auto sinfo = on_path("sinfo");
  if (!sinfo) return;  // sbatch judges it
  const ProgramRun run = run_program({sinfo->string(), "-h", "-o", "%R"});
  if (run.exit_status != 0) return;
  std::istringstream lines(run.output);
  std::string line, known;
  while (std::getline(lines, line)) {
    if (trimmed(line) == partition) return;
    known += (known.empty() ? "" : ", ") + trimmed(line);
  }
  throw UserError("bfhpo launch: --partition " + partition + ": Slurm has no such partition. Fix: give one of: " +
                  known);
}

// Whether two paths name one file: the same file when both exist (through
// links and other spellings), else the same absolute path, normalized.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error)) return fs::equivalent(a, b, error);
  return fs::weakly_canonical(fs::absolute(a), error) == fs::weakly_canonical(fs::absolute(b), error);
}

// The script's file: beside the study, never a symlink, a device or a folder,
// never the study file, its journal or the journal's lock file.
fs::path script_file(const hpo::StudySpec& spec) {
  const fs::path file = spec.source.parent_path() / (spec.source.stem().string() + ".sbatch");
  const auto status = fs::symlink_status(file);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw UserError::at(file.string(), "", "exists and is not a regular file (a link, a folder, a device)",
                        "remove or rename it: bfhpo launch writes the batch script there");
  std::vector<std::pair<fs::path, std::string>> kept = {{spec.source, "the study file"}};
  if (!hpo::is_postgres_url(spec.storage.string())) {
    kept.emplace_back(spec.storage, "the study's journal");
    kept.emplace_back(hpo::JournalFileLock(spec.storage).lock_path(), "the journal's lock file");
  }
  for (const auto& [path, what] : kept)
    if (same_file(file, path))
      throw UserError::at(file.string(), "", "is " + what + " (" + path.string() +
                                                 "), which the batch script bfhpo launch writes there would replace",
                          "rename the study file (the script is named after it: " + file.filename().string() +
                              ") or the journal");
  return file;
}

SlurmLaunch launch_request(const VerbArgs& args, const hpo::StudySpec& spec) {
  SlurmLaunch launch;
  launch.bfhpo = fs::path(training_executable()).parent_path() / "bfhpo";
  launch.study_file = fs::absolute(spec.source);
  launch.study_name = spec.name;
  launch.storage = storage_override(args);
  if (launch.storage && !hpo::is_postgres_url(*launch.storage)) launch.storage = fs::absolute(*launch.storage).string();
  launch.log_pattern = launch.study_file.parent_path() / (spec.source.stem().string() + kSlurmLogSuffix);
  launch.workers = args["workers"].as<int>();
  const auto training = spec.document.find("training");
  const bool trains_on_cuda = training != spec.document.end() && training->is_object() &&
                              training->value("device", std::string()) == "cuda";
  launch.gpus_per_worker = args.count("gpus-per-worker") ? args["gpus-per-worker"].as<int>() : trains_on_cuda ? 1 : 0;
  if (trains_on_cuda && launch.gpus_per_worker == 0)
    throw UserError::at(spec.source.string(), "training.device",
                        "\"cuda\", but --gpus-per-worker 0 gives the workers no GPU",
                        "give --gpus-per-worker 1, or set training.device to \"cpu\" or \"auto\"");
  if (args.count("cpus-per-worker")) launch.cpus_per_worker = args["cpus-per-worker"].as<int>();
  if (args.count("time")) launch.time_limit = args["time"].as<std::string>();
  if (args.count("partition")) launch.partition = args["partition"].as<std::string>();
  if (args.count("account")) launch.account = args["account"].as<std::string>();
  launch.grace_s = args["grace"].as<int>();
  if (args.count("sbatch-arg")) launch.sbatch_args = args["sbatch-arg"].as<std::vector<std::string>>();
  if (const auto problem = launch.problem())
    throw UserError("bfhpo launch: " + problem->field + " " + problem->problem + ". Fix: " + problem->fix);
  return launch;
}

}  // namespace

int run_launch(const VerbArgs& args) {
  const hpo::StudySpec spec = load_study(args);
  if (!spec.has_simulator())
    throw UserError::at(spec.source.string(), "simulator",
                        "missing: this study's trials are evaluated by whoever calls ask and tell, not by bfhpo optimize",
                        "launch your own workers that call `bfhpo ask` and `bfhpo tell`");
  const auto storage = storage_override(args);
  if (storage && hpo::is_postgres_url(*storage) && hpo::redacted_postgres_url(*storage) != *storage)
    throw UserError("bfhpo launch: --storage holds a password, which the batch script would store. Fix: put the URL "
                    "in the study file's \"storage\", or leave the password out and keep it in ~/.pgpass");
  const std::string note = check_shared_study(spec, storage.has_value());
  const SlurmLaunch launch = launch_request(args, spec);
  const fs::path file = script_file(spec);
  const std::string script = slurm_batch_script(launch);
  if (args.count("dry-run")) {
    std::cerr << note;
    std::cout << script;
    return 0;
  }
  const auto sbatch = on_path("sbatch");
  if (!sbatch)
    throw UserError("bfhpo launch: sbatch is not on PATH. Fix: run bfhpo launch on a login node of the Slurm cluster "
                    "(e.g. after `module load slurm`), or use --dry-run to see the script");
  if (launch.partition) check_partition(*launch.partition);
  write_file_atomically(file, script);
  const ProgramRun submitted = run_program({sbatch->string(), "--parsable", file.string()});
  const std::string output = trimmed(submitted.output);
  const std::string job_id = output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  if (submitted.exit_status != 0 || job_id.empty() || !std::isdigit(static_cast<unsigned char>(job_id[0]))) {
    const std::string said = " (exit " + std::to_string(submitted.exit_status) + "): " + output;
    // What sbatch says when slurmctld is down or does not answer in time.
    if (output.find("Unable to contact slurm controller") != std::string::npos ||
        output.find("Socket timed out") != std::string::npos)
      throw UserError("bfhpo launch: the Slurm controller is not answering; sbatch could not submit " + file.string() +
                      said + ". Fix: try again once `scontrol ping` says it is UP (or ask the cluster's "
                      "administrators); nothing was submitted");
    throw UserError("bfhpo launch: sbatch refused " + file.string() + said +
                    ". Fix: correct the option it names; nothing was submitted");
  }
  const std::string array = job_id.substr(0, job_id.find(';'));
  std::cerr << note;
  std::cout << "submitted job array " << array << ": " << launch.workers << " workers of study '" << spec.name << "'\n"
            << "  script: " << file.string() << "\n"
            << "  logs:   " << launch.log_pattern.parent_path().string() << "/" << spec.source.stem().string()
            << ".slurm-" << array << "_<task>.log\n"
            << "follow:   squeue -j " << array << "   and   bfhpo status " << spec.source.string() << "\n"
            << "stop:     scancel " << array << "   (running trials are re-queued; bfhpo optimize or another launch "
            << "resumes the study)\n";
  return 0;
}

}  // namespace bfhpo::cli
