#include <catch2/catch.hpp>

#include "../hpo/scratch_folder.hpp"
#include "common/user_error.hpp"
#include "hpo/study_spec.hpp"
#include "inference/study_from_data.hpp"
#include "trials/study_settings.hpp"
#include "trials/trial_config.hpp"

#include <fstream>
#include <random>
#include <stdexcept>

using namespace bfhpo::inference;
using bfhpo::UserError;
using bfhpo::trials::parse_study_settings;
using bfhpo::trials::study_trial_config;
using bfhpo::trials::StudySettings;
using bfhpo::trials::TrialConfig;

namespace {

// P persons x J items answering categories 0..K-1 at random, each item using
// every category; `missing` of the cells (but never an item's first K rows) empty.
ResponseSummary random_summary(int64_t persons, int64_t items, int64_t categories, double missing = 0.0,
                               unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution empty(missing);
  ResponseSummary summary;
  summary.n_persons = persons;
  for (int64_t j = 0; j < items; ++j) {
    ItemResponses item{"q" + std::to_string(j + 1), categories, {}};
    for (int64_t p = categories; p < persons; ++p) item.answered += empty(rng) ? 0 : 1;
    for (int64_t k = 0; k < categories; ++k) item.categories.push_back(k);
    summary.items.push_back(item);
  }
  for (int64_t k = 0; k < categories; ++k) summary.categories.push_back(k);
  return summary;
}

std::string draft_error(const ResponseSummary& data, const std::string& model) {
  try {
    draft_study(data, model, "answers.csv");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// The draft as `bfhpo train` and `bfhpo optimize` read it.
TrialConfig read_back(const StudyDraft& draft) {
  const auto spec = bfhpo::hpo::parse_study_spec(nlohmann::json::parse(draft.study.dump()), "study.json");
  spec.require_search_space("optimize");
  const TrialConfig config = study_trial_config(spec);
  const StudySettings settings = parse_study_settings(spec);
  CHECK(settings.memory.budget_auto);
  return config;
}

}  // namespace

TEST_CASE("draft_study: the item and person ranges cover the file with a margin on each side", "[study_from_data]") {
  for (const auto& [persons, items] : std::vector<std::pair<int64_t, int64_t>>{
           {40, 3}, {200, 16}, {300, 5}, {1248, 16}, {5000, 57}}) {
    const auto draft = draft_study(random_summary(persons, items, 2), "2pl", "answers.csv");
    const auto config = read_back(draft);
    const auto& r = config.simulator.ranges;
    INFO(persons << " persons x " << items << " items");
    CHECK(r.min_items < items);
    CHECK(r.max_items > items);
    CHECK(r.min_items >= 2);
    CHECK(r.min_persons < persons);
    CHECK(r.max_persons > persons);
    CHECK(r.min_persons >= 2);
    // Margins of about a fifth: the training shapes stay near the file's.
    CHECK(r.max_items <= items + std::max<int64_t>(1, (items + 2) / 5));
    CHECK(r.max_persons <= persons + std::max<int64_t>(1, (persons + 2) / 5));
    CHECK(config.simulator.model == "2pl");
    CHECK(config.approximator.summary.item_fit);
    CHECK(draft.study["name"] == "answers-2pl");
  }
}

TEST_CASE("draft_study: a graded model's K is the number of categories found", "[study_from_data]") {
  for (const int64_t k : {3, 5, 6, 7}) {
    const auto draft = draft_study(random_summary(300, 5, k), "grm", "scale.csv");
    CHECK(read_back(draft).simulator.n_categories == k);
    CHECK(read_back(draft).approximator.param_dim == k);  // log a and K-1 thresholds
    CHECK(read_back(draft).approximator.summary.item_fit);  // the items' fitted curves an input
  }
  CHECK_FALSE(draft_study(random_summary(300, 5, 2), "3pl", "test.csv").study["simulator"].contains("n_categories"));
}

TEST_CASE("draft_study: the missing-rate range holds the file's share and every item's", "[study_from_data]") {
  const auto complete = draft_study(random_summary(200, 10, 2), "2pl", "complete.csv");
  CHECK_FALSE(complete.study["simulator"].contains("missing"));
  CHECK_FALSE(read_back(complete).simulator.missing.any());
  for (const double share : {0.004, 0.05, 0.3, 0.8}) {
    auto data = random_summary(400, 12, 2, share, 7);
    data.items[3].answered = data.n_persons / 3;  // one item most persons skipped
    const auto missing = read_back(draft_study(data, "2pl", "gaps.csv")).simulator.missing;
    INFO("share " << share << ": file " << data.missing_share() << ", range [" << missing.low << ", " << missing.high << "]");
    CHECK(missing.low > 0);
    CHECK(missing.low <= data.missing_share());
    CHECK(missing.high >= data.missing_share());
    CHECK(missing.high >= std::min(0.95, data.largest_item_missing_share()));
    CHECK(missing.high < 1);
  }
}

TEST_CASE("draft_study: longer training for more parameters per item, and its stated CPU time grows with the shape",
          "[study_from_data]") {
  CHECK(training_steps(1) <= training_steps(2));
  CHECK(training_steps(2) < training_steps(6));
  const auto steps = [](const StudyDraft& d) {
    return d.study["training"]["epochs"].get<int64_t>() * d.study["training"]["num_batches"].get<int64_t>();
  };
  const auto binary = draft_study(random_summary(300, 5, 2), "2pl", "a.csv");
  const auto graded = draft_study(random_summary(300, 5, 6), "grm", "a.csv");
  CHECK(steps(binary) >= training_steps(2));
  CHECK(steps(graded) >= training_steps(6));
  CHECK(steps(graded) > steps(binary));

  bfhpo::models::SimulatorSpec small;
  small.ranges = {4, 6, 240, 360};
  auto more_persons = small, more_items = small;
  more_persons.ranges.min_persons *= 4;
  more_persons.ranges.max_persons *= 4;
  more_items.ranges.min_items *= 4;
  more_items.ranges.max_items *= 4;
  const double base = expected_cpu_seconds(small, 32, 1000);
  CHECK(base > 0);
  CHECK(expected_cpu_seconds(small, 32, 2000) == Approx(2 * base));
  CHECK(expected_cpu_seconds(more_persons, 32, 1000) > 2 * base);
  CHECK(expected_cpu_seconds(more_items, 32, 1000) > 2 * base);
  CHECK(expected_cpu_seconds(small, 64, 1000) > 1.2 * base);

  // The choice states the length and the time.
  bool stated = false;
  for (const auto& choice : graded.choices)
    stated |= choice.what.rfind("training ", 0) == 0 && choice.why.find("CPU time") != std::string::npos;
  CHECK(stated);
}

TEST_CASE("draft_study: a file that cannot serve the model is refused with the fix", "[study_from_data]") {
  CHECK(draft_error(random_summary(100, 8, 2), "2pl").empty());
  CHECK_THAT(draft_error(random_summary(100, 1, 2), "2pl"), Catch::Contains("one item ('q1')") && Catch::Contains("Fix:"));
  CHECK_THAT(draft_error(random_summary(9, 10, 2), "rasch"),
             Catch::Contains("9 persons for 10 items") && Catch::Contains("Fix: add persons"));
  CHECK(draft_error(random_summary(10, 10, 2), "rasch").empty());

  auto constant = random_summary(100, 6, 5);
  constant.items[4].categories = {3};
  CHECK_THAT(draft_error(constant, "grm"),
             Catch::Contains("item 'q5'") && Catch::Contains("is 3") && Catch::Contains("Fix: drop its column"));
  auto unanswered = random_summary(100, 6, 2);
  unanswered.items[2].answered = 0;
  unanswered.items[2].categories.clear();
  CHECK_THAT(draft_error(unanswered, "2pl"), Catch::Contains("item 'q3' has no response"));

  auto gap = random_summary(100, 6, 4);
  gap.categories = {0, 1, 3};
  CHECK_THAT(draft_error(gap, "grm"),
             Catch::Contains("0,1,3") && Catch::Contains("2 never occurs") && Catch::Contains("consecutive"));
  auto from_one = random_summary(100, 6, 6);
  from_one.categories = {1, 2, 3, 4, 5};
  CHECK_THAT(draft_error(from_one, "grm"), Catch::Contains("subtract 1") && Catch::Contains("1..5 becomes 0..4"));

  CHECK_THAT(draft_error(random_summary(100, 6, 2), "grm"), Catch::Contains("binary responses") &&
                                                                Catch::Contains("--model 2pl"));
  for (const char* binary_model : {"rasch", "2pl", "3pl"})
    CHECK_THAT(draft_error(random_summary(100, 6, 4), binary_model),
               Catch::Contains("graded responses (0..3)") && Catch::Contains("--model grm"));
}

TEST_CASE("summarize_responses: counts what the reader read, missing cells apart", "[study_from_data]") {
  ScratchFolder folder("study_from_data", "summary");
  const auto file = folder.dir / "answers.csv";
  std::ofstream(file) << "id,a,b,c\n1,0,2,NA\n2,1,,4\n3,0,0,\n4,1,2,3\n";
  const auto data = read_response_matrix(file, "", ResponseFormat{kMostCategories, true});
  const auto summary = summarize_responses(data);
  CHECK(summary.n_persons == 4);
  REQUIRE(summary.n_items() == 3);
  CHECK(summary.items[0].name == "a");
  CHECK(summary.items[0].answered == 4);
  CHECK(summary.items[0].categories == std::vector<int64_t>{0, 1});
  CHECK(summary.items[1].answered == 3);
  CHECK(summary.items[1].categories == std::vector<int64_t>{0, 2});
  CHECK(summary.items[2].categories == std::vector<int64_t>{3, 4});
  CHECK(summary.categories == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(summary.missing_share() == Approx(3.0 / 12.0));
  CHECK(summary.largest_item_missing_share() == Approx(0.5));
}

TEST_CASE("a training study without a search space is valid for train and refused by optimize", "[study_from_data]") {
  const nlohmann::json document = {{"name", "one"},
                                   {"simulator", {{"model", "2pl"}}},
                                   {"training", {{"epochs", 2}, {"device", "cpu"}}}};
  const auto spec = bfhpo::hpo::parse_study_spec(document, "one.json");
  CHECK(study_trial_config(spec).training.epochs == 2);
  try {
    spec.require_search_space("optimize");
    FAIL("optimize accepted a study without a search space");
  } catch (const UserError& e) {
    CHECK_THAT(e.what(), Catch::Contains("one.json") && Catch::Contains("search_space") &&
                             Catch::Contains("bfhpo train one.json"));
  }
}

TEST_CASE("draft_study: log a's prior is centred on the file's items where the default misses them",
          "[study_from_data]") {
  const auto data = random_summary(500, 5, 7);
  const auto prior_of = [&](const std::vector<double>& estimates) {
    return read_back(draft_study(data, "grm", "scale.csv", estimates)).simulator.priors.log_a;
  };
  // A personality scale's discriminations (a 2.1 to 2.7): the prior moves to them, its sd stays the default's.
  const auto high = prior_of({0.76, 0.98, 0.77, 0.74, 0.81});
  CHECK(high.mean == Approx(0.8));
  CHECK(high.sd == Approx(0.5));
  // Estimates spread wider than the default's sd widen the prior to cover them.
  const auto spread = prior_of({-1.2, -0.3, 0.4, 1.3, 2.0});
  CHECK(spread.mean == Approx(0.4));
  CHECK(spread.sd == Approx(1.3));  // their sd 1.28, up to a tenth
  // Within a quarter of the default's sd of its centre the default stays (mean 0.05, sd 0.37).
  const auto near = prior_of({-0.5, 0.5, 0.1, 0.2, -0.05});
  CHECK(near.mean == 0.0);
  CHECK(near.sd == Approx(0.5));
  // Without estimates (as for the Rasch model) the default; and the choice names the prior and the items' range.
  const auto plain = read_back(draft_study(data, "grm", "scale.csv")).simulator.priors.log_a;
  CHECK(plain.mean == 0.0);
  CHECK(plain.sd == Approx(0.5));
  bool stated = false;
  for (const auto& choice : draft_study(data, "grm", "scale.csv", {0.76, 0.98}).choices)
    stated |= choice.what == "priors log_a N(0.9, 0.5)" && choice.why.find("0.76 to 0.98") != std::string::npos;
  CHECK(stated);
}

namespace {

const StudyChoice& choice_starting(const StudyDraft& draft, const std::string& what) {
  for (const auto& choice : draft.choices)
    if (choice.what.rfind(what, 0) == 0) return choice;
  FAIL("no choice starts with " << what);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("draft_study: the study's name from a file name with a tab, a newline or bytes that are not UTF-8",
          "[study_from_data]") {
  const auto named = [](const std::string& file) {
    const auto draft = draft_study(random_summary(100, 8, 2), "2pl", file);
    const std::string text = draft.study.dump();  // JSON is UTF-8: throws on a byte that is not
    return bfhpo::hpo::parse_study_spec(nlohmann::json::parse(text), "study.json").name;  // every verb's reader
  };
  CHECK(named("/data/a\tb\nc.csv") == "a_b_c-2pl");
  CHECK(named("/data/caf\xff\xfe.csv") == "caf__-2pl");
  CHECK(named("/data/\xe2\x82.csv") == "__-2pl");  // a sequence cut short
  CHECK(named("/data/\xed\xa0\x80.csv") == "___-2pl");  // a surrogate is not UTF-8
  CHECK(named("/data/caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80.csv") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80-2pl");
}

TEST_CASE("draft_study: one parameter per item in the singular", "[study_from_data]") {
  CHECK_THAT(choice_starting(draft_study(random_summary(100, 8, 2), "rasch", "a.csv"), "training ").why,
             Catch::StartsWith("1 parameter per item;"));
  CHECK_THAT(choice_starting(draft_study(random_summary(100, 8, 2), "2pl", "a.csv"), "training ").why,
             Catch::StartsWith("2 parameters per item;"));
}

TEST_CASE("draft_study: a file missing more than training's most says what lies beyond the range",
          "[study_from_data]") {
  const auto within = choice_starting(draft_study(random_summary(400, 12, 2, 0.3, 7), "2pl", "a.csv"), "missing ");
  CHECK_THAT(within.why, Catch::Contains("so the file's empty cells are read as missing"));
  auto sparse = random_summary(2000, 12, 2, 0.99, 7);
  const double share = sparse.missing_share();
  REQUIRE(share > kMostMissing);
  const auto draft = draft_study(sparse, "2pl", "sparse.csv");
  CHECK(draft.study["simulator"]["missing"][1] == kMostMissing);
  const auto beyond = choice_starting(draft, "missing ");
  CHECK_THAT(beyond.why, Catch::Contains("capped at 0.95") && Catch::Contains("the file's share itself lies beyond it") &&
                             !Catch::Contains("read as missing"));
  // Only one item beyond it.
  auto one = random_summary(400, 12, 2, 0.3, 7);
  one.items[3].answered = 4;
  CHECK_THAT(choice_starting(draft_study(one, "2pl", "a.csv"), "missing ").why,
             Catch::Contains("capped at 0.95") && Catch::Contains("the shares of the items missing more lie beyond it"));
}

TEST_CASE("fresh_journal: the default journal when free, else the first free <stem>-N.journal beside it",
          "[study_from_data]") {
  ScratchFolder scratch("study_from_data", "fresh_journal");
  const auto study = scratch.dir / "study.json";
  CHECK_FALSE(fresh_journal(study));
  std::ofstream(scratch.dir / "study.json.journal") << "old trials\n";
  CHECK(fresh_journal(study) == std::string("study-2.journal"));
  std::ofstream(scratch.dir / "study-2.journal") << "older trials\n";
  CHECK(fresh_journal(study) == std::string("study-3.journal"));
  // Read back as "storage" is: beside the study file.
  auto draft = draft_study(random_summary(100, 8, 2), "2pl", "a.csv");
  draft.study["storage"] = *fresh_journal(study);
  const auto spec = bfhpo::hpo::parse_study_spec(nlohmann::json::parse(draft.study.dump()), study);
  CHECK(spec.storage == scratch.dir / "study-3.journal");
}

TEST_CASE("init_response_format: a cell that is no response gets what the model's file holds", "[study_from_data]") {
  ScratchFolder scratch("study_from_data", "init_format");
  const auto file = scratch.dir / "bad.csv";
  std::ofstream(file) << "q1,q2\n0,1\n1,x\n";
  const auto error = [&](const std::string& model) {
    try {
      read_response_matrix(file, "", init_response_format(model));
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const auto binary = error("2pl");
  CHECK_THAT(binary, Catch::Contains("'x' is not a response of this model. Fix: 0 or 1 (the 2pl model's responses)"));
  // The fix names the two responses, no range of categories; the file's path before it may hold any digits
  // (the scratch folder is named after the process id).
  REQUIRE(binary.find("Fix:") != std::string::npos);
  CHECK_THAT(binary.substr(binary.find("Fix:")), !Catch::Contains("100"));
  CHECK_THAT(error("grm"), Catch::Contains("Fix: an integer 0..K-1 (a graded model's K categories"));
}
