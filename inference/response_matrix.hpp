// A real data set for `bfhpo infer`: a persons x items response matrix read
// from a CSV or TSV file whose header names the items. A cell holds a
// response category 0..K-1 (0/1 for binary items; K the model's categories,
// ResponseFormat) or, where the model trained on missing responses, nothing:
// an empty cell or NA (any case) is missing and masked. The delimiter is
// a tab for *.tsv files and for files whose header holds a tab, else a comma.
// An optional person-id column is the one named `id_column`, or, when that is
// empty, a header cell named id, person, person_id or respondent (any case).
// A field may be quoted as RFC 4180 does (in double quotes it may hold the
// delimiter, and "" is a quote), but not across lines; blank lines are
// skipped; CRLF and a leading UTF-8 byte order mark are accepted.
//
// The file is read by common/input_file.hpp: a regular file of at most
// kMaxResponseFileBytes (not a FIFO, a device, a directory).
// Every problem is a UserError naming the file, the line and the column:
// a file that is not text (a NUL byte or invalid UTF-8), ragged rows, values
// other than the integers 0..K-1, missing cells for a model that needs
// complete responses, a header without items, duplicate item names, fewer
// than two persons.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bfhpo::inference {

// What the model reads: its response categories and whether it trained on missing cells.
struct ResponseFormat {
  ResponseFormat() = default;
  ResponseFormat(int64_t categories, bool missing, std::string what_a_cell_holds = "")
      : n_categories(categories), missing_allowed(missing), responses(std::move(what_a_cell_holds)) {}

  int64_t n_categories = 2;
  bool missing_allowed = false;
  // What a cell holds, in the fix for a cell that holds something else ("0 or 1 (the 2pl model's
  // responses)"); empty: the model's categories 0..n_categories-1.
  std::string responses;
};

struct ResponseMatrix {
  std::string source = "the response matrix";  // the file's path, for messages
  std::vector<std::string> item_names;
  std::vector<std::string> person_ids;  // empty without an id column
  torch::Tensor responses;              // [P, J] float32, the category 0..K-1; 0 where missing
  torch::Tensor mask;                   // [P, J] float32, 1 observed / 0 missing

  double missing_share() const { return 1.0 - mask.to(torch::kFloat64).mean().item<double>(); }
};

// Real response files: up to 1 GB (about 500 million cells); the matrix then takes 8 bytes a cell.
inline constexpr std::uint64_t kMaxResponseFileBytes = 1ull << 30;

ResponseMatrix read_response_matrix(const std::filesystem::path& file, const std::string& id_column = "",
                                    const ResponseFormat& format = {});

// One data set of a long file: the persons whose group column holds `name`.
struct ResponseGroup {
  std::string name;
  std::optional<ResponseMatrix> matrix;  // none when its rows are not a data set of this model: `error` says why
  std::string error;
};

// A long file of many data sets, one a value of the column `group_column`
// (neither an item nor the id), in the order the values first appear. What
// makes the whole file unreadable (not text, ragged rows, no such column, a
// person without a group) is a UserError; what makes one group unreadable (a
// response the model does not know, fewer than two persons) is its `error`,
// and the other groups are read.
std::vector<ResponseGroup> read_response_groups(const std::filesystem::path& file, const std::string& id_column,
                                                const std::string& group_column, const ResponseFormat& format = {});

}  // namespace bfhpo::inference
