// A real data set for `bfhpo infer`: a persons x items 0/1 response matrix
// read from a CSV or TSV file whose header names the items. The delimiter is
// a tab for *.tsv files and for files whose header holds a tab, else a comma.
// An optional person-id column is the one named `id_column`, or, when that is
// empty, a header cell named id, person, person_id or respondent (any case).
// Fields may be wrapped in double quotes; blank lines are skipped; CRLF is
// accepted.
//
// Every problem is a UserError naming the file, the line and the column:
// a file that is not text (a NUL byte or invalid UTF-8), ragged rows, values
// other than 0 and 1, missing cells (empty or NA: the model needs complete
// responses), a header without items, duplicate item names, fewer than two
// persons.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <vector>

namespace bfhpo::trials {

struct ResponseMatrix {
  std::vector<std::string> item_names;
  std::vector<std::string> person_ids;  // empty without an id column
  torch::Tensor responses;              // [P, J] float32, 0/1
};

ResponseMatrix read_response_matrix(const std::filesystem::path& file, const std::string& id_column = "");

}  // namespace bfhpo::trials
