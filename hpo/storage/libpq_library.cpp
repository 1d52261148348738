#include "hpo/storage/libpq_library.hpp"

#include "common/user_error.hpp"

#include <dlfcn.h>

#include <mutex>

namespace bfhpo::hpo {
namespace {

constexpr const char* kSoname = "libpq.so.5";

template <class Function>
bool resolve(void* handle, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(handle, name));
  return function != nullptr;
}

}  // namespace

const Libpq& load_libpq(const std::string& location) {
  static std::mutex mutex;
  static Libpq library{};
  static bool loaded = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded) return library;
  const auto cannot = [&](const std::string& why) {
    return UserError::at(location, "storage", "cannot load libpq, PostgreSQL's client library (" + why + ")",
                         "install it (Debian/Ubuntu: apt install libpq5; it comes with libpq-dev), or use a journal "
                         "file as the storage");
  };
  void* handle = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    throw cannot(error ? error : kSoname);
  }
  Libpq l{};
  const bool complete =
      resolve(handle, "PQconnectdbParams", l.PQconnectdbParams) && resolve(handle, "PQstatus", l.PQstatus) &&
      resolve(handle, "PQerrorMessage", l.PQerrorMessage) &&
      resolve(handle, "PQsetNoticeProcessor", l.PQsetNoticeProcessor) && resolve(handle, "PQfinish", l.PQfinish) &&
      resolve(handle, "PQexec", l.PQexec) && resolve(handle, "PQexecParams", l.PQexecParams) &&
      resolve(handle, "PQresultStatus", l.PQresultStatus) &&
      resolve(handle, "PQresultErrorField", l.PQresultErrorField) &&
      resolve(handle, "PQresultErrorMessage", l.PQresultErrorMessage) && resolve(handle, "PQntuples", l.PQntuples) &&
      resolve(handle, "PQgetisnull", l.PQgetisnull) && resolve(handle, "PQgetvalue", l.PQgetvalue) &&
      resolve(handle, "PQgetlength", l.PQgetlength) && resolve(handle, "PQcmdTuples", l.PQcmdTuples) &&
      resolve(handle, "PQclear", l.PQclear);
  if (!complete) {
    const char* error = dlerror();
    const std::string why = error ? error : "a function is missing";
    dlclose(handle);
    throw cannot(std::string(kSoname) + ": " + why);
  }
  library = l;
  loaded = true;  // the handle stays open for the process's life
  return library;
}

}  // namespace bfhpo::hpo
