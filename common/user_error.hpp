// bfhpo::UserError: an error the user caused and can fix (a bad study.json, a
// bad command line, a corrupt journal). Its message names the file, the field
// and the fix; the CLI prints it and exits with status 2. Bugs are not
// UserErrors: they are other exceptions, whose first line the CLI prints
// before it exits with status 2 too (cli/dispatch.cpp), never an abort.
#pragma once

#include <stdexcept>
#include <string>

namespace bfhpo {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;

  // "FILE: field 'FIELD': PROBLEM. Fix: FIX"
  static UserError at(const std::string& file, const std::string& field,
                      const std::string& problem, const std::string& fix) {
    std::string message = file + ": ";
    if (!field.empty()) message += "field '" + field + "': ";
    message += problem;
    if (!fix.empty()) message += ". Fix: " + fix;
    return UserError(message);
  }
};

}  // namespace bfhpo
