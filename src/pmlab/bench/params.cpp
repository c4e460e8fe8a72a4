#include "pmlab/bench/params.hpp"

#include <algorithm>
#include <stdexcept>

#include "pmlab/common/units.hpp"
#include "pmlab/record/record.hpp"
#include "pmlab/media/region.hpp"
#include "pmlab/platform/memory_tiers.hpp"

namespace pmlab::bench {

namespace {

constexpr const char* kAllNodes = "numa:all";

// The NUMA nodes with memory, read once (a run's nodes do not change under it).
const std::vector<int>& memory_nodes() {
  static const std::vector<int> nodes = [] {
    std::vector<int> ids;
    for (const platform::MemoryNode& n : platform::read_memory_topology().nodes)
      if (n.memory_bytes > 0) ids.push_back(n.id);
    return ids;
  }();
  return nodes;
}

std::string describe_nodes(const std::vector<int>& nodes) {
  if (nodes.empty()) return "no node with memory is listed in /sys/devices/system/node";
  std::string out = nodes.size() == 1 ? "the node with memory: " : "nodes with memory: ";
  for (size_t i = 0; i < nodes.size(); ++i) out += (i ? ", " : "") + std::to_string(nodes[i]);
  return out;
}

}  // namespace

Result<nlohmann::ordered_json> ParamSpec::parse(const std::string& text) const {
  auto bad = [&](const std::string& why) {
    return error(Errc::invalid_argument, "parameter " + name + "=" + text + ": " + why);
  };
  switch (type) {
    case ParamType::integer:
    case ParamType::size: {
      int64_t v = 0;
      if (type == ParamType::size) {
        auto s = parse_size(text);
        if (!s) return bad(s.status().message());
        if (*s > static_cast<uint64_t>(INT64_MAX)) return bad("too large");
        v = static_cast<int64_t>(*s);
      } else {
        auto i = parse_int(text);
        if (!i) return bad(i.status().message());
        v = *i;
      }
      if (v < min || v > max) return bad("must be within " + describe_values());
      return nlohmann::ordered_json(v);
    }
    case ParamType::real: {
      try {
        size_t used = 0;
        double v = std::stod(text, &used);
        if (used != text.size()) return bad("not a number");
        if (v < static_cast<double>(min) || v > static_cast<double>(max))
          return bad("must be within " + describe_values());
        return nlohmann::ordered_json(v);
      } catch (const std::exception&) { return bad("not a number"); }
    }
    case ParamType::boolean:
      if (text == "true" || text == "1" || text == "on") return nlohmann::ordered_json(true);
      if (text == "false" || text == "0" || text == "off") return nlohmann::ordered_json(false);
      return bad("must be true or false");
    case ParamType::text:
      if (text.empty() || text.find_first_of("/:") != std::string::npos)
        return bad("must be non-empty and hold no '/' or ':' (they separate a run name's parameters)");
      return nlohmann::ordered_json(text);
    case ParamType::choice:
      if (std::find(choices.begin(), choices.end(), text) == choices.end())
        return bad("must be one of " + describe_values());
      return nlohmann::ordered_json(text);
    case ParamType::medium: {
      auto medium = media::parse_medium(text);
      if (!medium)
        return bad(text.rfind("numa", 0) == 0 ? medium.status().message() : "must be one of " + describe_values());
      if (std::find(choices.begin(), choices.end(), media::to_string(medium->kind)) == choices.end())
        return bad("must be one of " + describe_values());
      if (medium->kind == media::Kind::numa) {
        const std::vector<int>& nodes = memory_nodes();
        if (std::find(nodes.begin(), nodes.end(), medium->node) == nodes.end())
          return bad("no NUMA node " + std::to_string(medium->node) + " with memory is online here (" +
                     describe_nodes(nodes) + ")");
      }
      return nlohmann::ordered_json(media::to_string(*medium));
    }
  }
  return bad("unknown type");
}

std::vector<std::string> ParamSpec::expand_value(const std::string& text) const {
  if (type != ParamType::medium || text != kAllNodes) return {text};
  std::vector<std::string> out;
  for (const int node : memory_nodes()) out.push_back("numa:" + std::to_string(node));
  return out;
}

Status ParamSpec::check_value(const std::string& text) const {
  for (const std::string& t : expand_value(text))
    if (auto v = parse(t); !v) return v.status();
  return Status::success();
}

std::string ParamSpec::describe_values() const {
  switch (type) {
    case ParamType::choice: {
      std::string out;
      for (const auto& c : choices) out += (out.empty() ? "" : "|") + c;
      return out;
    }
    case ParamType::medium: {
      std::string out;
      for (const auto& c : choices)
        out += (out.empty() ? "" : "|") + (c == "numa" ? std::string("numa:N|") + kAllNodes : c);
      return out + (std::find(choices.begin(), choices.end(), "numa") != choices.end()
                        ? " (" + describe_nodes(memory_nodes()) + ")"
                        : "");
    }
    case ParamType::boolean: return "true|false";
    case ParamType::text: return "text";
    case ParamType::size:
      return format_size(static_cast<uint64_t>(std::max<int64_t>(min, 0))) + ".." +
             (max == INT64_MAX ? std::string("") : format_size(static_cast<uint64_t>(max)));
    default:
      return (min == INT64_MIN ? std::string("") : std::to_string(min)) + ".." +
             (max == INT64_MAX ? std::string("") : std::to_string(max));
  }
}

const std::string& Params::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || !it->is_string()) throw std::logic_error("no text parameter " + name);
  return it->get_ref<const std::string&>();
}

