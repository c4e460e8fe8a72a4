// Benchmark parameters: each case declares its parameters once (name, type, documented default sweep,
// quick sweep, validation); the runner expands the sweeps into concrete Params, one per run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/config.hpp"

namespace pmlab::bench {

// text: free-form, the case validates. medium: "dram", "pool" or "numa:N" (media::parse_medium), its kind one
// of `choices`; a numa node must be a node with memory here, and "numa:all" stands for every such node.
enum class ParamType { integer, size, choice, real, boolean, text, medium };

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  std::string doc;
  std::vector<std::string> defaults;  // the full sweep
  std::vector<std::string> quick;     // the --quick sweep; empty means the full one
  std::vector<std::string> choices;   // allowed values of a choice
  int64_t min = INT64_MIN;            // bounds of integer and size values
  int64_t max = INT64_MAX;

  // Parses and range-checks one value; the error names the parameter and what it accepts.
  Result<nlohmann::ordered_json> parse(const std::string& text) const;
  // The values `text` stands for: itself, or for a medium "numa:all" every NUMA node with memory.
  std::vector<std::string> expand_value(const std::string& text) const;
  // Whether every value `text` stands for parses: the first one's error when one does not.
  Status check_value(const std::string& text) const;
  std::string describe_values() const;  // "64..16K", "clwb|clflushopt|…"
};

// One concrete point of a sweep: values in the case's parameter order.
class Params {
 public:
  void set(const std::string& name, nlohmann::ordered_json value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.contains(name); }
  const std::string& text(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  uint64_t size(const std::string& name) const { return static_cast<uint64_t>(integer(name)); }
  double real(const std::string& name) const;
  bool flag(const std::string& name) const;
  // The standard "domain" and "flush" parameters (std_params), typed: a case asks what the domain does
  // through persist's queries rather than comparing names.
  persist::Domain domain() const;
  persist::FlushInstruction flush() const;
  const nlohmann::ordered_json& json() const { return values_; }
  // "/key:value/…" in parameter order (sizes printed as given: 4096, not 4K, so names sort and parse).
  std::string name_suffix() const;

 private:
  nlohmann::ordered_json values_ = nlohmann::ordered_json::object();
};

// `--set name=v1,v2` options, by parameter name.
using Overrides = std::map<std::string, std::vector<std::string>>;
// Parses "name=v1,v2,…" into `into`; a repeated name replaces the earlier list.
Status parse_override(const std::string& text, Overrides& into);

// Cartesian product of each parameter's list (override, else quick or full default), in order.
Result<std::vector<Params>> expand(const std::vector<ParamSpec>& specs, const Overrides& overrides, bool quick);

}  // namespace pmlab::bench
