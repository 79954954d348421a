#include "examples/programs/programs.h"

#include "model/topology_library.h"

#include <fmt/format.h>

namespace syncoll::examples {
namespace {

using lowering::Buffer;
using lowering::ChunkRef;
using lowering::CopyOptions;
using lowering::DslProgram;

Expected<DslProgram> make(std::string name, Expected<Topology> topology, CollectiveKind kind,
                          int ranks, int chunk_factor, const lowering::DslOptions &options) {
  if (!topology)
    return tl::unexpected(topology.error());
  SYNCOLL_TRY(collective, make_collective(kind, ranks, chunk_factor));
  return DslProgram::create(std::move(name), std::move(*topology), std::move(collective), options);
}

// Ring Allgather (gc3 figure 2's shape): each rank's chunk travels once around the ring. In
// place the chunk already sits in the output; out of place it starts from the input.
Expected<DslProgram> ring_allgather(const ExampleParams &p) {
  const int P = p.ranks;
  SYNCOLL_TRY(prog, make("ring_allgather", ring(P), CollectiveKind::Allgather, P, 1, p.options));
  for (int r = 0; r < P; ++r) {
    SYNCOLL_TRY(c, prog.chunk(r, Buffer::input(), 0));
    if (!p.options.in_place) {
      SYNCOLL_TRY(local, prog.copy(c, r, Buffer::output(), r));
      c = local;
    }
    for (int k = 1; k < P; ++k) {
      SYNCOLL_TRY(next, prog.copy(c, (r + k) % P, Buffer::output(), r));
      c = next;
    }
  }
  return prog;
}

// Ring Allreduce in place: chunk i is reduced around the ring ending at rank i - 1, whose sum
// then travels around once more. Lowers to one thread block per rank: s, rrs..., rrcs, rcs..., r.
Expected<DslProgram> ring_allreduce(const ExampleParams &p) {
  const int P = p.ranks;
  lowering::DslOptions o = p.options;
  o.in_place = true;
  SYNCOLL_TRY(prog, make("ring_allreduce", ring(P), CollectiveKind::Allreduce, P, P, o));
  for (int i = 0; i < P; ++i) {
    CopyOptions on;
    if (p.channels > 1)
      on.channel = i % p.channels;
    SYNCOLL_TRY(c, prog.chunk(i, Buffer::input(), i));
    for (int k = 1; k < P; ++k) {
      SYNCOLL_TRY(dst, prog.chunk((i + k) % P, Buffer::input(), i));
      SYNCOLL_TRY(sum, prog.reduce(dst, c, on));
      c = sum;
    }
    for (int k = 0; k + 1 < P; ++k) {
      SYNCOLL_TRY(next, prog.copy(c, (i + k) % P, Buffer::input(), i, on));
      c = next;
    }
  }
  return prog;
}

// All-pairs Allreduce (gc3 7.1): every rank sends chunk j to rank j's scratch, rank j reduces
// them locally and sends the sum to every rank. Two hops on a fully connected topology.
Expected<DslProgram> allpairs_allreduce(const ExampleParams &p) {
  const int P = p.ranks;
  lowering::DslOptions o = p.options;
  o.in_place = true;
  SYNCOLL_TRY(prog,
              make("allpairs_allreduce", fully_connected(P), CollectiveKind::Allreduce, P, P, o));
  for (int j = 0; j < P; ++j)
    for (int r = 0; r < P; ++r) {
      if (r == j)
        continue;
      SYNCOLL_TRY(c, prog.chunk(r, Buffer::input(), j));
      SYNCOLL_CHECK(prog.copy(c, j, Buffer::named("partials"), r));
    }
  for (int j = 0; j < P; ++j) {
    SYNCOLL_TRY(sum, prog.chunk(j, Buffer::input(), j));
    for (int r = 0; r < P; ++r) {
      if (r == j)
        continue;
      SYNCOLL_TRY(part, prog.chunk(j, Buffer::named("partials"), r));
      SYNCOLL_TRY(next, prog.reduce(sum, part));
      sum = next;
    }
    for (int r = 0; r < P; ++r)
      if (r != j)
        SYNCOLL_CHECK(prog.copy(sum, r, Buffer::input(), j));
  }
  return prog;
}

// Recursive-doubling Allgather on a hypercube, in place: in round k a rank swaps the 2^k chunks
// it has with its partner across dimension k, as one aggregated multi-chunk copy.
Expected<DslProgram> recursive_doubling_allgather(const ExampleParams &p) {
  int dims = 0;
  while ((1 << dims) < p.ranks)
    ++dims;
  if ((1 << dims) != p.ranks)
    return fail({},
                fmt::format("recursive doubling needs a power-of-two rank count, not {}", p.ranks));
  lowering::DslOptions o = p.options;
  o.in_place = true;
  SYNCOLL_TRY(prog, make("recursive_doubling_allgather", hypercube(dims), CollectiveKind::Allgather,
                         p.ranks, 1, o));
  for (int k = 0; k < dims; ++k) {
    const int block = 1 << k;
    for (int r = 0; r < p.ranks; ++r) {
      const int base = r & ~(block - 1);
      SYNCOLL_TRY(c, prog.chunk(r, Buffer::output(), base, block));
      SYNCOLL_CHECK(prog.copy(c, r ^ block, Buffer::output(), base));
    }
  }
  return prog;
}

// AllToNext (gc3 7.4): rank n's buffer goes to rank n + 1, straight along a line.
Expected<DslProgram> alltonext(const ExampleParams &p) {
  const int P = p.ranks;
  SYNCOLL_TRY(prog, make("alltonext", line(P), CollectiveKind::AllToNext, P, 1, p.options));
  for (int r = 0; r + 1 < P; ++r) {
    SYNCOLL_TRY(c, prog.chunk(r, Buffer::input(), 0));
    SYNCOLL_CHECK(prog.copy(c, r + 1, Buffer::output(), 0));
  }
  return prog;
}

// Nodes x GPUs per node, the GPUs of a node on `intra`, 25 GB/s NICs, one per GPU.
Expected<Topology> cluster(const ExampleParams &p, bool intra_ring) {
  if (p.nodes < 2 || p.ranks % p.nodes != 0 || p.ranks / p.nodes < 2)
    return fail({}, fmt::format("{} ranks do not split into {} nodes of at least 2 GPUs", p.ranks,
                                p.nodes));
  const int G = p.ranks / p.nodes;
  SYNCOLL_TRY(intra, intra_ring ? ring(G) : fully_connected(G));
  return multinode(p.nodes, intra, G, BytesPerNs{25});
}

// Hierarchical Allreduce (gc3 figure 3), in place: a reduce-scatter around each node's ring
// leaves GPU g with block g (N chunks, moved as one aggregated reference) summed over its node;
// GPUs g of all nodes allreduce block g across nodes (a ring reduce-scatter and allgather over
// the N chunks); an allgather around each node's ring spreads the blocks again. The two rings
// inside the node use the same connections; on channels of their own they get thread blocks of
// their own, so one piece's allgather runs beside the next piece's reduce-scatter.
Expected<DslProgram> hierarchical_allreduce(const ExampleParams &p) {
  SYNCOLL_TRY(topology, cluster(p, /*intra_ring=*/true));
  const int N = p.nodes, G = p.ranks / p.nodes;
  lowering::DslOptions o = p.options;
  o.in_place = true;
  SYNCOLL_TRY(prog, make("hierarchical_allreduce", std::move(topology), CollectiveKind::Allreduce,
                         p.ranks, G * N, o));
  auto rank = [G](int node, int gpu) { return node * G + gpu; };
  lowering::CopyOptions intra_reduce, intra_gather;
  intra_reduce.channel = 0;
  intra_gather.channel = 1;
  for (int n = 0; n < N; ++n)
    for (int g = 0; g < G; ++g) {
      SYNCOLL_TRY(c, prog.chunk(rank(n, (g + 1) % G), Buffer::input(), g * N, N));
      for (int k = 2; k <= G; ++k) {
        SYNCOLL_TRY(dst, prog.chunk(rank(n, (g + k) % G), Buffer::input(), g * N, N));
        SYNCOLL_TRY(sum, prog.reduce(dst, c, intra_reduce));
        c = sum;
      }
    }
  for (int g = 0; g < G; ++g)
    for (int m = 0; m < N; ++m) {
      SYNCOLL_TRY(c, prog.chunk(rank((m + 1) % N, g), Buffer::input(), g * N + m));
      for (int k = 2; k <= N; ++k) {
        SYNCOLL_TRY(dst, prog.chunk(rank((m + k) % N, g), Buffer::input(), g * N + m));
        SYNCOLL_TRY(sum, prog.reduce(dst, c));
        c = sum;
      }
      for (int k = 1; k < N; ++k) {
        SYNCOLL_TRY(next, prog.copy(c, rank((m + k) % N, g), Buffer::input(), g * N + m));
        c = next;
      }
    }
  for (int n = 0; n < N; ++n)
    for (int g = 0; g < G; ++g) {
      SYNCOLL_TRY(c, prog.chunk(rank(n, g), Buffer::input(), g * N, N));
      for (int k = 1; k < G; ++k) {
        SYNCOLL_TRY(next, prog.copy(c, rank(n, (g + k) % G), Buffer::input(), g * N, intra_gather));
        c = next;
      }
    }
  return prog;
}

// Two-step Alltoall (gc3 figure 8): chunks for another node first gather, inside the node, at
// the GPU with the destination's local index; that GPU then sends them across in one aggregated
// copy of G chunks, straight into the destination's output. Chunks within a node go directly.
Expected<DslProgram> two_step_alltoall(const ExampleParams &p) {
  SYNCOLL_TRY(topology, cluster(p, /*intra_ring=*/false));
  const int N = p.nodes, G = p.ranks / p.nodes;
  SYNCOLL_TRY(prog, make("two_step_alltoall", std::move(topology), CollectiveKind::Alltoall,
                         p.ranks, 1, p.options));
  auto rank = [G](int node, int gpu) { return node * G + gpu; };
  for (int n = 0; n < N; ++n)
    for (int g = 0; g < G; ++g)
      for (int m = 0; m < N; ++m)
        for (int h = 0; h < G; ++h) {
          SYNCOLL_TRY(c, prog.chunk(rank(n, g), Buffer::input(), rank(m, h)));
          if (m == n)
            SYNCOLL_CHECK(prog.copy(c, rank(n, h), Buffer::output(), rank(n, g)));
          else
            SYNCOLL_CHECK(prog.copy(c, rank(n, h), Buffer::named("outbound"), m * G + g));
        }
  for (int n = 0; n < N; ++n)
    for (int h = 0; h < G; ++h)
      for (int m = 0; m < N; ++m) {
        if (m == n)
          continue;
        SYNCOLL_TRY(block, prog.chunk(rank(n, h), Buffer::named("outbound"), m * G, G));
        SYNCOLL_CHECK(prog.copy(block, rank(m, h), Buffer::output(), rank(n, 0)));
      }
  return prog;
}

// AllToNext as GC3 wrote it (gc3 7.4) on nodes x GPUs: inside a node each GPU copies its
// buffer (G chunks) to the next directly; the last GPU of a node splits its buffer over its
// node's GPUs, each of which sends its part across to the GPU of the same index on the next
// node (over its own NIC), which hands it to that node's first GPU.
Expected<DslProgram> alltonext_spread(const ExampleParams &p) {
  SYNCOLL_TRY(topology, cluster(p, /*intra_ring=*/false));
  const int N = p.nodes, G = p.ranks / p.nodes;
  SYNCOLL_TRY(prog, make("alltonext_spread", std::move(topology), CollectiveKind::AllToNext,
                         p.ranks, G, p.options));
  auto rank = [G](int node, int gpu) { return node * G + gpu; };
  for (int n = 0; n < N; ++n)
    for (int g = 0; g < G; ++g) {
      if (g + 1 < G) {
        SYNCOLL_TRY(c, prog.chunk(rank(n, g), Buffer::input(), 0, G));
        SYNCOLL_CHECK(prog.copy(c, rank(n, g + 1), Buffer::output(), 0));
        continue;
      }
      if (n + 1 == N)
        continue; // the last GPU sends nothing
      for (int j = 0; j < G; ++j) {
        SYNCOLL_TRY(part, prog.chunk(rank(n, g), Buffer::input(), j));
        if (j != g) {
          SYNCOLL_TRY(spread, prog.copy(part, rank(n, j), Buffer::named("relay"), 0));
          part = spread;
        }
        if (j == 0) {
          SYNCOLL_CHECK(prog.copy(part, rank(n + 1, 0), Buffer::output(), j));
          continue;
        }
        SYNCOLL_TRY(across, prog.copy(part, rank(n + 1, j), Buffer::named("relay"), 1));
        SYNCOLL_CHECK(prog.copy(across, rank(n + 1, 0), Buffer::output(), j));
      }
    }
  return prog;
}

} // namespace

const std::vector<ProgramExample> &program_examples() {
  static const std::vector<ProgramExample> examples = {
      {"ring_allgather",
       "ring Allgather, in place and out of place",
       {false, true},
       false,
       ring_allgather},
      {"ring_allreduce",
       "ring Allreduce in place: s, rrs..., rrcs, rcs..., r",
       {true},
       false,
       ring_allreduce},
      {"allpairs_allreduce",
       "all-pairs Allreduce through scratch, on a fully connected topology",
       {true},
       false,
       allpairs_allreduce},
      {"recursive_doubling_allgather",
       "recursive-doubling Allgather on a hypercube, aggregated",
       {true},
       false,
       recursive_doubling_allgather},
      {"hierarchical_allreduce",
       "hierarchical Allreduce on nodes x GPUs (gc3 figure 3): intra ring, inter ring, intra ring",
       {true},
       true,
       hierarchical_allreduce},
      {"two_step_alltoall",
       "two-step Alltoall on nodes x GPUs (gc3 figure 8), aggregated",
       {false},
       true,
       two_step_alltoall},
      {"alltonext", "AllToNext along a line (gc3 7.4)", {false}, false, alltonext},
      {"alltonext_spread",
       "AllToNext on nodes x GPUs, each crossing spread over the node's NICs (gc3 7.4)",
       {false},
       true,
       alltonext_spread},
  };
  return examples;
}

const ProgramExample *find_program_example(const std::string &name) {
  for (const ProgramExample &e : program_examples())
    if (e.name == name)
      return &e;
  return nullptr;
}

std::string program_example_names() {
  std::string names;
  for (const ProgramExample &e : program_examples())
    names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

Expected<const ProgramExample *> require_program_example(const std::string &name) {
  if (const ProgramExample *e = find_program_example(name))
    return e;
  return fail({}, fmt::format("unknown example '{}' (one of {})", name, program_example_names()));
}

} // namespace syncoll::examples