int64_t Params::integer(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || !it->is_number_integer()) throw std::logic_error("no integer parameter " + name);
  return it->get<int64_t>();
}

double Params::real(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || !it->is_number()) throw std::logic_error("no real parameter " + name);
  return it->get<double>();
}

persist::Domain Params::domain() const {
  auto d = persist::parse_domain(text("domain"));
  if (!d) throw std::logic_error(d.status().message());
  return *d;
}

persist::FlushInstruction Params::flush() const {
  auto f = persist::parse_flush(text("flush"));
  if (!f) throw std::logic_error(f.status().message());
  return *f;
}

bool Params::flag(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || !it->is_boolean()) throw std::logic_error("no boolean parameter " + name);
  return it->get<bool>();
}

std::string Params::name_suffix() const { return record::params_suffix(values_); }

Status parse_override(const std::string& text, Overrides& into) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return error(Errc::invalid_argument, "--set " + text + ": expected name=value[,value…]");
  std::vector<std::string> values;
  std::string rest = text.substr(eq + 1);
  size_t pos = 0;
  while (true) {
    size_t comma = rest.find(',', pos);
    std::string v = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (v.empty()) return error(Errc::invalid_argument, "--set " + text + ": empty value");
    values.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  into[text.substr(0, eq)] = values;
  return Status::success();
}

Result<std::vector<Params>> expand(const std::vector<ParamSpec>& specs, const Overrides& overrides, bool quick) {
  std::vector<std::vector<nlohmann::ordered_json>> lists;
  for (const auto& spec : specs) {
    const std::vector<std::string>* texts = &spec.defaults;
    if (auto it = overrides.find(spec.name); it != overrides.end()) texts = &it->second;
    else if (quick && !spec.quick.empty()) texts = &spec.quick;
    std::vector<nlohmann::ordered_json> parsed;
    for (const auto& given : *texts)
      for (const std::string& t : spec.expand_value(given)) {
        auto v = spec.parse(t);
        if (!v) return v.status();
        if (std::find(parsed.begin(), parsed.end(), *v) == parsed.end()) parsed.push_back(*v);
      }
    if (parsed.empty()) return error(Errc::invalid_argument, "parameter " + spec.name + " has no values");
    lists.push_back(std::move(parsed));
  }
  std::vector<Params> out;
  std::vector<size_t> at(specs.size(), 0);
  while (true) {
    Params p;
    for (size_t i = 0; i < specs.size(); ++i) p.set(specs[i].name, lists[i][at[i]]);
    out.push_back(std::move(p));
    // Odometer: the last parameter varies fastest.
    size_t i = specs.size();
    while (i > 0) {
      --i;
      if (++at[i] < lists[i].size()) break;
      at[i] = 0;
      if (i == 0) return out;
    }
    if (specs.empty()) return out;
  }
}

}  // namespace pmlab::bench
