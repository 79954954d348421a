// `syncoll check`: property runs over a family of programs (a reference family, a DSL example
// over a rank range, or a folder of the user's MSCCL-IR files): seeded cases, the laws of
// testing/laws.h on each, and the first failing case shrunk and written as a program file the
// other commands read.
#include "cli/cli_support.h"
#include "cli/commands.h"
#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/mscclir.h"
#include "testing/check.h"
#include "testing/families.h"

#include <bit>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>

namespace syncoll::cli {
namespace {

constexpr const char *kDefaultRanks = "2..8";

struct CheckArgs {
  std::string family;
  std::string example;
  std::string programs;
  std::string collective;
  std::string synthesize;
  std::optional<int> root;
  std::optional<std::string> ranks; ///< default kDefaultRanks; files fix their own
  std::optional<int> nodes;         ///< hierarchical examples only; default 2
  std::string sizes = "1KiB..4MiB";
  uint64_t seed = 1;
  int cases = 100;
  bool shrink = true;
  std::string laws = "verifies,agrees,bound,cpu";
  std::string out = "counterexample.xml";
};

Expected<testing::IntRange> rank_range(const std::string &text) {
  const size_t dots = text.find("..");
  const auto low = parse_int_list(text.substr(0, dots), ',');
  const auto high = dots == std::string::npos ? low : parse_int_list(text.substr(dots + 2), ',');
  if (!low || !high || low->size() != 1 || high->size() != 1 || (*low)[0] < 2 ||
      (*high)[0] < (*low)[0] || (*high)[0] > 64)
    return fail({}, fmt::format("--ranks {}: expected N or A..B with 2 <= A <= B <= 64", text));
  return testing::IntRange{(*low)[0], (*high)[0]};
}

int floor_log2(int64_t bytes) {
  return 63 - std::countl_zero(uint64_t(bytes));
}

Expected<testing::IntRange> size_range(const std::string &text) {
  const size_t dots = text.find("..");
  SYNCOLL_TRY(low, parse_size(text.substr(0, dots)));
  int64_t high = low;
  if (dots != std::string::npos) {
    SYNCOLL_TRY(h, parse_size(text.substr(dots + 2)));
    high = h;
  }
  if (low < 1 || high < low || high > (int64_t(1) << 32))
    return fail({}, fmt::format("--sizes {}: expected S or A..B with 1 <= A <= B <= 4GiB", text));
  return testing::IntRange{floor_log2(low), floor_log2(high)};
}

Expected<std::vector<testing::LawId>> law_list(const std::string &text) {
  std::vector<testing::LawId> laws;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto law = testing::parse_law(name);
    if (!law)
      return fail(
          {}, fmt::format("--laws: unknown law '{}' (known: verifies, agrees, bound, cpu)", name));
    laws.push_back(*law);
    start = comma + 1;
  }
  return laws;
}

// A DSL example as a family: the variant is the aliasing mode (an index into the modes it is
// written for); a rank count the example has no program for is outside the family.
Expected<testing::Family> example_family(const CheckArgs &a, testing::IntRange ranks) {
  SYNCOLL_TRY(example, examples::require_program_example(a.example));
  testing::Family f;
  f.name = example->name;
  f.ranks = ranks;
  f.variants = {0, int(example->in_place_modes.size()) - 1};
  f.variant_name = "aliasing";
  const std::vector<bool> modes = example->in_place_modes;
  f.describe_variant = [modes](int k) { return modes[size_t(k)] ? "in place" : "out of place"; };
  if (a.nodes && !example->takes_nodes)
    return fail({}, fmt::format("--nodes: example '{}' is not hierarchical (it has no nodes)",
                                example->name));
  const int nodes = a.nodes.value_or(2);
  f.make = [example, modes,
            nodes](const testing::CaseParams &p) -> Expected<std::optional<testing::FamilyCase>> {
    examples::ExampleParams params;
    params.ranks = p.ranks;
    params.nodes = nodes;
    params.options.in_place = modes[size_t(p.variant)];
    auto dsl = example->build(params);
    if (!dsl)
      return std::optional<testing::FamilyCase>();
    auto lowered = lowering::lower(*dsl);
    if (!lowered)
      return std::optional<testing::FamilyCase>();
    return std::optional<testing::FamilyCase>(testing::FamilyCase{
        std::move(lowered->program), dsl->topology(), std::move(lowered->collective)});
  };
  return f;
}

// The root --synthesize runs: a rooted collective named without --root is rooted at 0, as in every
// other command.
std::optional<int> synthesis_root(const CheckArgs &a, CollectiveKind kind) {
  return collective_traits(kind).rooted ? std::optional(a.root.value_or(0)) : a.root;
}

Expected<testing::Family> family_of(const CheckArgs &a) {
  const int given = int(!a.family.empty()) + int(!a.example.empty()) + int(!a.programs.empty()) +
                    int(!a.synthesize.empty());
  if (given != 1)
    return fail({}, "name one family: --family NAME, --example NAME, --programs DIR|FILE or "
                    "--synthesize TOPOLOGY -c COLLECTIVE");
  if (!a.collective.empty() && a.programs.empty() && a.synthesize.empty())
    return fail({}, "--collective is an option of --programs and --synthesize");
  if (a.root && a.synthesize.empty())
    return fail({}, "--root is an option of --synthesize");
  if (a.nodes && a.example.empty())
    return fail({}, "--nodes is an option of --example (hierarchical examples)");
  if (a.ranks && !a.programs.empty())
    return fail({}, "--ranks is an option of --family, --example and --synthesize; --programs "
                    "run at their files' rank counts");
  SYNCOLL_TRY(ranks, rank_range(a.ranks.value_or(kDefaultRanks)));
  if (!a.family.empty())
    return testing::reference_family(a.family, ranks);
  if (!a.example.empty())
    return example_family(a, ranks);
  if (!a.synthesize.empty()) {
    const auto kind = parse_collective_kind(a.collective);
    if (a.collective.empty() || !kind || *kind == CollectiveKind::Custom)
      return fail({}, fmt::format("--synthesize needs -c with a standard collective, got '{}'",
                                  a.collective));
    if (a.root && !collective_traits(*kind).rooted)
      return fail({}, fmt::format("--root {}: {} takes no root rank", *a.root, a.collective));
    return testing::synthesized_family(a.synthesize, *kind, synthesis_root(a, *kind), ranks);
  }
  std::optional<CollectiveSpec> collective;
  if (!a.collective.empty()) {
    SYNCOLL_TRY(c, read_collective_file(a.collective));
    collective = std::move(c);
  }
  if (std::filesystem::is_directory(a.programs))
    return testing::program_folder_family(a.programs, collective);
  return testing::program_file_family(a.programs, collective);
}

// The family as the header names it, with the ranks (and nodes) it ranges over.
std::string what_runs(const CheckArgs &a, const testing::Family &family) {
  const std::string ranks = a.ranks.value_or(kDefaultRanks);
  if (!a.family.empty())
    return fmt::format("family {}, ranks {}", family.name, ranks);
  if (!a.example.empty())
    return fmt::format("example {}, ranks {}{}", family.name, ranks,
                       a.nodes ? fmt::format(" on {} nodes", *a.nodes) : "");
  if (!a.synthesize.empty()) {
    const auto kind = parse_collective_kind(a.collective); // family_of checked it
    const std::optional<int> root = kind ? synthesis_root(a, *kind) : a.root;
    return fmt::format("{}{} synthesized on {}, ranks {}", a.collective,
                       root ? fmt::format(" from root {}", *root) : "", a.synthesize, ranks);
  }
  return fmt::format("programs {}", family.name);
}

std::string law_names(const std::vector<testing::LawId> &laws) {
  std::string out;
  for (testing::LawId law : laws)
    out += (out.empty() ? "" : ",") + std::string(testing::law_name(law));
  return out;
}

Expected<int> run_check_command(const CheckArgs &a) {
  SYNCOLL_TRY(family, family_of(a));
  testing::CheckOptions options;
  SYNCOLL_TRY(sizes, size_range(a.sizes));
  SYNCOLL_TRY(laws, law_list(a.laws));
  if (a.cases < 1)
    return fail({}, fmt::format("--cases {}: expected at least 1", a.cases));
  options.seed = a.seed;
  options.cases = a.cases;
  options.shrink = a.shrink;
  options.size_log2 = sizes;
  options.laws = laws;
  // The sizes are the powers of two in the range (a size between two runs as the lower).
  const std::string size_text = sizes.min == sizes.max
                                    ? format_size(int64_t(1) << sizes.min)
                                    : fmt::format("{}..{}", format_size(int64_t(1) << sizes.min),
                                                  format_size(int64_t(1) << sizes.max));
  std::cout << fmt::format("syncoll check: {}, sizes {}, seed {}, up to {} cases, laws {}\n",
                           what_runs(a, family), size_text, a.seed, a.cases, law_names(laws));
  SYNCOLL_TRY(report, testing::run_check(family, options));
  if (!report.first_failure) {
    std::cout << fmt::format("{} cases pass, {} unknown, {} outside the family (seed {})\n",
                             report.passed, report.unknown, report.discarded, a.seed);
    if (report.first_unknown)
      std::cout << fmt::format("first unknown ({}):\n{}\n", report.first_unknown->law,
                               report.first_unknown->counterexample);
    if (report.passed + report.unknown == 0)
      return fail(
          {}, fmt::format("no case of family '{}' in the ranks and sizes asked for", family.name));
    return int(report.unknown > 0 ? kUnknown : kSuccess);
  }
  const testing::CaseFailure &first = *report.first_failure;
  const testing::CaseFailure &minimal = *report.minimal;
  // The file first, so a failed write is bad input before anything claims it exists.
  SYNCOLL_CHECK(write_output(a.out, program_to_mscclir_xml(minimal.instance.program)));
  std::cout << fmt::format("case {} breaks law '{}' after {} passing: {}\n", first.case_index,
                           first.verdict.law, report.passed,
                           testing::describe_case(family, first.params, first.size_bytes));
  std::cout << fmt::format("shrunk in {} step(s) to: {}\n", report.shrink_steps,
                           testing::describe_case(family, minimal.params, minimal.size_bytes));
  std::cout << minimal.verdict.counterexample;
  if (!minimal.verdict.counterexample.ends_with('\n'))
    std::cout << "\n";
  std::cout << fmt::format("counterexample written to {} (seed {})\n", a.out, a.seed);
  std::cout << fmt::format("reproduce: syncoll check --programs {} --laws {} --sizes {}\n", a.out,
                           minimal.verdict.law, minimal.size_bytes);
  if (minimal.verdict.law == "verifies")
    std::cout << fmt::format("       or: syncoll verify {}\n", a.out);
  return int(kCheckFailed);
}

} // namespace

