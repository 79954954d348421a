#include "testing/families.h"

#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/collective_traits.h"
#include "model/json_document.h"
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "synth/synthesize.h"
#include "testing/programs.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>

namespace syncoll::testing {
namespace {

using MakeProgram = std::function<std::optional<Program>(int ranks, int variant)>;

// A family on the fully connected topology of each program's rank count, for the collective
// its header names.
Expected<std::optional<FamilyCase>> on_fully_connected(const std::optional<Program> &program) {
  if (!program)
    return std::optional<FamilyCase>();
  SYNCOLL_TRY(topology, fully_connected(program->num_ranks()));
  SYNCOLL_TRY(collective, collective_for_program(*program, std::nullopt));
  return std::optional<FamilyCase>(
      FamilyCase{*program, std::move(topology), std::move(collective)});
}

// A user's file: for the collective given, else the one its header names (an error there is
// reported against the file).
Expected<FamilyCase> file_case(const std::string &file, const Program &program,
                               const std::optional<CollectiveSpec> &given) {
  SYNCOLL_TRY(topology, fully_connected(program.num_ranks()));
  if (given) {
    if (given->num_ranks() != program.num_ranks())
      return fail({file, 0, 0}, fmt::format("the program has {} ranks, the collective {}",
                                            program.num_ranks(), given->num_ranks()));
    return FamilyCase{program, std::move(topology), *given};
  }
  auto collective = collective_for_program(program, std::nullopt);
  if (!collective)
    return fail({file, 0, 0}, collective.error().to_string());
  return FamilyCase{program, std::move(topology), std::move(*collective)};
}

Family family(std::string name, IntRange ranks, IntRange variants, std::string variant_name,
              MakeProgram make) {
  Family f;
  f.name = std::move(name);
  f.ranks = ranks;
  f.variants = variants;
  f.variant_name = std::move(variant_name);
  f.make = [make = std::move(make)](const CaseParams &p) {
    return on_fully_connected(make(p.ranks, p.variant));
  };
  return f;
}

bool power_of_two(int n) {
  return n >= 2 && (n & (n - 1)) == 0;
}

} // namespace

std::vector<Family> reference_families(IntRange ranks) {
  using P = std::optional<Program>;
  return {
      family("ring_allreduce", ranks, {1, 4}, "channels",
             [](int n, int c) -> P { return ring_allreduce_program(n, c); }),
      family("ring_allgather", ranks, {1, 4}, "channels",
             [](int n, int c) -> P { return ring_allgather_program(n, c); }),
      family("allpairs_allreduce", ranks, {0, 0}, "",
             [](int n, int) -> P { return allpairs_allreduce_program(n); }),
      family("recursive_doubling_allgather", ranks, {0, 0}, "",
             [](int n, int) -> P {
               return power_of_two(n) ? P(recursive_doubling_allgather_program(n)) : P();
             }),
      family("two_step_alltoall", ranks, {1, 4}, "nodes",
             [](int n, int nodes) -> P {
               return n % nodes == 0 ? P(two_step_alltoall_program(nodes, n / nodes)) : P();
             }),
      family("broken_allpairs_allreduce", ranks, {0, 0}, "",
             [](int n, int) -> P { return broken_allpairs_allreduce_program(n); }),
  };
}

Expected<Family> reference_family(const std::string &name, IntRange ranks) {
  std::string known;
  for (Family &f : reference_families(ranks)) {
    if (f.name == name)
      return std::move(f);
    known += (known.empty() ? "" : ", ") + f.name;
  }
  return fail({}, fmt::format("unknown family '{}' (known: {})", name, known));
}

namespace {

// How a library topology takes a size: not at all (a machine), as -n, or as a hypercube's
// dimension.
enum class Sizing { Fixed, Ranks, Dimension };

std::optional<Topology> sized(const std::string &name, Sizing sizing, int ranks) {
  TopologyParams params;
  if (sizing == Sizing::Ranks)
    params.n = ranks;
  if (sizing == Sizing::Dimension) {
    if (ranks < 2 || (ranks & (ranks - 1)) != 0)
      return std::nullopt;
    params.dims = std::countr_zero(unsigned(ranks));
  }
  auto t = make_library_topology(name, params);
  return t ? std::optional<Topology>(*std::move(t)) : std::nullopt;
}

} // namespace

Expected<Family> synthesized_family(const std::string &topology, CollectiveKind collective,
                                    std::optional<int> root, IntRange ranks) {
  std::optional<Sizing> sizing;
  for (Sizing s : {Sizing::Fixed, Sizing::Ranks, Sizing::Dimension})
    if (!sizing && sized(topology, s, s == Sizing::Dimension ? 4 : ranks.min))
      sizing = s;
  if (!sizing)
    return fail({}, fmt::format("topology '{}': a synthesized family needs a library topology "
                                "that takes -n, a hypercube or a fixed machine",
                                topology));
  if (collective == CollectiveKind::Custom)
    return fail({}, "a synthesized family needs a standard collective");
  Family f;
  f.name = fmt::format("synthesized {} on {}", collective_kind_name(collective), topology);
  f.ranks = *sizing == Sizing::Fixed ? IntRange{0, 0} : ranks;
  f.variants = {1, 2};
  f.variant_name = "chunks";
  using Made = std::optional<FamilyCase>;
  auto cache = std::make_shared<std::map<std::pair<int, int>, Made>>();
  f.make = [topology, sizing = *sizing, collective, root,
            cache](const CaseParams &p) -> Expected<Made> {
    const auto key = std::pair{p.ranks, p.variant};
    if (auto hit = cache->find(key); hit != cache->end())
      return hit->second;
    Made made;
    if (const auto t = sized(topology, sizing, p.ranks)) {
      synth::Target target;
      target.kind = collective;
      target.root = root;
      synth::SynthOptions options;
      options.time_limit_s = 30;
      // A composed Allreduce counts its chunks over every rank.
      const int chunks = p.variant * (collective == CollectiveKind::Allreduce ? t->num_ranks() : 1);
      auto found = synth::least_steps(*t, target, chunks, std::nullopt, 4, 16, options);
      if (found && found->found && found->found->algorithm) {
        // The collective the algorithm says it implements (a composed Allreduce's own chunks).
        const Algorithm &algorithm = *found->found->algorithm;
        SYNCOLL_TRY(spec, make_collective(algorithm.target.collective, algorithm.target.ranks,
                                          algorithm.target.chunk_factor, algorithm.target.root));
        SYNCOLL_TRY(dsl, lowering::algorithm_to_dsl(algorithm, *t, spec));
        SYNCOLL_TRY(lowered, lowering::lower(dsl));
        made = FamilyCase{std::move(lowered.program), *t, std::move(lowered.collective)};
      }
    }
    cache->emplace(key, made);
    return made;
  };
  return f;
}

namespace {

Expected<Family> files_family(std::string name, std::vector<std::string> files,
                              const std::optional<CollectiveSpec> &collective) {
  // Every file is read once, up front, so a malformed one is bad input before any case runs.
  auto cases = std::make_shared<std::vector<FamilyCase>>();
  for (const std::string &file : files) {
    SYNCOLL_TRY(program, read_program_file(file));
    SYNCOLL_TRY(c, file_case(file, program.value, collective));
    cases->push_back(std::move(c));
  }
  Family f;
  f.name = std::move(name);
  f.variants = {0, int(files.size()) - 1};
  f.variant_name = "file";
  f.shrink_variant = false; // files are not ordered by size: a shrink would jump between bugs
  f.make = [cases](const CaseParams &p) -> Expected<std::optional<FamilyCase>> {
    return (*cases)[size_t(p.variant)];
  };
  f.describe_variant = [files = std::move(files)](int k) {
    return fmt::format("file {}", files[size_t(k)]);
  };
  return f;
}

} // namespace

Expected<Family> program_folder_family(const std::string &folder,
                                       const std::optional<CollectiveSpec> &collective) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file())
      continue;
    if (it->path().extension() == ".xml") {
      files.push_back(it->path().string());
    } else if (it->path().extension() == ".json") {
      // A folder of programs may hold other JSON (a manifest, algorithms): only programs count.
      SYNCOLL_TRY(document, JsonDocument::read_file(it->path().string()));
      if (is_program_json(document.root()))
        files.push_back(it->path().string());
    }
  }
  if (ec)
    return fail({folder, 0, 0}, fmt::format("cannot read the folder: {}", ec.message()));
  if (files.empty())
    return fail({folder, 0, 0}, "no program files (.xml, .json) in the folder");
  std::ranges::sort(files);
  return files_family(folder, std::move(files), collective);
}

Expected<Family> program_file_family(const std::string &file,
                                     const std::optional<CollectiveSpec> &collective) {
  return files_family(file, {file}, collective);
}

} // namespace syncoll::testing
