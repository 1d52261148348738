#include "models/approximator_spec.hpp"

#include "common/config_reader.hpp"

#include <functional>
#include <map>
#include <stdexcept>

namespace bfhpo::models {

// Found by argument-dependent lookup, so it lives in the enum's namespace.
NLOHMANN_JSON_SERIALIZE_ENUM(Activation, {{Activation::relu, "relu"}, {Activation::silu, "silu"},
                                          {Activation::gelu, "gelu"}})

namespace {

using nlohmann::json;

// One field of the spec: how to read it from JSON and how to write it.
struct Field {
  std::function<void(ApproximatorSpec&, const json&, const std::string& where, const std::string& name)> set;
  std::function<json(const ApproximatorSpec&)> get;
};

// Widths and counts: far beyond any network, and their products stay in int64.
constexpr int64_t kMaxSize = int64_t{1} << 31;

int64_t read_int(const json& v, const std::string& where, const std::string& name) {
  return config_integer(v, where, name, -kMaxSize, kMaxSize);
}

double read_double(const json& v, const std::string& where, const std::string& name) {
  return config_number(v, where, name);
}

bool read_bool(const json& v, const std::string& where, const std::string& name) {
  return config_boolean(v, where, name);
}

Activation read_activation(const json& v, const std::string& where, const std::string& name) {
  if (v == "relu" || v == "silu" || v == "gelu") return v.get<Activation>();
  throw UserError::at(where, name, "unknown activation " + v.dump(), "use \"relu\", \"silu\" or \"gelu\"");
}

// `member` maps a spec (const or not) to a reference to one of its fields.
template <typename Member, typename Reader>
Field field(Member member, Reader read) {
  return {[member, read](ApproximatorSpec& s, const json& v, const std::string& w, const std::string& n) {
            member(s) = read(v, w, n);
          },
          [member](const ApproximatorSpec& s) { return json(member(s)); }};
}

// An optional chunk size of the MemoryConfig: null or absent is none.
template <typename Member>
Field chunk_field(Member member) {
  return {[member](ApproximatorSpec& s, const json& v, const std::string& w, const std::string& n) {
            if (v.is_null()) {
              member(s).reset();
            } else {
              member(s) = read_int(v, w, n);
            }
          },
          [member](const ApproximatorSpec& s) { return member(s) ? json(*member(s)) : json(nullptr); }};
}

#define BFHPO_MEMBER(path) [](auto& s) -> auto& { return s.path; }

const std::map<std::string, Field>& fields() {
  static const std::map<std::string, Field> all{
      {"param_dim", field(BFHPO_MEMBER(param_dim), read_int)},
      {"n_categories", field(BFHPO_MEMBER(n_categories), read_int)},
      {"summary.cell_dim", field(BFHPO_MEMBER(summary.cell_dim), read_int)},
      {"summary.cell_mlp_width", field(BFHPO_MEMBER(summary.cell_mlp_width), read_int)},
      {"summary.cell_mlp_depth", field(BFHPO_MEMBER(summary.cell_mlp_depth), read_int)},
      {"summary.embed_dim", field(BFHPO_MEMBER(summary.embed_dim), read_int)},
      {"summary.attention_heads", field(BFHPO_MEMBER(summary.attention_heads), read_int)},
      {"summary.attention_layers", field(BFHPO_MEMBER(summary.attention_layers), read_int)},
      {"summary.summary_dim", field(BFHPO_MEMBER(summary.summary_dim), read_int)},
      {"summary.dropout", field(BFHPO_MEMBER(summary.dropout), read_double)},
      {"summary.item_fit", field(BFHPO_MEMBER(summary.item_fit), read_bool)},
      {"summary.activation", field(BFHPO_MEMBER(summary.activation), read_activation)},
      {"flow.depth", field(BFHPO_MEMBER(flow.depth), read_int)},
      {"flow.subnet_width", field(BFHPO_MEMBER(flow.subnet_width), read_int)},
      {"flow.subnet_depth", field(BFHPO_MEMBER(flow.subnet_depth), read_int)},
      {"flow.clamp", field(BFHPO_MEMBER(flow.clamp), read_double)},
      {"flow.dropout", field(BFHPO_MEMBER(flow.dropout), read_double)},
      {"flow.activation", field(BFHPO_MEMBER(flow.activation), read_activation)},
      {"calibration.enabled", field(BFHPO_MEMBER(calibration.enabled), read_bool)},
      {"calibration.weight", field(BFHPO_MEMBER(calibration.weight), read_double)},
      {"calibration.n_post_samples", field(BFHPO_MEMBER(calibration.n_post_samples), read_int)},
      {"calibration.log_prob_chunk_size", field(BFHPO_MEMBER(calibration.log_prob_chunk_size), read_int)},
      {"calibration.conservative", field(BFHPO_MEMBER(calibration.conservative), read_bool)},
      {"calibration.ste_temperature", field(BFHPO_MEMBER(calibration.ste_temperature), read_double)},
      {"memory.item_chunk_size", chunk_field(BFHPO_MEMBER(memory.item_chunk_size))},
      {"memory.person_chunk_size", chunk_field(BFHPO_MEMBER(memory.person_chunk_size))},
      {"memory.gradient_checkpointing", field(BFHPO_MEMBER(memory.gradient_checkpointing), read_bool)},
  };
  return all;
}

#undef BFHPO_MEMBER

void apply_object(ApproximatorSpec& spec, const json& object, const std::string& prefix, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      apply_object(spec, value, name, where);
    } else {
      set_spec_field(spec, name, value, where);
    }
  }
}

