// The study file's reader (docs/study.md, "The study file").
#include "study/study_file.h"

#include "examples/programs/programs.h"
#include "model/hardware.h"
#include "model/json_document.h"
#include "model/text.h"
#include "model/topology_library.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace syncoll::study {
namespace {

// A machine field is one value or a list of values (an axis of the study).
template <typename T>
Expected<std::vector<T>> one_or_many(const JsonView &v,
                                     const std::function<Expected<T>(const JsonView &)> &read) {
  std::vector<T> out;
  if (!v.is_array()) {
    SYNCOLL_TRY(one, read(v));
    out.push_back(std::move(one));
    return out;
  }
  SYNCOLL_TRY(elements, v.elements());
  if (elements.empty())
    return v.error("an axis needs at least one value");
  for (const JsonView &e : elements) {
    SYNCOLL_TRY(x, read(e));
    out.push_back(std::move(x));
  }
  return out;
}

Expected<int> read_int(const JsonView &v, int lo, int hi) {
  SYNCOLL_TRY(x, v.as_int(lo, hi));
  return int(x);
}

template <typename T> using Axis = std::vector<T>;

// One entry of "machines": the product of its axes, in the order written (systems or families
// outermost).
Expected<std::vector<Machine>> machines_from_json(const JsonView &v) {
  SYNCOLL_CHECK(v.only_keys({"system", "topology", "nodes", "gpus", "nics", "nic_gbps",
                             "nvlink_scale", "ranks", "dims", "shape", "intra", "oversubscription",
                             "link_gbps", "link_alpha_us", "link_multiplicity"}));
  if (v.has("system") == v.has("topology"))
    return v.error("a machine is a \"system\" (a preset) or a \"topology\" (a library family)");
  const bool family = v.has("topology");
  for (const char *key : {"ranks", "dims", "shape", "intra", "oversubscription", "link_gbps",
                          "link_alpha_us", "link_multiplicity"})
    if (!family && v.has(key))
      return v.optional_member(key)->error(
          fmt::format("\"{}\" applies to a topology family, not a system preset", key));
  if (family && v.has("nvlink_scale"))
    return v.optional_member("nvlink_scale")
        ->error("\"nvlink_scale\" applies to a system preset; "
                "a topology family has \"link_gbps\"");
  auto strings =
      [&](const char *key,
          const std::function<Expected<std::string>(const JsonView &, const std::string &)> &check)
      -> Expected<Axis<std::string>> {
    if (auto f = v.optional_member(key))
      return one_or_many<std::string>(*f, [&](const JsonView &e) -> Expected<std::string> {
        SYNCOLL_TRY(text, e.as_string());
        return check(e, text);
      });
    return Axis<std::string>{""};
  };
  auto ints = [&](const char *key, int lo, int hi, int fallback) -> Expected<Axis<int>> {
    if (auto f = v.optional_member(key))
      return one_or_many<int>(*f, [&](const JsonView &e) { return read_int(e, lo, hi); });
    return Axis<int>{fallback};
  };
  auto numbers = [&](const char *key, double lo, double hi,
                     double fallback) -> Expected<Axis<double>> {
    if (auto f = v.optional_member(key))
      return one_or_many<double>(*f, [&](const JsonView &e) { return e.as_number(lo, hi); });
    return Axis<double>{fallback};
  };
  SYNCOLL_TRY(
      systems,
      strings("system", [](const JsonView &e, const std::string &name) -> Expected<std::string> {
        const SystemPreset *preset = find_system_preset(name);
        if (!preset) {
          std::string known;
          for (const SystemPreset &p : all_system_presets())
            known += (known.empty() ? "" : ", ") + std::string(p.name);
          return e.error(fmt::format("unknown system '{}' (known: {})", name, known));
        }
        return std::string(preset->name);
      }));
  SYNCOLL_TRY(
      families,
      strings("topology", [](const JsonView &e, const std::string &name) -> Expected<std::string> {
        for (const TopologyLibraryEntry &entry : topology_library())
          if (name_key(entry.name) == name_key(name))
            return entry.name;
        std::string known;
        for (const TopologyLibraryEntry &entry : topology_library())
          known += (known.empty() ? "" : ", ") + entry.name;
        return e.error(fmt::format("unknown topology family '{}' (known: {})", name, known));
      }));
  auto any = [](const JsonView &, const std::string &text) -> Expected<std::string> {
    return text;
  };
  SYNCOLL_TRY(shapes, strings("shape", any));
  SYNCOLL_TRY(intras, strings("intra", any));
  SYNCOLL_TRY(nodes, ints("nodes", 1, 1 << 16, 1));
  SYNCOLL_TRY(gpus, ints("gpus", 1, 64, 0));
  SYNCOLL_TRY(nics, ints("nics", 1, 64, 0));
  SYNCOLL_TRY(ranks, ints("ranks", 2, 1 << 16, 0));
  SYNCOLL_TRY(dims, ints("dims", 1, 16, 0));
  SYNCOLL_TRY(multiplicities, ints("link_multiplicity", 1, 64, 1));
  SYNCOLL_TRY(nic_gbps, numbers("nic_gbps", 0.001, 10000, 0));
  SYNCOLL_TRY(scales, numbers("nvlink_scale", 0.01, 100, 1));
  SYNCOLL_TRY(oversubscription, numbers("oversubscription", 1, 64, 0));
  SYNCOLL_TRY(link_gbps, numbers("link_gbps", 0.001, 10000, 0));
  SYNCOLL_TRY(alphas, numbers("link_alpha_us", 0, 1000, -1));
  for (const std::string &kind : systems)
    if (!kind.empty())
      for (int g : gpus)
        if (g > find_system_preset(kind)->gpus_per_node)
          return v.member("gpus")->error(fmt::format("system '{}' has {} GPUs per node, not {}",
                                                     kind, find_system_preset(kind)->gpus_per_node,
                                                     g));
  // The product of the axes, the first written outermost: each axis multiplies the machines so
  // far by its values.
  std::vector<Machine> out{Machine{}};
  auto axis = [&out](const auto &values, auto field) {
    std::vector<Machine> next;
    for (const Machine &m : out)
      for (const auto &value : values) {
        next.push_back(m);
        next.back().*field = value;
      }
    out = std::move(next);
  };
  axis(family ? families : systems, family ? &Machine::topology : &Machine::system);
  axis(shapes, &Machine::shape);
  axis(intras, &Machine::intra);
  axis(nodes, &Machine::nodes);
  axis(gpus, &Machine::gpus);
  axis(nics, &Machine::nics);
  axis(nic_gbps, &Machine::nic_gbps);
  axis(scales, &Machine::nvlink_scale);
  axis(ranks, &Machine::ranks);
  axis(dims, &Machine::dims);
  axis(oversubscription, &Machine::oversubscription);
  axis(link_gbps, &Machine::link_gbps);
  axis(alphas, &Machine::link_alpha_us);
  axis(multiplicities, &Machine::link_multiplicity);
  return out;
}

Expected<std::vector<Machine>> machine_list(const JsonView &v) {
  SYNCOLL_TRY(entries, v.elements());
  if (entries.empty())
    return v.error("a study needs at least one machine");
  std::vector<Machine> out;
  for (const JsonView &e : entries) {
    SYNCOLL_TRY(some, machines_from_json(e));
    out.insert(out.end(), some.begin(), some.end());
  }
  return out;
}

Expected<std::vector<int64_t>> size_list(const JsonView &v) {
  SYNCOLL_TRY(entries, v.elements());
  if (entries.empty())
    return v.error("a study needs at least one size");
  std::vector<int64_t> out;
  for (const JsonView &e : entries) {
    std::string text;
    if (e.is_string()) {
      SYNCOLL_TRY(s, e.as_string());
      text = s;
    } else {
      SYNCOLL_TRY(n, e.as_int(1, int64_t(1) << 42));
      text = std::to_string(n);
    }
    auto sizes = parse_size_range(text);
    if (!sizes)
      return e.error(sizes.error().items().front().message);
    for (int64_t s : *sizes)
      if (std::find(out.begin(), out.end(), s) == out.end())
        out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Expected<Variant> variant_from_json(const JsonView &v, const std::filesystem::path &folder) {
  SYNCOLL_CHECK(v.only_keys({"name", "nccl", "protocol", "collnet", "compose", "program", "dsl",
                             "instances", "synth", "time_limit_s"}));
  Variant out;
  SYNCOLL_TRY(name_view, v.member("name"));
  SYNCOLL_TRY(name, name_view.as_string());
  if (name.empty() || name.find_first_of("\n\r") != std::string::npos)
    return name_view.error("a variant's name must be one non-empty line");
  out.name = name;
  const int kinds = int(v.has("nccl")) + int(v.has("compose")) + int(v.has("program")) +
                    int(v.has("dsl")) + int(v.has("synth"));
  if (kinds != 1)
    return v.error("a variant is exactly one of \"nccl\", \"compose\", \"program\", \"dsl\" "
                   "or \"synth\"");
  if (v.has("time_limit_s") && !v.has("synth"))
    return v.optional_member("time_limit_s")
        ->error("\"time_limit_s\" applies to a \"synth\" variant");
  if (v.has("collnet") && !v.has("nccl"))
    return v.optional_member("collnet")->error("\"collnet\" applies to an \"nccl\" variant");
  if (auto c = v.optional_member("collnet")) {
    SYNCOLL_TRY(on, c->as_bool());
    out.collnet = on;
  }
  if (v.has("instances") && !v.has("dsl"))
    return v.optional_member("instances")->error("\"instances\" applies to a \"dsl\" variant");
  if (auto p = v.optional_member("protocol")) {
    SYNCOLL_TRY(text, p->as_string());
    out.protocol = parse_protocol(text);
    if (!out.protocol)
      return p->error(fmt::format("unknown protocol '{}' (Simple, LL or LL128)", text));
  }
  if (auto nccl = v.optional_member("nccl")) {
    out.kind = VariantKind::Nccl;
    SYNCOLL_TRY(which, nccl->as_string());
    const std::pair<const char *, nccl::NcclAlgorithm> algorithms[] = {
        {"ring", nccl::NcclAlgorithm::Ring},
        {"tree", nccl::NcclAlgorithm::Tree},
        {"nvls", nccl::NcclAlgorithm::Nvls},
        {"nvlstree", nccl::NcclAlgorithm::NvlsTree},
        {"pat", nccl::NcclAlgorithm::Pat},
        {"collnetdirect", nccl::NcclAlgorithm::CollNetDirect},
        {"collnetchain", nccl::NcclAlgorithm::CollNetChain}};
    if (which != "auto") {
      for (const auto &[key, algorithm] : algorithms)
        if (name_key(which) == key)
          out.algorithm = algorithm;
      if (!out.algorithm)
        return nccl->error(
            fmt::format("unknown NCCL algorithm '{}' (auto, ring, tree, nvls, nvlstree, pat, "
                        "collnet_direct or collnet_chain)",
                        which));
      // NCCL_ALGO=CollNet* runs only with NCCL_COLLNET_ENABLE=1.
      if (nccl::nccl_is_collnet(*out.algorithm)) {
        if (v.has("collnet") && !out.collnet)
          return v.optional_member("collnet")->error(
              fmt::format("NCCL's '{}' reduces in the network: it needs \"collnet\": true", which));
        out.collnet = true;
      }
    }
  } else if (auto c = v.optional_member("compose")) {
    out.kind = VariantKind::Composed;
    if (c->is_string()) {
      SYNCOLL_TRY(which, c->as_string());
      if (which != "search")
        return c->error(
            fmt::format("unknown composition '{}' (\"search\" or a plan object)", which));
    } else {
      SYNCOLL_CHECK(c->only_keys({"stripes", "ring_nodes", "pipeline"}));
      compose::Hierarchy h;
      if (auto f = c->optional_member("stripes")) {
        SYNCOLL_TRY(x, read_int(*f, 1, 64));
        h.stripes = x;
      }
      if (auto f = c->optional_member("ring_nodes")) {
        SYNCOLL_TRY(x, read_int(*f, 1, 1024));
        h.ring_nodes = x;
      }
      if (auto f = c->optional_member("pipeline")) {
        SYNCOLL_TRY(x, read_int(*f, 1, 64));
        h.pipeline = x;
      }
      out.plan = h;
    }
  } else if (auto p = v.optional_member("program")) {
    out.kind = VariantKind::Program;
    SYNCOLL_TRY(path, p->as_string());
    const std::filesystem::path resolved = folder / path;
    std::ifstream in(resolved, std::ios::binary);
    if (!in)
      return p->error(fmt::format("cannot read program '{}'", resolved.string()));
    std::stringstream text;
    text << in.rdbuf();
    out.program_path = resolved.string();
    out.program_text = text.str();
  } else if (auto d = v.optional_member("dsl")) {
    out.kind = VariantKind::Dsl;
    SYNCOLL_TRY(example, d->as_string());
    if (!examples::find_program_example(example))
      return d->error(fmt::format("unknown DSL example '{}' (known: {})", example,
                                  examples::program_example_names()));
    out.example = example;
    if (auto i = v.optional_member("instances")) {
      SYNCOLL_TRY(instances, read_int(*i, 1, 32));
      out.instances = instances;
    }
  } else if (auto y = v.optional_member("synth")) {
    out.kind = VariantKind::Synth;
    SYNCOLL_TRY(what, y->as_string());
    if (what != "pareto")
      return y->error(fmt::format("unknown synthesis '{}' (pareto: SCCL's frontier)", what));
    if (auto t = v.optional_member("time_limit_s")) {
      SYNCOLL_TRY(limit, t->as_number(0.001, 86400));
      out.time_limit_s = limit;
    }
  }
  return out;
}

const std::set<std::string> &axis_names() {
  static const std::set<std::string> kAxes = {"nodes", "gpus", "nics", "nic_gbps", "nvlink_scale"};
  return kAxes;
}

Expected<Heatmap> heatmap_from_json(const JsonView &v, const Study &study) {
  SYNCOLL_CHECK(v.only_keys({"x", "y", "variant", "collective", "size", "metric"}));
  Heatmap h;
  auto axis = [&](const char *key, std::string &into) -> Expected<void> {
    SYNCOLL_TRY(f, v.member(key));
    SYNCOLL_TRY(name, f.as_string());
    if (!axis_names().count(name))
      return f.error(fmt::format("unknown machine axis '{}' (nodes, gpus, nics, nic_gbps, "
                                 "nvlink_scale, ranks, oversubscription, link_gbps, "
                                 "link_alpha_us or link_multiplicity)",
                                 name));
    into = name;
    return {};
  };
  SYNCOLL_CHECK(axis("x", h.x));
  SYNCOLL_CHECK(axis("y", h.y));
  SYNCOLL_TRY(variant_view, v.member("variant"));
  SYNCOLL_TRY(variant, variant_view.as_string());
  if (std::none_of(study.variants.begin(), study.variants.end(),
                   [&](const Variant &x) { return x.name == variant || x.family == variant; }))
    return variant_view.error(fmt::format("no variant is named '{}'", variant));
  h.variant = variant;
  SYNCOLL_TRY(coll_view, v.member("collective"));
  SYNCOLL_TRY(coll, coll_view.as_string());
  const auto kind = parse_collective_kind(coll);
  if (!kind || std::find(study.collectives.begin(), study.collectives.end(), *kind) ==
                   study.collectives.end())
    return coll_view.error(fmt::format("'{}' is not one of the study's collectives", coll));
  h.collective = *kind;
  SYNCOLL_TRY(size_view, v.member("size"));
  SYNCOLL_TRY(size_text, size_view.as_string());
  auto size = parse_size(size_text);
  if (!size)
    return size_view.error(size.error().items().front().message);
  h.size = *size;
  h.metric = "busbw_gbps";
  if (auto m = v.optional_member("metric")) {
    SYNCOLL_TRY(metric, m->as_string());
    if (metric != "busbw_gbps" && metric != "time_us" && metric != "speedup")
      return m->error(fmt::format("unknown metric '{}' (busbw_gbps, time_us or speedup)", metric));
    h.metric = metric;
  }
  return h;
}

} // namespace

std::optional<double> machine_axis(const Machine &m, const std::string &axis) {
  const std::pair<const char *, double> axes[] = {{"nodes", m.nodes},
                                                  {"gpus", m.gpus},
                                                  {"nics", m.nics},
                                                  {"nic_gbps", m.nic_gbps},
                                                  {"nvlink_scale", m.nvlink_scale},
                                                  {"ranks", m.ranks},
                                                  {"oversubscription", m.oversubscription},
                                                  {"link_gbps", m.link_gbps},
                                                  {"link_alpha_us", m.link_alpha_us},
                                                  {"link_multiplicity", m.link_multiplicity}};
  for (const auto &[name, value] : axes)
    if (axis == name)
      return value;
  return std::nullopt;
}

Expected<Study> read_study(const std::string &path, bool quick) {
  SYNCOLL_TRY(doc, JsonDocument::read_file(path));
  return study_from_json(doc.root(), std::filesystem::path(path).parent_path(), quick);
}

Expected<Study> study_from_json(const JsonView &root, const std::filesystem::path &folder,
                                bool quick) {
  if (!root.is_object())
    return root.error("a study file is a JSON object");
  SYNCOLL_CHECK(root.only_keys({"study", "question", "machines", "collectives", "sizes",
                                "protocols", "variants", "baseline", "heatmap", "quick"}));
  Study study;
  SYNCOLL_TRY(name_view, root.member("study"));
  SYNCOLL_TRY(name, name_view.as_string());
  study.name = name;
  if (auto q = root.optional_member("question")) {
    SYNCOLL_TRY(question, q->as_string());
    study.question = question;
  }
  std::optional<JsonView> quick_view = root.optional_member("quick");
  if (quick_view)
    SYNCOLL_CHECK(quick_view->only_keys({"machines", "sizes"}));
  else if (quick)
    return root.error("--quick runs a study's \"quick\" section, and this study has none");
  auto section = [&](const char *key) -> Expected<JsonView> {
    if (quick && quick_view && quick_view->has(key))
      return quick_view->member(key);
    return root.member(key);
  };
  SYNCOLL_TRY(machines_view, section("machines"));
  SYNCOLL_TRY(machines, machine_list(machines_view));
  study.machines = std::move(machines);
  SYNCOLL_TRY(sizes_view, section("sizes"));
  SYNCOLL_TRY(sizes, size_list(sizes_view));
  study.sizes = std::move(sizes);

  SYNCOLL_TRY(colls_view, root.member("collectives"));
  SYNCOLL_TRY(colls, colls_view.elements());
  if (colls.empty())
    return colls_view.error("a study needs at least one collective");
  for (const JsonView &c : colls) {
    SYNCOLL_TRY(text, c.as_string());
    const auto kind = parse_collective_kind(text);
    if (!kind || *kind == CollectiveKind::Custom)
      return c.error(fmt::format("unknown collective '{}'", text));
    study.collectives.push_back(*kind);
  }

  SYNCOLL_TRY(variants_view, root.member("variants"));
  SYNCOLL_TRY(variants, variants_view.elements());
  if (variants.empty())
    return variants_view.error("a study needs at least one variant");
  // The protocols axis: "own" keeps each variant's own protocol.
  std::vector<std::optional<Protocol>> protocols{std::nullopt};
  if (auto axis = root.optional_member("protocols")) {
    SYNCOLL_TRY(values, axis->elements());
    if (values.empty())
      return axis->error("an axis needs at least one value");
    protocols.clear();
    for (const JsonView &e : values) {
      SYNCOLL_TRY(text, e.as_string());
      const std::optional<Protocol> p = parse_protocol(text);
      if (!p && text != "own")
        return e.error(fmt::format("unknown protocol '{}' (own, Simple, LL or LL128)", text));
      if (std::find(protocols.begin(), protocols.end(), p) != protocols.end())
        return e.error(fmt::format("protocol '{}' is listed twice", text));
      protocols.push_back(p);
    }
  }
  std::set<std::string> names;
  for (const JsonView &v : variants) {
    SYNCOLL_TRY(variant, variant_from_json(v, folder));
    if (!names.insert(variant.name).second)
      return v.error(fmt::format("two variants are named '{}'", variant.name));
    variant.family = variant.name;
    if (variant.protocol || protocols.size() == 1) {
      if (protocols.size() == 1)
        variant.protocol = variant.protocol ? variant.protocol : protocols.front();
      study.variants.push_back(std::move(variant));
      continue;
    }
    for (const std::optional<Protocol> &p : protocols) {
      Variant copy = variant;
      copy.protocol = p;
      copy.name = fmt::format("{} [{}]", variant.family, p ? protocol_name(*p) : "own");
      study.variants.push_back(std::move(copy));
    }
  }
  study.baseline = study.variants.front().name;
  if (auto b = root.optional_member("baseline")) {
    SYNCOLL_TRY(baseline, b->as_string());
    if (!names.count(baseline))
      return b->error(fmt::format("no variant is named '{}'", baseline));
    study.baseline = baseline;
  }
  if (auto h = root.optional_member("heatmap")) {
    SYNCOLL_TRY(heatmap, heatmap_from_json(*h, study));
    study.heatmap = heatmap;
  }
  return study;
}

} // namespace syncoll::study
