// JournalStorage::Replay::Fast (FlatJsonObject for the common lines) must give the
// same state, bit for bit, and the same errors as Replay::Full (nlohmann for
// every line), on journals with every op code and the odd corners of JSON.
#include "hpo/storage/journal_storage.hpp"
#include "hpo/journal_json.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

using namespace bfhpo::hpo;

namespace {

struct ScratchFile {
  std::filesystem::path path;
  explicit ScratchFile(const std::string& tag)
      : path(std::filesystem::temp_directory_path() / ("bfhpo_replay_paths_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove(path);
  }
  ~ScratchFile() { std::filesystem::remove(path); }
  void write(const std::string& text) const { std::ofstream(path, std::ios::trunc) << text; }
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_same_state(const JournalStorage& fast, const JournalStorage& full) {
  const auto fast_studies = fast.studies(), full_studies = full.studies();
  REQUIRE(fast_studies.size() == full_studies.size());
  for (std::size_t s = 0; s < fast_studies.size(); ++s) {
    CHECK(fast_studies[s].name == full_studies[s].name);
    CHECK(fast_studies[s].directions == full_studies[s].directions);
    CHECK(dump_python_json(fast_studies[s].user_attrs) == dump_python_json(full_studies[s].user_attrs));
    CHECK(dump_python_json(fast_studies[s].system_attrs) == dump_python_json(full_studies[s].system_attrs));
    const auto a = fast.trials(fast_studies[s].study_id), b = full.trials(full_studies[s].study_id);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO("study " << s << " trial " << i);
      CHECK(a[i].number == b[i].number);
      CHECK(a[i].trial_id == b[i].trial_id);
      CHECK(a[i].state == b[i].state);
      REQUIRE(a[i].value().has_value() == b[i].value().has_value());
      if (a[i].value()) CHECK(same_bits(*a[i].value(), *b[i].value()));
      REQUIRE(a[i].params.size() == b[i].params.size());
      for (auto x = a[i].params.begin(), y = b[i].params.begin(); x != a[i].params.end(); ++x, ++y) {
        CHECK(x->first == y->first);
        CHECK(same_bits(x->second, y->second));
      }
      CHECK(a[i].distributions == b[i].distributions);
      REQUIRE(a[i].intermediate_values.size() == b[i].intermediate_values.size());
      for (auto x = a[i].intermediate_values.begin(), y = b[i].intermediate_values.begin();
           x != a[i].intermediate_values.end(); ++x, ++y) {
        CHECK(x->first == y->first);
        CHECK(same_bits(x->second, y->second));
      }
      CHECK(dump_python_json(a[i].user_attrs) == dump_python_json(b[i].user_attrs));
      CHECK(dump_python_json(a[i].system_attrs) == dump_python_json(b[i].system_attrs));
      CHECK(a[i].datetime_start == b[i].datetime_start);
      CHECK(a[i].datetime_complete == b[i].datetime_complete);
    }
  }
}

// Random journal lines in the shapes Python's json.dumps and bfhpo write, and odder ones.
class LineMaker {
 public:
  explicit LineMaker(std::uint64_t seed) : rng_(seed) {}

