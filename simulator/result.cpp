#include "simulator/result.h"

#include <map>
#include <nlohmann/json.hpp>

namespace syncoll::simulator {

int64_t SimulationResult::total_link_bytes() const {
  int64_t total = 0;
  for (const auto &l : links)
    total += l.bytes;
  return total;
}

nlohmann::ordered_json to_chrome_trace(const SimulationResult &result) {
  auto events = nlohmann::ordered_json::array();
  std::map<std::pair<int, int>, std::string> thread_names;
  for (const TraceSpan &s : result.trace) {
    thread_names.emplace(std::make_pair(s.process, s.thread), s.thread_name);
    nlohmann::ordered_json e;
    e["name"] = s.name;
    e["ph"] = "X";
    e["ts"] = double(s.start) / 1e6;
    e["dur"] = double(s.duration) / 1e6;
    e["pid"] = s.process;
    e["tid"] = s.thread;
    events.push_back(std::move(e));
  }
  for (const auto &[key, name] : thread_names) {
    nlohmann::ordered_json m;
    m["name"] = "thread_name";
    m["ph"] = "M";
    m["pid"] = key.first;
    m["tid"] = key.second;
    m["args"] = {{"name", name}};
    events.push_back(std::move(m));
  }
  nlohmann::ordered_json j;
  j["displayTimeUnit"] = "ns";
  j["traceEvents"] = std::move(events);
  return j;
}

} // namespace syncoll::simulator
