#include "tests/conformance/corpus.h"

#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "lowering/from_algorithm.h"
#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/json_document.h"
#include "model/topology_library.h"
#include "synth/synthesize.h"
#include "testing/programs.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace syncoll::conformance {
namespace {

Program must(Expected<Program> p) {
  SYNCOLL_INVARIANT(p.has_value(), "a corpus program does not build");
  return *std::move(p);
}

Program edited(const Program &p, const std::function<void(ProgramDraft &)> &edit) {
  ProgramDraft d = p.draft();
  edit(d);
  return must(Program::create(std::move(d)));
}

// A DSL example lowered the way `syncoll lower --example` does (verified by lower itself).
Program lowered_example(const std::string &name, int ranks, int nodes, bool in_place,
                        Protocol protocol, int instances) {
  const auto *example = examples::find_program_example(name);
  SYNCOLL_INVARIANT(example != nullptr, "an unknown example");
  examples::ExampleParams params;
  params.ranks = ranks;
  params.nodes = nodes;
  params.options.in_place = in_place;
  params.options.protocol = protocol;
  auto dsl = example->build(params);
  SYNCOLL_INVARIANT(dsl.has_value(), "an example does not build");
  lowering::LowerOptions options;
  options.instances = instances;
  auto l = lowering::lower(*dsl, options);
  SYNCOLL_INVARIANT(l.has_value() && l->verified.has_value(), "an example fails to lower");
  return l->program;
}

// The fewest-steps algorithm SAT finds, lowered out of place.
Program synthesized(CollectiveKind kind, const Topology &topology, int chunks, Protocol protocol) {
  synth::Target target;
  target.kind = kind;
  if (collective_traits(kind).rooted)
    target.root = 0;
  auto least = synth::least_steps(topology, target, chunks, std::nullopt, 2, 10, {});
  SYNCOLL_INVARIANT(least.has_value() && least->found && least->found->algorithm,
                    "no algorithm for the corpus");
  auto spec = target.collective(topology.num_ranks(), chunks);
  SYNCOLL_INVARIANT(spec.has_value(), "corpus collective");
  lowering::DslOptions options;
  options.protocol = protocol;
  auto dsl = lowering::algorithm_to_dsl(*least->found->algorithm, topology, *spec, options);
  SYNCOLL_INVARIANT(dsl.has_value(), "corpus algorithm does not lower");
  auto l = lowering::lower(*dsl);
  SYNCOLL_INVARIANT(l.has_value() && l->verified.has_value(), "corpus algorithm fails");
  return l->program;
}

// In place, both buffers declared in full (the other declaration style from the one lowering
// writes: the aliased buffer as 0 chunks).
Program declared_in_full(const Program &p) {
  auto c = collective_for_program(p, std::nullopt);
  SYNCOLL_INVARIANT(c.has_value(), "corpus collective");
  return testing::declared_in_full(p, *c);
}

// RCCL's hand-written files name local buffers in the fields the runtime ignores (a send's
// destination, a receive's source); msccl-tools names the peer's.
Program rccl_fields(const Program &p) {
  return edited(p, [](ProgramDraft &d) {
    for (RankProgram &rp : d.ranks)
      for (ThreadBlock &tb : rp.thread_blocks)
        tb.steps.edit([](std::vector<Instruction> &steps) {
          for (Instruction &in : steps) {
            if (in.op == OpType::Send)
              in.dst = in.src;
            if (in.op == OpType::Recv || in.op == OpType::RecvCopySend)
              in.src = in.dst;
          }
        });
  });
}

Program windowed(const Program &p, int64_t min_bytes, int64_t max_bytes) {
  return edited(p, [&](ProgramDraft &d) {
    d.min_bytes = min_bytes;
    d.max_bytes = max_bytes;
    d.name += fmt::format("_window_{}_{}", min_bytes, max_bytes);
  });
}

Program both_modes(const Program &p) {
  return edited(p, [](ProgramDraft &d) {
    d.in_place = true;
    d.out_of_place = true;
  });
}

// RCCL's hand-written all-pairs Allgather: in place with i_chunks="0", one thread block per
// peer and channel that sends its own chunk and receives the peer's, a size window.
Program rccl_allpairs_allgather(int ranks, int channels, Protocol protocol, int64_t max_bytes) {
  ProgramDraft d = testing::header("allgather_allpairs", "allgather", ranks, channels,
                                   ranks * channels, true, protocol);
  d.max_bytes = max_bytes;
  for (int r = 0; r < ranks; ++r) {
    RankProgram rp{RankId(r), 0, ranks * channels, 0, {}};
    for (int p = 0; p < ranks; ++p)
      for (int c = 0; c < channels && p != r; ++c) {
        ThreadBlockBuilder b(TbId(int(rp.thread_blocks.size())), RankId(p), RankId(p),
                             ChannelId(c));
        const BufferRef mine{BufferKind::Output, channels * r + c};
        const BufferRef theirs{BufferKind::Output, channels * p + c};
        b.step(OpType::Send, mine, mine);
        b.step(OpType::Recv, theirs, theirs);
        rp.thread_blocks.push_back(b.take());
      }
    d.ranks.push_back(std::move(rp));
  }
  return must(Program::create(std::move(d)));
}

// RCCL's one-step Allreduce: in place with o_chunks="0"; every rank sends its half of the
// buffer per channel to every peer into scratch, then reduces each chunk from scratch with a
// chain of `re` steps that waits, through nops, for every send and receive of its channel.
Program rccl_one_step_allreduce(int ranks, Protocol protocol, int64_t min_bytes,
                                int64_t max_bytes) {
  const int channels = 2, per_channel = ranks, peers = ranks - 1;
  ProgramDraft d = testing::header("allreduce_pairs", "allreduce", ranks, channels,
                                   channels * per_channel, true, protocol);
  d.min_bytes = min_bytes;
  d.max_bytes = max_bytes;
  auto peer_tb = [&](int j, int c) { return 2 + 2 * j + c; };
  for (int r = 0; r < ranks; ++r) {
    std::vector<int> peer_of;
    for (int p = 0; p < ranks; ++p)
      if (p != r)
        peer_of.push_back(p);
    RankProgram rp{RankId(r), channels * per_channel, 0, channels * per_channel * peers, {}};
    const int tbs = 2 + 2 * peers;
    for (int t = 0; t < tbs; ++t) {
      const int c = t % 2;
      const bool local = t < 2;
      const int j = local ? -1 : (t - 2) / 2;
      ThreadBlockBuilder b(
          TbId(t), local ? std::nullopt : std::optional(RankId(peer_of[size_t(j)])),
          local ? std::nullopt : std::optional(RankId(peer_of[size_t(j)])), ChannelId(c));
      if (!local) {
        b.step(OpType::Send, {BufferKind::Input, per_channel * c},
               {BufferKind::Scratch, peers * per_channel * c}, per_channel, std::nullopt, true);
        b.step(OpType::Recv, {BufferKind::Input, per_channel * c},
               {BufferKind::Scratch, peers * per_channel * c + per_channel * j}, per_channel,
               std::nullopt, true);
      }
      // The chunk this thread block reduces: the rank's own for the local one, the peer's else.
      const int m = local ? r : peer_of[size_t(j)];
      std::vector<Dependency> waits;
      for (int j2 = 0; j2 < peers; ++j2)
        for (int k = 0; k < 2; ++k)
          if (peer_tb(j2, c) != t)
            waits.push_back({TbId(peer_tb(j2, c)), StepIndex(k)});
      for (size_t w = 0; w + 1 < waits.size(); ++w)
        b.step(OpType::Nop, {BufferKind::Input, -1}, {BufferKind::Output, -1}, 0, waits[w]);
      for (int j2 = 0; j2 < peers; ++j2)
        b.step(OpType::Reduce,
               {BufferKind::Scratch, peers * per_channel * c + per_channel * j2 + m},
               {BufferKind::Input, per_channel * c + m}, 1,
               j2 == 0 ? std::optional(waits.back()) : std::nullopt);
      rp.thread_blocks.push_back(b.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  return must(Program::create(std::move(d)));
}

std::string slug(std::string s) {
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return s;
}

} // namespace

std::vector<CorpusEntry> build_corpus() {
  std::vector<CorpusEntry> out;
  auto add = [&](std::string file, Program p, std::string convention,
                 std::vector<std::string> violated = {}) {
    out.push_back({std::move(file), std::move(p), std::nullopt, std::nullopt, std::move(violated),
                   std::move(convention)});
  };
  const Protocol protocols[] = {Protocol::Simple, Protocol::LL, Protocol::LL128};

  // NCCL's rings, as runtimes ship them: every protocol, up to 32 channels, up to 32 ranks
  // (a 64-rank ring needs more steps per thread block than the executor's default build has).
  for (CollectiveKind kind : {CollectiveKind::Allreduce, CollectiveKind::Allgather,
                              CollectiveKind::ReduceScatter, CollectiveKind::Broadcast})
    for (auto [ranks, channels] : {std::pair{2, 1}, std::pair{8, 4}, std::pair{32, 1}})
      for (Protocol proto : protocols) {
        if (ranks == 32 && proto != Protocol::Simple)
          continue; // the largest rings once: they are the corpus's bulk
        const Program p = testing::ring_program(kind, ranks, channels, proto);
        add(fmt::format("nccl_ring_{}_{}r_{}ch_{}.xml", collective_kind_name(kind), ranks, channels,
                        protocol_name(proto)),
            p, "NCCL ring, msccl-tools operand fields");
      }
  add("nccl_ring_allgather_4r_32ch_Simple.xml",
      testing::ring_program(CollectiveKind::Allgather, 4, 32, Protocol::Simple), "32 channels");
  add("nccl_ring_allgather_4r_1ch_Simple_rccl_fields.xml",
      rccl_fields(testing::ring_program(CollectiveKind::Allgather, 4, 1, Protocol::Simple)),
      "RCCL operand fields (local buffers where the runtime ignores them)");

  // The lowered DSL examples: in place with the aliased buffer declared 0 (as lowering and
  // msccl-tools write them) and declared in full; instances; nop dependency chains.
  struct Example {
    std::string name;
    int ranks, nodes;
    bool in_place;
    int instances;
  };
  for (const Example &e :
       {Example{"ring_allreduce", 4, 1, true, 1}, Example{"ring_allreduce", 16, 1, true, 2},
        Example{"ring_allgather", 8, 1, true, 1}, Example{"ring_allgather", 8, 1, false, 4},
        Example{"allpairs_allreduce", 4, 1, true, 1},
        Example{"recursive_doubling_allgather", 8, 1, true, 1},
        Example{"recursive_doubling_allgather", 64, 1, true, 1},
        Example{"hierarchical_allreduce", 16, 2, true, 1},
        Example{"hierarchical_allreduce", 64, 8, true, 1},
        Example{"two_step_alltoall", 8, 2, false, 1}})
    for (Protocol proto : {Protocol::Simple, Protocol::LL128}) {
      if (e.ranks == 64 && proto != Protocol::Simple)
        continue;
      const Program p = lowered_example(e.name, e.ranks, e.nodes, e.in_place, proto, e.instances);
      const std::string base =
          fmt::format("lowered_{}_{}r_x{}_{}_{}", e.name, e.ranks, e.instances,
                      e.in_place ? "inplace" : "outofplace", protocol_name(proto));
      add(base + ".xml", p,
          e.in_place ? "in place, aliased buffer declared 0" : "out of place, lowered");
      if (e.in_place && e.ranks < 64)
        add(base + "_full.xml", declared_in_full(p), "in place, both buffers declared in full");
    }
  // An out-of-place ring Allgather that copies its input into place first is correct in place
  // too: RCCL's files claim both modes.
  add("lowered_ring_allgather_8r_both_modes.xml",
      both_modes(lowered_example("ring_allgather", 8, 1, false, Protocol::Simple, 1)),
      "inplace=1 and outofplace=1");

  // Every collective, synthesized and lowered out of place.
  const Topology ring4 = *ring(4), full4 = *fully_connected(4);
  for (CollectiveKind kind :
       {CollectiveKind::Allgather, CollectiveKind::Alltoall, CollectiveKind::Broadcast,
        CollectiveKind::Gather, CollectiveKind::Scatter, CollectiveKind::Reduce,
        CollectiveKind::ReduceScatter, CollectiveKind::Allreduce})
    for (const Topology *t : {&ring4, &full4}) {
      const int chunks = kind == CollectiveKind::Allreduce ? 4 : 1;
      add(fmt::format("synthesized_{}_{}_{}.xml", collective_kind_name(kind), t->name(),
                      protocol_name(Protocol::LL)),
          synthesized(kind, *t, chunks, Protocol::LL), "synthesized, lowered out of place");
    }

  // RCCL's hand-written shapes: in place with the aliased buffer declared 0, scratch, nop
  // chains, `re` chains, size windows.
  for (int ranks : {8, 16})
    for (Protocol proto : {Protocol::LL, Protocol::LL128})
      add(fmt::format("rccl_allpairs_allgather_{}r_2ch_{}.xml", ranks, protocol_name(proto)),
          rccl_allpairs_allgather(ranks, 2, proto, 8192),
          "RCCL all-pairs allgather, i_chunks 0, maxBytes");
  for (int ranks : {4, 8})
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{1024, 2048}, {0, 0}})
      add(fmt::format("rccl_one_step_allreduce_{}r_{}_{}.xml", ranks, lo, hi),
          rccl_one_step_allreduce(ranks, Protocol::LL, lo, hi),
          "RCCL one-step allreduce through scratch, o_chunks 0, nop and re chains");

  // Size windows: the executor runs a program only for minBytes <= nBytes <= maxBytes.
  const Program ring8 = testing::ring_program(CollectiveKind::Allreduce, 8, 1, Protocol::Simple);
  add("nccl_ring_allreduce_8r_window_small.xml", windowed(ring8, 0, 1 << 20), "size window");
  add("nccl_ring_allreduce_8r_window_large.xml", windowed(ring8, 1 << 20, 0),
      "size window, maxBytes 0 (no upper limit)");
  // Head-to-head sends of 3 chunks deadlock once chunks reach a tile's half; maxBytes keeps
  // every chunk below it, so no size the executor selects the program for deadlocks.
  {
    ProgramDraft d;
    d.name = "head_to_head_cnt3";
    d.collective = "allgather";
    d.num_ranks = 2;
    d.chunks_per_loop = 6;
    d.max_bytes = 6 << 20;
    for (int r = 0; r < 2; ++r) {
      ThreadBlockBuilder b(TbId(0), RankId(1 - r), RankId(1 - r), ChannelId(0));
      b.step(OpType::Copy, {BufferKind::Input, 0}, {BufferKind::Output, 3 * r}, 3);
      b.step(OpType::Send, {BufferKind::Input, 0}, {BufferKind::Output, 3 * r}, 3);
      b.step(OpType::Recv, {BufferKind::Input, 0}, {BufferKind::Output, 3 * (1 - r)}, 3);
      d.ranks.push_back({RankId(r), 3, 6, 0, {b.take()}});
    }
    add("head_to_head_cnt3_window.xml", must(Program::create(d)),
        "size window that keeps a large-message deadlock out of reach");
  }

  // The old runtime's `custom` collective, with its specification beside it.
  {
    CorpusEntry e{"lowered_alltonext_8r.xml",
                  lowered_example("alltonext", 8, 1, false, Protocol::Simple, 1),
                  "lowered_alltonext_8r.collective.json",
                  *make_collective(CollectiveKind::AllToNext, 8, 1),
                  {},
                  "coll=\"custom\" with a collective file"};
    out.push_back(std::move(e));
  }

  // Known-bad programs, flagged for the right reason.
  add("bad_two_tbs_on_one_connection.xml",
      edited(testing::ring_program(CollectiveKind::Allgather, 4, 2, Protocol::Simple),
             [](ProgramDraft &d) {
               for (RankProgram &rp : d.ranks)
                 rp.thread_blocks[1].channel = ChannelId(0);
             }),
      "two thread blocks on one connection (and what sharing its FIFO does)",
      {"structure", "deadlock freedom", "postcondition"});
  add("bad_allreduce_missing_contribution.xml",
      edited(testing::ring_program(CollectiveKind::Allreduce, 4, 1, Protocol::Simple),
             [](ProgramDraft &d) {
               // The second step forwards what it receives instead of adding its own part.
               d.ranks[0].thread_blocks[0].steps.edit(
                   [](std::vector<Instruction> &steps) { steps[1].op = OpType::RecvCopySend; });
             }),
      "an allreduce whose result misses a contribution", {"postcondition"});
  add("bad_nchannels_48.xml",
      edited(testing::ring_program(CollectiveKind::Allgather, 2, 1, Protocol::Simple),
             [](ProgramDraft &d) {
               d.num_channels = 48;
               for (RankProgram &rp : d.ranks)
                 rp.thread_blocks[0].channel = ChannelId(47);
             }),
      "48 channels", {"resources"});
  add("bad_alltoall_in_place_race.xml",
      edited(lowered_example("two_step_alltoall", 4, 2, false, Protocol::Simple, 1),
             [](ProgramDraft &d) {
               d.in_place = true;
               d.out_of_place = false;
             }),
      "an in-place alltoall whose receive and send race through aliasing (and the result it "
      "leaves in one order)",
      {"race freedom", "postcondition"});
  for (CorpusEntry &e : out)
    e.file = slug(e.file.substr(0, e.file.size() - 4)) + ".xml";
  return out;
}

std::string corpus_manifest(const std::vector<CorpusEntry> &corpus) {
  auto entries = nlohmann::ordered_json::array();
  for (const CorpusEntry &e : corpus) {
    nlohmann::ordered_json j;
    j["file"] = e.file;
    j["convention"] = e.convention;
    j["collective"] = e.collective_file ? nlohmann::ordered_json(*e.collective_file)
                                        : nlohmann::ordered_json(nullptr);
    j["violated"] = e.violated;
    entries.push_back(std::move(j));
  }
  nlohmann::ordered_json root;
  root["format"] = "syncoll-conformance";
  root["entries"] = std::move(entries);
  return to_canonical_json(root);
}

} // namespace syncoll::conformance