  std::string line(int n_trials) {
    switch (pick(14)) {
      case 0: return object({{"op_code", "0"}, {"study_name", quoted(pick({"s", "t", "\\u00e9tude"}))},
                             {"directions", pick({"[1]", "[2]"})}});
      case 1: return object({{"op_code", "1"}, {"study_id", std::to_string(pick(3))}});
      case 2: {
        const bool user = pick(2);
        return object({{"op_code", user ? "2" : "3"}, {"study_id", std::to_string(pick(2))},
                       {user ? "user_attr" : "system_attr", attr_object()}});
      }
      case 3: {
        std::vector<std::pair<std::string, std::string>> fields{{"op_code", "4"}, {"study_id", std::to_string(pick(2))}};
        if (pick(4)) fields.push_back({"datetime_start", pick(5) ? quoted("2026-12-02T10:00:00.123456") : "null"});
        if (!pick(3)) fields.push_back({"state", pick({"0", "4", "1"})});
        if (!pick(5)) {  // a template trial, as Optuna's enqueue_trial / add_trial write it
          const std::string name = param_name();
          fields.push_back({"params", "{" + quoted(name) + ": " + number() + "}"});
          fields.push_back({"distributions", "{" + quoted(name) + ": " + quoted(distribution()) + "}"});
          fields.push_back({"user_attrs", attr_object()});
          fields.push_back({"system_attrs", "{}"});
          fields.push_back({"intermediate_values", "{\"3\": " + number() + "}"});
          if (pick(2)) fields.push_back({"value", number()});
          else fields.push_back({"values", "[" + number() + "]"});
        }
        return object(fields);
      }
      case 4: case 5: case 6: case 7:
        return object({{"op_code", "5"}, {"trial_id", trial_id(n_trials)}, {"param_name", quoted(param_name())},
                       {"param_value_internal", number()}, {"distribution", quoted(distribution())}});
      case 8: case 9: {
        std::vector<std::pair<std::string, std::string>> fields{
            {"op_code", "6"}, {"trial_id", trial_id(n_trials)}, {"state", pick({"0", "1", "2", "3", "4"})}};
        if (pick(4)) fields.push_back({"values", pick({"null", "[]", "[" + number() + "]", "[" + number() + ", 2]"})});
        if (pick(2)) fields.push_back({"datetime_start", quoted("2026-12-02T10:00:01")});
        if (pick(2)) fields.push_back({"datetime_complete", quoted("2026-12-02T10:00:02")});
        return object(fields);
      }
      case 10: case 11:
        return object({{"op_code", "7"}, {"trial_id", trial_id(n_trials)}, {"step", std::to_string(pick(5))},
                       {"intermediate_value", number()}});
      default: {
        const bool user = pick(2);
        return object({{"op_code", user ? "8" : "9"}, {"trial_id", trial_id(n_trials)},
                       {user ? "user_attr" : "system_attr", attr_object()}});
      }
    }
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::string pick(std::initializer_list<std::string> options) { return *(options.begin() + pick(static_cast<int>(options.size()))); }
  // Texts here are already JSON-escaped.
  static std::string quoted(const std::string& text) { return "\"" + text + "\""; }
  // Members in random order, with json.dumps' ", " / ": " or compact separators and a worker id.
  std::string object(std::vector<std::pair<std::string, std::string>> fields) {
    fields.push_back({"worker_id", quoted(pick({"0b1c-42", "w", "0b1c-42", "w", "caf\\u00e9"}))});
    if (!pick(6)) fields.push_back({"extra", pick({"[1, {\"a\": [true, null]}]", "false", "\"x\\ty\"", "-0.0e0"})});
    std::shuffle(fields.begin() + 1, fields.end(), rng_);
    const bool compact = pick(2);
    std::string out = pick(8) ? "{" : " {";
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) out += compact ? "," : ", ";
      out += "\"" + fields[i].first + "\"" + (compact ? ":" : ": ") + fields[i].second;
    }
    return out + (pick(8) ? "}" : "}\t");
  }
  std::string trial_id(int n_trials) { return std::to_string(pick(n_trials + 2)); }
  std::string number() {
    return pick({"0", "-0", "1", "-17", "0.5", "-2.25e-3", "1E+2", "3.0000000000000004", "123456789012345678",
                 "1234567890123456789012", "1e-320", "NaN", "Infinity", "-Infinity", "0.1", "7"});
  }
  std::string param_name() {
    return pick({"x", "lr", "caf\xc3\xa9", "\\u03b8", "a\\\"b", "back\\\\slash", "tab\\there", "new\\nline",
                 "sl\\/ash", "x", "lr"});
  }
  std::string distribution() {
    return pick({R"({\"name\": \"FloatDistribution\", \"attributes\": {\"step\": null, \"low\": -5.0, \"high\": 5.0, \"log\": false}})",
                 R"({\"name\": \"IntDistribution\", \"attributes\": {\"log\": false, \"step\": 1, \"low\": 0, \"high\": 10}})",
                 R"({\"name\":\"CategoricalDistribution\",\"attributes\":{\"choices\":[\"a\",\"\\u00e9\",null,1.5]}})"});
  }
  std::string attr_object() {
    return pick({"{\"heartbeat\": 1733133600.25}", "{\"note\": \"NaN Infinity\"}", "{\"v\": NaN}",
                 "{\"nested\": {\"a\": [1, -Infinity, \"\\u00e9\"]}, \"b\": null}", "{\"caf\xc3\xa9\": \"\\\"q\\\"\"}",
                 "{}"});
  }

