// Where a training study's trials save their weights (trial-<number>.pt,
// trials/runner.hpp), in this order:
// - the study file's "weights_dir", relative to the study file as "storage" is;
// - for a journal, <journal>.weights beside it;
// - for PostgreSQL, <study file>.weights beside the study file. Workers on
//   several hosts share the database, not this folder: each host's trials
//   save there, so a study whose workers run on several hosts sets
//   "weights_dir" to a folder every host reaches (a shared filesystem).
// The folder is never named after a storage URL, so it holds no password,
// and neither does the path a trial records in bfhpo:weights.
#pragma once

#include "hpo/study_spec.hpp"

#include <filesystem>

namespace bfhpo::trials {

// An absolute path. UserError naming the study file and "weights_dir" when
// the key is not a non-empty string, or names something that exists and is
// not a folder.
std::filesystem::path weights_folder(const hpo::StudySpec& spec);

}  // namespace bfhpo::trials
