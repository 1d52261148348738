// libpq, loaded when the first PostgreSQL connection opens. A bfhpo process
// that never opens a postgresql:// storage never maps libpq and the ~20
// libraries it brings (Kerberos, LDAP, GnuTLS, ...): linked, they cost every
// process, `bfhpo ask` on a journal too, 14 ms and 440 page faults at start
// (measured on the 2-core VM: a program that only links libpq, `perf stat`).
// The PostgreSQL storage calls libpq through these pointers only; their
// types come from libpq-fe.h, so a libpq whose functions differ does not
// compile. The soname is libpq.so.5, libpq's for every supported release
// (Debian 12's libpq5 package).
#pragma once

#include <libpq-fe.h>

#include <string>

namespace bfhpo::hpo {

struct Libpq {
  decltype(&::PQconnectdbParams) PQconnectdbParams;
  decltype(&::PQstatus) PQstatus;
  decltype(&::PQerrorMessage) PQerrorMessage;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor;
  decltype(&::PQfinish) PQfinish;
  decltype(&::PQexec) PQexec;
  decltype(&::PQexecParams) PQexecParams;
  decltype(&::PQresultStatus) PQresultStatus;
  decltype(&::PQresultErrorField) PQresultErrorField;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage;
  decltype(&::PQntuples) PQntuples;
  decltype(&::PQgetisnull) PQgetisnull;
  decltype(&::PQgetvalue) PQgetvalue;
  decltype(&::PQgetlength) PQgetlength;
  decltype(&::PQcmdTuples) PQcmdTuples;
  decltype(&::PQclear) PQclear;
};

// Loads libpq.so.5 on the first call (thread-safe) and gives its functions.
// A libpq that cannot be loaded, or lacks one of them, is a UserError naming
// `location` (the storage's URL), the field "storage" and the fix (install
// libpq5); a later call tries again.
const Libpq& load_libpq(const std::string& location);

}  // namespace bfhpo::hpo
