#include "hpo/storage/storage.hpp"

#include <chrono>

namespace bfhpo::hpo {

double unix_seconds_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace bfhpo::hpo
