// The CSV and JSON forms of a study's results.
#include "study/report.h"

#include "model/hardware.h"
#include "model/invariant.h"
#include "model/json_document.h"

#include <fmt/format.h>

namespace syncoll::study {
namespace {

std::string csv_field(const std::string &text) {
  if (text.find_first_of(",\"\n") == std::string::npos)
    return text;
  std::string out = "\"";
  for (char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The protocol a variant's points run in: named, or the variant's own.
std::string protocol_of(const Variant &v) {
  return v.protocol ? std::string(protocol_name(*v.protocol)) : "own";
}

} // namespace

Machine resolved(const Machine &m) {
  Machine r = m;
  if (m.system.empty())
    return r;
  const SystemPreset *p = find_system_preset(m.system);
  if (r.gpus == 0)
    r.gpus = p->gpus_per_node;
  if (r.nics == 0)
    r.nics = p->nics_per_node;
  if (r.nic_gbps == 0)
    r.nic_gbps = p->nic_gbps;
  return r;
}

std::string machine_title(const Machine &machine) {
  const Machine m = resolved(machine);
  if (!m.system.empty()) {
    std::string t = fmt::format("{} x {} ({} GPUs each, {} NIC{} of {:g} GB/s", m.nodes, m.system,
                                m.gpus, m.nics, m.nics == 1 ? "" : "s", m.nic_gbps);
    if (m.nvlink_scale != 1)
      t += fmt::format(", NVLink x{:g}", m.nvlink_scale);
    return t + ")";
  }
  std::vector<std::string> parts;
  auto add = [&](bool given, std::string text) {
    if (given)
      parts.push_back(std::move(text));
  };
  add(m.ranks > 0, fmt::format("{} ranks", m.ranks));
  add(m.dims > 0, fmt::format("{} dimensions", m.dims));
  add(!m.shape.empty(), m.shape);
  add(m.topology == "multinode" || m.topology == "fat_tree", fmt::format("{} nodes", m.nodes));
  add(m.gpus > 0, fmt::format("{} GPUs each", m.gpus));
  add(!m.intra.empty(), m.intra + " inside");
  add(m.nics > 0, fmt::format("{} NICs", m.nics));
  add(m.nic_gbps > 0, fmt::format("NICs of {:g} GB/s", m.nic_gbps));
  add(m.oversubscription > 0, fmt::format("{:g}:1 oversubscribed", m.oversubscription));
  add(m.link_gbps > 0, fmt::format("links of {:g} GB/s", m.link_gbps));
  add(m.link_alpha_us >= 0, fmt::format("alpha {:g} us", m.link_alpha_us));
  add(m.link_multiplicity > 1, fmt::format("{} parallel links", m.link_multiplicity));
  std::string t = m.topology;
  for (size_t i = 0; i < parts.size(); ++i)
    t += (i == 0 ? " (" : ", ") + parts[i];
  return parts.empty() ? t : t + ")";
}

size_t Results::point_of(size_t machine, CollectiveKind collective, size_t variant,
                         int64_t size) const {
  const size_t collectives = study->collectives.size(), variants = study->variants.size(),
               sizes = study->sizes.size();
  const size_t c =
      size_t(std::find(study->collectives.begin(), study->collectives.end(), collective) -
             study->collectives.begin());
  const size_t s =
      size_t(std::find(study->sizes.begin(), study->sizes.end(), size) - study->sizes.begin());
  const size_t index = ((machine * collectives + c) * variants + variant) * sizes + s;
  SYNCOLL_INVARIANT(index < plan->points.size() && plan->points[index].size == size &&
                        plan->points[index].variant == variant,
                    "the point order is machine, collective, variant, size");
  return index;
}

std::optional<double> Results::speedup(size_t point) const {
  const Point &p = plan->points[point];
  // The baseline at the point's protocol when the axis expanded it, else the baseline as written.
  std::optional<size_t> baseline;
  for (size_t v = 0; v < study->variants.size(); ++v) {
    const Variant &b = study->variants[v];
    if (b.family != study->baseline)
      continue;
    if (!baseline || b.protocol == study->variants[p.variant].protocol)
      baseline = v;
  }
  SYNCOLL_INVARIANT(baseline.has_value(), "the study's baseline names a variant");
  const Outcome &mine = outcomes[point];
  const Outcome &base = outcomes[point_of(p.machine, p.collective, *baseline, p.size)];
  if (mine.status != OutcomeStatus::Ok || base.status != OutcomeStatus::Ok || mine.time_us <= 0)
    return std::nullopt;
  return base.time_us / mine.time_us;
}

std::optional<size_t> Results::winner(size_t machine, CollectiveKind collective,
                                      int64_t size) const {
  std::optional<size_t> best;
  double best_us = 0;
  for (size_t v = 0; v < study->variants.size(); ++v) {
    const Outcome &o = outcomes[point_of(machine, collective, v, size)];
    if (o.status == OutcomeStatus::Ok && (!best || o.time_us < best_us)) {
      best = v;
      best_us = o.time_us;
    }
  }
  return best;
}

std::string results_csv(const Results &r) {
  std::string out = "study,system,topology,nodes,gpus,nics,nic_gbps,nvlink_scale,ranks,dims,shape,"
                    "intra,oversubscription,link_gbps,link_alpha_us,link_multiplicity,collective,"
                    "size_bytes,variant,protocol,status,metric,value,note\n";
  for (size_t i = 0; i < r.plan->points.size(); ++i) {
    const Point &p = r.plan->points[i];
    const Machine m = resolved(r.study->machines[p.machine]);
    const Outcome &o = r.outcomes[i];
    const std::string head = fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(r.study->name),
        m.system, m.topology, m.nodes, m.gpus, m.nics, m.nic_gbps, m.nvlink_scale, m.ranks, m.dims,
        csv_field(m.shape), csv_field(m.intra), m.oversubscription, m.link_gbps, m.link_alpha_us,
        m.link_multiplicity, collective_kind_name(p.collective), p.size,
        csv_field(r.study->variants[p.variant].name), protocol_of(r.study->variants[p.variant]),
        outcome_status_name(o.status));
    const std::string note = csv_field(o.note);
    if (o.status != OutcomeStatus::Ok) {
      out += fmt::format("{},,,{}\n", head, note);
      continue;
    }
    out += fmt::format("{},time_us,{:.3f},{}\n", head, o.time_us, note);
    out += fmt::format("{},algbw_gbps,{:.3f},{}\n", head, o.algbw_gbps, note);
    out += fmt::format("{},busbw_gbps,{:.3f},{}\n", head, o.busbw_gbps, note);
    if (auto s = r.speedup(i))
      out += fmt::format("{},speedup,{:.4f},{}\n", head, *s, note);
    if (o.busiest_link > 0)
      out += fmt::format("{},busiest_link,{:.4f},{}\n", head, o.busiest_link, note);
    if (o.synthesis_s > 0)
      out += fmt::format("{},synthesis_s,{:.3f},{}\n", head, o.synthesis_s, note);
  }
  return out;
}

std::string results_json(const Results &r) {
  nlohmann::ordered_json j;
  j["study"] = r.study->name;
  j["question"] = r.study->question;
  j["baseline"] = r.study->baseline;
  j["points"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.plan->points.size(); ++i) {
    const Point &p = r.plan->points[i];
    const Machine m = resolved(r.study->machines[p.machine]);
    const Outcome &o = r.outcomes[i];
    nlohmann::ordered_json e;
    e["machine"] = machine_title(m);
    e["system"] = m.system;
    e["topology"] = m.topology;
    e["nodes"] = m.nodes;
    e["gpus"] = m.gpus;
    e["nics"] = m.nics;
    e["nic_gbps"] = m.nic_gbps;
    e["nvlink_scale"] = m.nvlink_scale;
    e["ranks"] = m.ranks;
    e["dims"] = m.dims;
    e["shape"] = m.shape;
    e["intra"] = m.intra;
    e["oversubscription"] = m.oversubscription;
    e["link_gbps"] = m.link_gbps;
    e["link_alpha_us"] = m.link_alpha_us;
    e["link_multiplicity"] = m.link_multiplicity;
    e["collective"] = collective_kind_name(p.collective);
    e["size_bytes"] = p.size;
    e["variant"] = r.study->variants[p.variant].name;
    e["protocol"] = protocol_of(r.study->variants[p.variant]);
    e["status"] = outcome_status_name(o.status);
    if (o.status == OutcomeStatus::Ok) {
      e["time_us"] = o.time_us;
      e["algbw_gbps"] = o.algbw_gbps;
      e["busbw_gbps"] = o.busbw_gbps;
      if (auto s = r.speedup(i))
        e["speedup"] = *s;
      if (o.busiest_link > 0)
        e["busiest_link"] = o.busiest_link;
      if (o.synthesis_s > 0)
        e["synthesis_s"] = o.synthesis_s;
    }
    e["note"] = o.note;
    j["points"].push_back(std::move(e));
  }
  return to_canonical_json(j);
}

} // namespace syncoll::study