void add_check_command(CLI::App &app, RunResult &result) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App *cmd = app.add_subcommand(
      "check", "property runs over a family of programs: seeded cases, the laws verifies, agrees "
               "(simulator and verifier), bound (simulated time >= the receive bound) and cpu "
               "(CPU executor = reference) on each, the first failing case shrunk and written "
               "as a program file (exit 0 all pass, 1 a law breaks, 2 bad input, 3 unknown)");
  cmd->add_option("--family", args->family,
                  "a reference family: ring_allreduce, ring_allgather, allpairs_allreduce, "
                  "recursive_doubling_allgather, two_step_alltoall, broken_allpairs_allreduce");
  cmd->add_option("--example", args->example, "a DSL example program (syncoll lower --example)");
  cmd->add_option("--programs", args->programs, "a folder of MSCCL-IR files (.xml, .json), or one");
  cmd->add_option("--synthesize", args->synthesize,
                  "algorithms synthesized (SAT, fewest steps) for a library topology sized by "
                  "--ranks, lowered by the compiler");
  cmd->add_option("-c,--collective", args->collective,
                  "--synthesize: the collective; --programs: a custom collective JSON they "
                  "implement (default: each header's coll)");
  cmd->add_option("--root", args->root,
                  "root rank of a rooted collective to synthesize (default 0)")
      ->check(at_least(0));
  cmd->add_option("--ranks", args->ranks,
                  "rank range of --family, --example and --synthesize: N or A..B (default 2..8)");
  cmd->add_option("--nodes", args->nodes, "nodes of hierarchical examples (default 2)")
      ->check(at_least(1));
  cmd->add_option("-s,--sizes", args->sizes, "message sizes (nBytes): S or A..B");
  cmd->add_option("--seed", args->seed, "seed of the cases (printed; same seed, same run)");
  cmd->add_option("--cases", args->cases, "cases to pass");
  cmd->add_flag("--shrink,!--no-shrink", args->shrink, "shrink a failing case (default on)");
  cmd->add_option("--laws", args->laws, "laws to run, comma-separated");
  cmd->add_option("-o,--output", args->out, "where to write the minimal counterexample program")
      ->check(writable_file());
  add_renamed_option(*cmd, "--out", "--output", args->out);
  cmd->callback(
      [&result, args] { result.exit_code = exit_code_or_bad_input(run_check_command(*args)); });
}

} // namespace syncoll::cli
