#include "cli/verbs.hpp"

#include "common/user_error.hpp"

#include <cstdio>
#include <iostream>

namespace bfhpo::cli {
namespace {

namespace po = boost::program_options;

void storage_option(po::options_description& options) {
  options.add_options()("storage", po::value<std::string>(),
                        "a journal file or a postgresql://user:pass@host:port/db URL to use instead of the "
                        "study file's \"storage\" (every worker of a study must name the same one)");
}

void optimize_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("n-trials", po::value<int>(), "override n_trials (the study's total finished trials)")(
      "timeout", po::value<double>(), "stop starting trials after S seconds")(
      "seed", po::value<uint64_t>(), "override the study's seed")(
      "no-memory-gate", "launch every proposal; OOMs are then handled by the backoff ladder only");
}

void tell_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("trial", po::value<int>()->required(), "the trial number printed by ask")(
      "value", po::value<std::string>(), "the objective value (the trial becomes COMPLETE)")(
      "values", po::value<std::string>(),
      "V1,V2,...: one value per objective of a study of several (in the order of its \"objectives\")")(
      "constraints", po::value<std::string>(),
      "C1,C2,...: the trial's constraint values (Optuna's: feasible when every one is <= 0)")(
      "state", po::value<std::string>(), "complete|pruned|fail (default complete with --value)")(
      "step", po::value<int>(), "report --value as the intermediate value of this step instead of finishing");
}

void enqueue_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("params", po::value<std::string>()->required(),
                        "a JSON file {\"name\": value, ...} (what export --best writes, or its \"params\"); "
                        "parameters left out are sampled when the trial is served")(
      "skip-if-exists", "do nothing when a trial with exactly these params is already in the study (Optuna's "
                        "enqueue_trial(skip_if_exists=True))");
}

void requeue_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("trial", po::value<int>()->required(), "the RUNNING trial to release");
}

void status_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("json", "print the status as one JSON object")(
      "memory-levels", po::value<std::string>()->default_value("8,16,24,40,80"),
      "memory frontier: the sizes in GB at which to show the best trial that fits");
}

void report_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("output,o", po::value<std::string>(),
                        "the HTML file to write (default: <study file without .json>.report.html beside it)")(
      "memory-levels", po::value<std::string>()->default_value("8,16,24,40,80"),
      "memory frontier: the sizes in GB at which to show the best trial that fits");
}

void export_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("best", "with json: only the best trial (params, value, attributes; for a training "
                                "study also its complete configuration and weights)")(
      "format", po::value<std::string>()->default_value("json"),
      "json, csv (every trial, one row each) or bayesflow (the best configuration as BayesFlow arguments)")(
      "output,o", po::value<std::string>(), "write to this file instead of stdout")(
      "budget-mb", po::value<double>(),
      "with --best or --format bayesflow: the best trial whose peak (measured, else estimated) fits this many MB");
}

void train_options(po::options_description& options) {
  options.add_options()("params", po::value<std::string>(),
                        "PARAMS.json: what `export --best` writes, or {\"name\": value}; default: the study's fixed values")(
      "epochs", po::value<int>(), "override training.epochs")(
      "seed", po::value<uint64_t>(), "train with this seed (default: the exported trial's, else the study's)")(
      "out", po::value<std::string>(), "folder for weights.pt, config.json, result.json (default STUDY.json.train)")(
      "json", "print the result as JSON only");
}