void require(bool ok, const std::string& where, const std::string& field, const std::string& problem,
             const std::string& fix) {
  if (!ok) throw UserError::at(where, field, problem, fix);
}

}  // namespace

bool is_spec_field(const std::string& dotted_name) { return fields().count(dotted_name) > 0; }

std::vector<std::string> approximator_field_names() {
  std::vector<std::string> names;
  for (const auto& entry : fields()) names.push_back(entry.first);
  return names;
}

void set_spec_field(ApproximatorSpec& spec, const std::string& dotted_name, const json& value,
                    const std::string& where) {
  const auto it = fields().find(dotted_name);
  if (it == fields().end())
    throw UserError::at(where, dotted_name, "unknown approximator field",
                        "did you mean '" + closest_name(dotted_name, approximator_field_names()) + "'?");
  it->second.set(spec, value, where, dotted_name);
}

ApproximatorSpec approximator_spec_from_json(const json& json_spec, const std::string& where) {
  require(json_spec.is_object(), where, "approximator", "expected a JSON object", "give {\"summary\": {...}, ...}");
  ApproximatorSpec spec;
  apply_object(spec, json_spec, "", where);
  validate(spec, where);
  return spec;
}

json to_json(const ApproximatorSpec& spec) {
  json out = json::object();
  for (const auto& [name, field] : fields()) {
    const auto dot = name.find('.');
    if (dot == std::string::npos) {
      out[name] = field.get(spec);
    } else {
      out[name.substr(0, dot)][name.substr(dot + 1)] = field.get(spec);
    }
  }
  return out;
}

json to_json(const MemoryConfig& memory) {
  ApproximatorSpec spec;
  spec.memory = memory;
  return to_json(spec)["memory"];
}

void validate(const ApproximatorSpec& spec, const std::string& where) {
  const auto positive = [&](int64_t value, const char* name) {
    require(value > 0, where, name, "must be positive, got " + std::to_string(value), "give a value >= 1");
  };
  const auto fraction = [&](double value, const char* name) {
    require(value >= 0.0 && value < 1.0, where, name, "must be in [0, 1), got " + std::to_string(value),
            "give a dropout rate such as 0.1");
  };
  positive(spec.param_dim, "param_dim");
  require(spec.n_categories >= 2, where, "n_categories", "must be at least 2, got " + std::to_string(spec.n_categories),
          "give the number of response categories (2 for binary items)");
  const auto& s = spec.summary;
  positive(s.cell_dim, "summary.cell_dim");
  positive(s.cell_mlp_width, "summary.cell_mlp_width");
  require(s.cell_mlp_depth >= 0, where, "summary.cell_mlp_depth", "must be >= 0", "give 0 or more hidden layers");
  positive(s.embed_dim, "summary.embed_dim");
  positive(s.attention_heads, "summary.attention_heads");
  require(s.embed_dim % s.attention_heads == 0, where, "summary.attention_heads",
          std::to_string(s.attention_heads) + " heads do not divide embed_dim " + std::to_string(s.embed_dim),
          "choose heads that divide summary.embed_dim");
  require(s.attention_layers >= 0, where, "summary.attention_layers", "must be >= 0", "give 0 or more layers");
  positive(s.summary_dim, "summary.summary_dim");
  fraction(s.dropout, "summary.dropout");
  const auto& f = spec.flow;
  positive(f.depth, "flow.depth");
  positive(f.subnet_width, "flow.subnet_width");
  require(f.subnet_depth >= 0, where, "flow.subnet_depth", "must be >= 0", "give 0 or more hidden layers");
  require(f.clamp > 0.0, where, "flow.clamp", "must be positive", "give a soft clamp such as 1.9");
  fraction(f.dropout, "flow.dropout");
  const auto& c = spec.calibration;
  require(c.weight >= 0.0, where, "calibration.weight", "must be >= 0", "give a weight such as 1.0");
  positive(c.n_post_samples, "calibration.n_post_samples");
  positive(c.log_prob_chunk_size, "calibration.log_prob_chunk_size");
  require(c.ste_temperature > 0.0, where, "calibration.ste_temperature", "must be positive",
          "give a temperature such as 0.01");
  if (spec.memory.item_chunk_size) positive(*spec.memory.item_chunk_size, "memory.item_chunk_size");
  if (spec.memory.person_chunk_size) positive(*spec.memory.person_chunk_size, "memory.person_chunk_size");
}

}  // namespace bfhpo::models