  std::mt19937_64 rng_;
};

}  // namespace

TEST_CASE("fast and full replay give bit-identical state on random journals with every op code") {
  ScratchFile file("property");
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    INFO("seed " << seed);
    LineMaker maker(seed);
    std::string text = R"({"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]})" "\n";
    int creates = 0;
    for (int i = 0; i < 300; ++i) {
      std::string line = maker.line(creates);
      creates += line.find("\"op_code\": 4") != std::string::npos || line.find("\"op_code\":4") != std::string::npos;
      text += line + "\n";
    }
    if (seed % 2) text += R"({"op_code": 5, "trial_id": 0, "param_na)";  // a torn last line
    file.write(text);
    JournalStorage fast(file.path, StorageAccess::ReadWrite, JournalStorage::Replay::Fast);
    JournalStorage full(file.path, StorageAccess::ReadWrite, JournalStorage::Replay::Full);
    check_same_state(fast, full);
  }
}

TEST_CASE("fast and full replay report a corrupt line with the same error") {
  ScratchFile file("corrupt");
  const std::string head = R"({"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]})" "\n"
                           R"({"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": null})" "\n";
  const std::string tail = R"({"op_code": 7, "worker_id": "w", "trial_id": 0, "step": 1, "intermediate_value": 2})" "\n";
  for (const std::string bad : {
           R"({"op_code": 5, "worker_id": "w", "trial_id": 0, "param_name": "x", "param_value_internal": 1, "distribution": "{bad"})",
           R"({"op_code": 5, "worker_id": "w", "trial_id": 0, "param_name": "x", "param_value_internal": "1", "distribution": "{}"})",
           R"({"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 1, "values": ["x"]})",
           R"({"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 1, "datetime_complete": null})",
           R"({"op_code": 7, "worker_id": "w", "trial_id": 0, "step": 1, "intermediate_value": NaNx})",
           R"({"op_code": 7, "worker_id": "w", "trial_id": 0, "step": 1})",
           R"({"op_code": 9, "worker_id": "w", "trial_id": 0, "system_attr": [1]})",
           R"({"op_code": 9, "worker_id": "w\q", "trial_id": 0, "system_attr": {}})",
           R"({"op_code": 8, "worker_id": "w", "trial_id": 0, "user_attr": {"a": 01}})",
           R"({"op_code": 6, "worker_id": "w", "trial_id": 0, "state": 1,)",
           R"({"op_code": 42, "worker_id": "w"})"}) {
    INFO(bad);
    file.write(head + bad + "\n" + tail);
    std::string fast_error, full_error;
    try {
      JournalStorage j(file.path, StorageAccess::ReadWrite, JournalStorage::Replay::Fast);
    } catch (const std::exception& e) {
      fast_error = e.what();
    }
    try {
      JournalStorage j(file.path, StorageAccess::ReadWrite, JournalStorage::Replay::Full);
    } catch (const std::exception& e) {
      full_error = e.what();
    }
    CHECK_THAT(full_error, Catch::Contains("line 3"));
    CHECK(fast_error == full_error);
  }
}