void infer_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("data", po::value<std::vector<std::string>>()->multitoken(),
                        "responses.csv or .tsv: persons x items of 0/1 (0..K-1 graded; empty or NA missing), a header of item "
                        "names, an optional id column. Several files, a folder (its *.csv and *.tsv) or a quoted pattern "
                        "('wave*.csv'): many data sets in one run, the outputs long with a first column `dataset`")(
      "model", po::value<std::string>(),
      "rasch, 2pl, 3pl or grm instead of MODEL_DIR: the estimator that ships with bfhpo for that model and the data's "
      "shape (no study, no training); a shape outside every shipped one's ranges is an error pointing to `init`")(
      "group-column", po::value<std::string>(),
      "one long --data file holding many data sets: this column names each person's data set")(
      "draws", po::value<int64_t>()->default_value(1000), "posterior draws per item")(
      "seed", po::value<uint64_t>()->default_value(1), "seed of the draws (torch.manual_seed in Python gives the same); of many data sets, the k-th (from 0) draws with seed + k, as it would alone with that seed")(
      "format", po::value<std::string>()->default_value("csv"), "csv or json: the per-item summary")(
      "out", po::value<std::string>(), "write the summary to this file instead of stdout")(
      "draws-out", po::value<std::string>(), "also write every draw (item,draw,log_a,b,log_prob) to this CSV file")(
      "id-column", po::value<std::string>(), "the person-id column's name (default: id, person, person_id or respondent)")(
      "check-replications", po::value<int64_t>()->default_value(500),
      "model check: replicated data sets of the posterior predictive check per item (0: no model check; by default "
      "500, or as many as a graded model of many categories needs for a flag to be possible at --check-alpha)")(
      "check-alpha", po::value<double>()->default_value(0.05, "0.05"),
      "model check: each item's chance of a false misfit flag when the model fits")(
      "check-out", po::value<std::string>(),
      "model check: write the per-item check (observed vs replicated statistics, tail probabilities) to this CSV file")(
      "refine", po::value<std::string>()->default_value("importance"),
      "the exact posterior (abilities integrated out, as Stan's): importance (the amortized draws reweighted where "
      "Pareto k-hat says that can be trusted, else kept and marked as needing chains); auto (importance, chains where "
      "k-hat is too high or the data lie outside the trained space); mcmc (chains started from the amortized draws); "
      "off (the amortized draws as they are)")(
      "prior", po::value<std::vector<std::string>>()->composing(),
      "the prior the reported posterior has, over the trained one (repeatable): NAME=normal(MEAN, SD) for log_a, b "
      "or thresholds, c=beta(ALPHA, BETA), or a JSON file of priors as a study's simulator.priors; the amortized "
      "draws are the proposal and the exact-posterior step targets it (not with --refine off)")(
      "refine-chains", po::value<int64_t>()->default_value(4), "refinement by mcmc: chains")(
      "refine-warmup", po::value<int64_t>()->default_value(500), "refinement by mcmc: warm-up sweeps a chain")(
      "refine-sweeps", po::value<int64_t>()->default_value(1500),
      "refinement by mcmc: kept sweeps a chain, at most: the chains stop once every item parameter's R-hat <= 1.01 "
      "and ESS >= 400 (checked every 100 sweeps)")(
      "refine-all-sweeps", "refinement by mcmc: run every --refine-sweeps sweep, converged or not")(
      "spread-calibration", po::value<std::string>()->default_value("on"),
      "on: each parameter's draws scaled about their mean so that the flow's 80% intervals cover 80% on data sets "
      "simulated at the data's shape (once a shape); off: the flow's own draws")(
      "persons-out", po::value<std::string>(),
      "write every person's ability posterior (mean = EAP, sd, 2.5/50/97.5%), integrated over the item draws, to this "
      "CSV file")(
      "plausible-values", po::value<int64_t>()->default_value(0),
      "with --persons-out: this many draws of each person's ability (plausible values pv1..pvM)")(
      "datasets-out", po::value<std::string>(),
      "write one row a data set (persons, items, missing share, Pareto k-hat, the path taken, misfitting items, "
      "summary-space p, seconds, warnings, error) to this file (CSV, or JSON with --format json)");
}

void init_options(po::options_description& options) {
  options.add_options()("data", po::value<std::string>()->required(),
                        "responses.csv or .tsv, read as infer reads it: persons x items of 0/1 or 0..K-1, empty or "
                        "NA missing, a header of item names, an optional id column")(
      "model", po::value<std::string>()->required(), "rasch, 2pl, 3pl or grm")(
      "output,o", po::value<std::string>(), "write the study to this new file (default: stdout; the choices go to stderr)")(
      "force", "replace the -o file if it exists")(
      "fine-tune", "start from the shipped estimator of the model nearest the file's shape (its network and weights): "
                   "a quarter of the training")(
      "id-column", po::value<std::string>(), "the person-id column's name (default: id, person, person_id or respondent)");
}

// estimate and probe: one configuration's memory, the same options.
void memory_options(po::options_description& options) {
  options.add_options()("params", po::value<std::string>(),
                        "PARAMS.json: what `export --best` writes, or {\"name\": value}; default: the study's fixed values")(
      "budget-mb", po::value<double>(), "memory budget in MB (default: the study's memory.budget_mb)")(
      "json", "print JSON");
}

void launch_options(po::options_description& options) {
  storage_option(options);
  options.add_options()("workers", po::value<int>()->required(), "N: the job array's tasks, one worker each")(
      "gpus-per-worker", po::value<int>(), "0 or 1: the GPU Slurm binds to a worker (default 1 when training.device "
                                           "is \"cuda\", else 0: the worker trains on the CPU)")(
      "cpus-per-worker", po::value<int>(), "CPUs of a worker (sbatch --cpus-per-task; its training threads)")(
      "time", po::value<std::string>(), "each worker's time limit, in sbatch's format (e.g. 4:00:00 or 1-12)")(
      "grace", po::value<int>()->default_value(120),
      "seconds before the time limit when Slurm sends SIGTERM: the running trial is re-queued")(
      "partition", po::value<std::string>(), "the Slurm partition")("account", po::value<std::string>(),
                                                                      "the Slurm account to charge")(
      "sbatch-arg", po::value<std::vector<std::string>>()->composing(),
      "one more sbatch option for the script, e.g. --sbatch-arg=--qos=long (repeatable)")(
      "dry-run", "print the batch script; submit nothing");
}

}  // namespace

