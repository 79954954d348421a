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
    SYNCOLL_TRY(c, prog.chunk(i, Buffer::input(), i));
    for (int k = 1; k < P; ++k) {
      SYNCOLL_TRY(dst, prog.chunk((i + k) % P, Buffer::input(), i));
      SYNCOLL_TRY(sum, prog.reduce(dst, c));
      c = sum;
    }
    for (int k = 0; k + 1 < P; ++k) {
      SYNCOLL_TRY(next, prog.copy(c, (i + k) % P, Buffer::input(), i));
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

} // namespace

const std::vector<ProgramExample> &program_examples() {
  static const std::vector<ProgramExample> examples = {
      {"ring_allgather",
       "ring Allgather, in place and out of place",
       {false, true},
       ring_allgather},
      {"ring_allreduce",
       "ring Allreduce in place: s, rrs..., rrcs, rcs..., r",
       {true},
       ring_allreduce},
      {"allpairs_allreduce",
       "all-pairs Allreduce through scratch, on a fully connected topology",
       {true},
       allpairs_allreduce},
      {"recursive_doubling_allgather",
       "recursive-doubling Allgather on a hypercube, aggregated",
       {true},
       recursive_doubling_allgather},
      {"alltonext", "AllToNext along a line (gc3 7.4)", {false}, alltonext},
  };
  return examples;
}

const ProgramExample *find_program_example(const std::string &name) {
  for (const ProgramExample &e : program_examples())
    if (e.name == name)
      return &e;
  return nullptr;
}

} // namespace syncoll::examples