const std::vector<Verb>& verbs() {
  static const std::vector<Verb> all{
      {"optimize", "run (or resume) a training study: memory gate, OOM backoff, journal",
       "STUDY.json [--n-trials N] [--timeout S] [--seed S] [--no-memory-gate] [--storage URL]", Side::Training,
       optimize_options},
      {"launch", "run a study's workers as a Slurm job array (one sbatch script, one log a worker)",
       "STUDY.json --workers N [--gpus-per-worker G] [--cpus-per-worker C] [--time T] [--partition P] [--account A]"
       " [--sbatch-arg ARG]... [--grace S] [--dry-run] [--storage URL]",
       Side::Front, launch_options},
      {"ask", "propose a trial, record it RUNNING, print {\"trial\": N, \"params\": {...}}", "STUDY.json [--storage URL]",
       Side::Front, storage_option},
      {"tell", "finish a trial with a value or a state",
       "STUDY.json --trial N (--value V | --values V1,V2,... | --state pruned|fail | --step S --value V)"
       " [--constraints C1,C2,...] [--storage URL]",
       Side::Front,
       tell_options},
      {"enqueue", "add a WAITING trial with some or all params fixed, served first by ask",
       "STUDY.json --params PARAMS.json [--skip-if-exists] [--storage URL]", Side::Front, enqueue_options},
      {"requeue", "release a RUNNING trial whose caller is gone: FAIL, its params queued again",
       "STUDY.json --trial N [--storage URL]", Side::Front, requeue_options},
      {"status", "counts by state, the best trial and a table of trials", "STUDY.json [--json] [--memory-levels GB,...] [--storage URL]",
       Side::Front, status_options},
      {"report", "one self-contained HTML page of plots: history, importance, memory, diagnostics",
       "STUDY.json [-o report.html] [--memory-levels GB,...] [--storage URL]", Side::Front, report_options},
      {"export", "the best configuration (JSON, BayesFlow arguments) or every trial (JSON, CSV)",
       "STUDY.json [--best] [--format json|csv|bayesflow] [--budget-mb N] [-o FILE] [--storage URL]", Side::Front, export_options},
      {"estimate", "estimated peak memory of one configuration, term by term, and the gate's decision",
       "STUDY.json [--params PARAMS.json] [--budget-mb N] [--json]", Side::Training, memory_options},
      {"probe", "measure one real training step per memory configuration",
       "STUDY.json [--params PARAMS.json] [--budget-mb N] [--json]", Side::Training, memory_options},
      {"train", "train one configuration (the study's fixed values + PARAMS.json), print diagnostics",
       "STUDY.json [--params PARAMS.json] [--epochs N] [--seed S] [--out DIR] [--json]", Side::Training, train_options},
      {"infer", "posterior draws of every item's parameters, and every person's score, for one or many response files",
       "MODEL_DIR|STUDY.json|--model rasch|2pl|3pl|grm --data responses.csv|FOLDER|'PATTERN'... [--group-column G]"
       " [--draws N] [--seed S]"
       " [--format csv|json] [--out F] [--draws-out F] [--persons-out F [--plausible-values M]] [--datasets-out F]"
       " [--id-column NAME] [--check-replications R] [--check-alpha A] [--check-out F]"
       " [--refine off|auto|importance|mcmc] [--refine-chains C] [--refine-warmup W] [--refine-sweeps S] [--refine-all-sweeps]"
       " [--spread-calibration on|off] [--prior NAME=normal(M, SD)|PRIORS.json]... [--storage URL]",
       Side::Training, infer_options, true, "model"},
      {"init", "write a training study sized to a response file: ranges, categories, missing share, training length",
       "--data responses.csv --model rasch|2pl|3pl|grm [-o STUDY.json [--force]] [--fine-tune] [--id-column NAME]",
       Side::Training,
       init_options, false},
  };
  return all;
}

const Verb* find_verb(const std::string& name) {
  for (const auto& verb : verbs())
    if (name == verb.name) return &verb;
  return nullptr;
}

std::optional<po::variables_map> parse_verb_args(const Verb& verb, const std::vector<std::string>& args) {
  const std::string name = verb.name;
  po::options_description options("bfhpo " + name);
  verb.declare_options(options);
  options.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(options);
  all.add_options()("study", po::value<std::string>(), "the study file");
  po::positional_options_description positional;
  if (verb.takes_study) positional.add("study", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: bfhpo " << name << " " << verb.usage << "\n\n" << options << "\n";
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UserError("bfhpo " + name + ": " + e.what() + ". Fix: see `bfhpo " + name + " --help`");
  }
  if (verb.takes_study && !vm.count("study") && !(verb.instead_of_study && vm.count(verb.instead_of_study)))
    throw UserError("bfhpo " + name + ": missing STUDY.json. Fix: bfhpo " + name + " " + verb.usage);
  return vm;
}

void print_usage() {
  std::cout << "bfhpo: hyperparameter optimization for amortized Bayesian inference networks\n\n"
               "usage: bfhpo VERB STUDY.json [options]     (bfhpo VERB --help for a verb's options)\n\n";
  for (const auto& verb : verbs()) std::printf("  %-9s %s\n", verb.name, verb.summary);
}

}  // namespace bfhpo::cli
