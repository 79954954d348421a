#include "model/program.h"

#include "model/invariant.h"
#include "model/runtime_constants.h"
#include "model/topology.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace syncoll {
namespace {

// The runtime's step types (docs/semantics.md, "Step types"). Columns: name, sends, receives,
// reads src, reads dst, writes dst, reduces, parser checks srcoff, parser checks dstoff. The
// parser checks neither offset of rrc, and only the offset each op is named for elsewhere.
constexpr OpTraits kOps[] = {
    {OpType::Send, "s", true, false, true, false, false, false, true, false},
    {OpType::Recv, "r", false, true, false, false, true, false, false, true},
    {OpType::RecvCopySend, "rcs", true, true, false, false, true, false, false, true},
    {OpType::RecvReduceSend, "rrs", true, true, true, false, false, true, true, false},
    {OpType::RecvReduceCopy, "rrc", false, true, true, false, true, true, false, false},
    {OpType::RecvReduceCopySend, "rrcs", true, true, true, false, true, true, true, true},
    {OpType::Copy, "cpy", false, false, true, false, true, false, true, true},
    {OpType::Reduce, "re", false, false, true, true, true, true, true, true},
    {OpType::Nop, "nop", false, false, false, false, false, false, false, false},
};
static_assert(std::size(kOps) == size_t(OpType::Nop) + 1, "one row per step type");

} // namespace

ThreadBlockBuilder::ThreadBlockBuilder(TbId id, std::optional<RankId> send_peer,
                                       std::optional<RankId> recv_peer, ChannelId channel) {
  tb_.id = id;
  tb_.send_peer = send_peer;
  tb_.recv_peer = recv_peer;
  tb_.channel = channel;
}

int ThreadBlockBuilder::step(OpType op, BufferRef src, BufferRef dst, int count,
                             std::optional<Dependency> dependency, bool has_dep) {
  Instruction in;
  in.op = op;
  in.src = src;
  in.dst = dst;
  in.count = count;
  in.dependency = dependency;
  in.has_dep = has_dep;
  in.declared_index = static_cast<int>(tb_.steps.size());
  tb_.steps.push_back(in);
  return in.declared_index;
}

int RankProgram::chunks(BufferKind buffer) const {
  switch (buffer) {
  case BufferKind::Input:
    return input_chunks;
  case BufferKind::Output:
    return output_chunks;
  case BufferKind::Scratch:
    return scratch_chunks;
  }
  SYNCOLL_UNREACHABLE("unknown buffer");
}

std::string_view protocol_name(Protocol p) {
  return protocol_traits(p).name;
}

std::optional<Protocol> parse_protocol(std::string_view name) {
  for (const ProtocolTraits &t : all_protocol_traits())
    if (t.name == name)
      return t.protocol;
  return std::nullopt;
}

const OpTraits &op_traits(OpType op) {
  const OpTraits &row = kOps[static_cast<size_t>(op)];
  SYNCOLL_INVARIANT(row.op == op, "the step type table is out of OpType order");
  return row;
}

std::span<const OpTraits> all_op_traits() {
  return kOps;
}

std::string_view op_type_name(OpType op) {
  return op_traits(op).name;
}

std::optional<OpType> parse_op_type(std::string_view name) {
  for (const auto &o : kOps)
    if (o.name == name)
      return o.op;
  return std::nullopt;
}

std::string_view buffer_kind_name(BufferKind b) {
  switch (b) {
  case BufferKind::Input:
    return "i";
  case BufferKind::Output:
    return "o";
  case BufferKind::Scratch:
    return "s";
  }
  SYNCOLL_UNREACHABLE("buffer without a name");
}

std::optional<BufferKind> parse_buffer_kind(std::string_view name) {
  if (name == "i")
    return BufferKind::Input;
  if (name == "o")
    return BufferKind::Output;
  if (name == "s")
    return BufferKind::Scratch;
  return std::nullopt;
}

std::optional<CollectiveNameReading> parse_ir_collective_name(std::string_view name) {
  static constexpr std::string_view kExecutor[] = {
      "allreduce", "allgather", "reducescatter", "alltoall", "reduce",   "broadcast",
      "send",      "recv",      "gather",        "scatter",  "alltoallv"};
  for (auto n : kExecutor)
    if (n == name)
      return CollectiveNameReading{std::string(n), false};
  if (name == "reduce_scatter")
    return CollectiveNameReading{"reducescatter", true};
  if (name == "custom")
    return CollectiveNameReading{"custom", true};
  return std::nullopt;
}

Expected<Program> Program::create(ProgramDraft d) {
  Diagnostics diag;
  if (!parse_ir_collective_name(d.collective))
    diag.error_at("/coll", fmt::format("unknown collective '{}'", d.collective));
  if (d.num_ranks < 1 || d.num_ranks > kMaxRanks)
    return fail_at("/ngpus",
                   fmt::format("ngpus {} is out of range [1, {}]", d.num_ranks, kMaxRanks));
  if (d.num_channels < 1)
    diag.error_at("/nchannels", fmt::format("nchannels {} must be at least 1", d.num_channels));
  if (d.chunks_per_loop < 1)
    diag.error_at("/nchunksperloop",
                  fmt::format("nchunksperloop {} must be at least 1", d.chunks_per_loop));
  if (d.min_bytes < 0)
    diag.error_at("/minBytes", "minBytes must not be negative");
  if (d.max_bytes < 0)
    diag.error_at("/maxBytes", "maxBytes must not be negative");
  if (d.num_threads && (*d.num_threads <= 0 || *d.num_threads % 32 != 0))
    diag.error_at("/nthreads",
                  fmt::format("nthreads {} must be a positive multiple of 32", *d.num_threads));
  if (d.ranks.size() != size_t(d.num_ranks))
    diag.error_at("/gpus", fmt::format("ngpus is {} but the program has {} gpu elements",
                                       d.num_ranks, d.ranks.size()));
  std::set<int> seen_ranks;
  for (size_t g = 0; g < d.ranks.size(); ++g) {
    const RankProgram &rp = d.ranks[g];
    const std::string gat = fmt::format("/gpus/{}", g);
    const int me = rp.rank.value();
    if (me < 0 || me >= d.num_ranks) {
      diag.error_at(gat + "/id", fmt::format("gpu id {} is out of range [0, {})", me, d.num_ranks));
      continue;
    }
    if (!seen_ranks.insert(me).second)
      diag.error_at(gat + "/id", fmt::format("gpu id {} appears twice", me));
    for (auto [size, attr] :
         {std::pair{rp.input_chunks, "i_chunks"}, std::pair{rp.output_chunks, "o_chunks"},
          std::pair{rp.scratch_chunks, "s_chunks"}})
      if (size < 0)
        diag.error_at(gat + "/" + attr, fmt::format("{} {} must not be negative", attr, size));
    std::set<int> tb_ids;
    for (size_t t = 0; t < rp.thread_blocks.size(); ++t) {
      const ThreadBlock &tb = rp.thread_blocks[t];
      const std::string tat = fmt::format("{}/tbs/{}", gat, t);
      if (tb.id.value() < 0)
        diag.error_at(tat + "/id",
                      fmt::format("rank {}: tb id {} must not be negative", me, tb.id.value()));
      else if (!tb_ids.insert(tb.id.value()).second)
        diag.error_at(tat + "/id",
                      fmt::format("rank {}: tb id {} appears twice", me, tb.id.value()));
      for (auto [peer, attr] : {std::pair{tb.send_peer, "send"}, std::pair{tb.recv_peer, "recv"}}) {
        if (!peer)
          continue;
        if (peer->value() < 0 || peer->value() >= d.num_ranks)
          diag.error_at(tat + "/" + attr,
                        fmt::format("rank {} tb {}: {} peer {} is out of range [-1, {})", me,
                                    tb.id.value(), attr, peer->value(), d.num_ranks));
        else if (peer->value() == me)
          diag.error_at(tat + "/" + attr, fmt::format("rank {} tb {}: {} peer is the rank itself",
                                                      me, tb.id.value(), attr));
      }
      if (tb.channel.value() < 0)
        diag.error_at(tat + "/chan", fmt::format("rank {} tb {}: channel {} must not be negative",
                                                 me, tb.id.value(), tb.channel.value()));
      bool pending_nop_dependency = false;
      for (size_t k = 0; k < tb.steps.size(); ++k) {
        const Instruction &in = tb.steps[k];
        // Built only for an error: a well-formed program of millions of steps formats nothing.
        const auto sat = [&] { return fmt::format("{}/steps/{}", tat, k); };
        const auto where = [&] {
          return fmt::format("rank {} tb {} step {}", me, tb.id.value(), k);
        };
        if (in.declared_index < 0)
          diag.error_at(sat() + "/s",
                        fmt::format("{}: s {} must not be negative", where(), in.declared_index));
        if (in.count < 0)
          diag.error_at(sat() + "/cnt",
                        fmt::format("{}: cnt {} must not be negative", where(), in.count));
        if (op_sends(in.op) && !tb.send_peer)
          diag.error_at(sat() + "/type",
                        fmt::format("{}: '{}' sends, but the thread block has no send peer",
                                    where(), op_type_name(in.op)));
        if (op_receives(in.op) && !tb.recv_peer)
          diag.error_at(sat() + "/type",
                        fmt::format("{}: '{}' receives, but the thread block has no recv peer",
                                    where(), op_type_name(in.op)));
        for (auto [ref, checked, buf_attr, off_attr] :
             {std::tuple{in.src, op_traits(in.op).parser_checks_src, "srcbuf", "srcoff"},
              std::tuple{in.dst, op_traits(in.op).parser_checks_dst, "dstbuf", "dstoff"}}) {
          if (ref.offset < -1)
            diag.error_at(sat() + "/" + off_attr, fmt::format("{}: {} {} must be at least -1",
                                                              where(), off_attr, ref.offset));
          else if (checked && ref.offset >= rp.chunks(ref.buffer))
            diag.error_at(sat() + "/" + off_attr,
                          fmt::format("{}: {} {} is past the end of buffer '{}' ({} chunks)",
                                      where(), off_attr, ref.offset, buffer_kind_name(ref.buffer),
                                      rp.chunks(ref.buffer)));
          else if (checked && ref.offset < 0)
            diag.error_at(sat() + "/" + off_attr,
                          fmt::format("{}: '{}' needs a {} of at least 0", where(),
                                      op_type_name(in.op), off_attr));
          (void)buf_attr;
        }
        if (in.dependency) {
          if (in.dependency->tb.value() < 0)
            diag.error_at(sat() + "/depid", fmt::format("{}: depid {} must be at least -1", where(),
                                                        in.dependency->tb.value()));
          if (in.dependency->step.value() < 0)
            diag.error_at(sat() + "/deps", fmt::format("{}: deps {} must be at least 0 when depid "
                                                       "is set",
                                                       where(), in.dependency->step.value()));
        }
        // The executor folds a nop's dependency into the next real step and rejects a chain of
        // them that ends on a step without its own dependency (docs/semantics.md, "Dependencies").
        if (in.op == OpType::Nop) {
          pending_nop_dependency = pending_nop_dependency || in.dependency.has_value();
        } else {
          if (pending_nop_dependency && !in.dependency)
            diag.error_at(sat() + "/depid",
                          fmt::format("{}: a chain of nop dependencies must end on a step with "
                                      "its own depid, as the executor requires",
                                      where()));
          pending_nop_dependency = false;
        }
      }
    }
    if (!tb_ids.empty() && (*tb_ids.begin() != 0 || *tb_ids.rbegin() + 1 != int(tb_ids.size())))
      diag.error_at(gat, fmt::format("rank {}: tb ids must be contiguous from 0; found {} ids "
                                     "ranging {}..{}",
                                     me, tb_ids.size(), *tb_ids.begin(), *tb_ids.rbegin()));
  }
  if (diag.has_errors())
    return tl::unexpected(diag);

  Program p;
  p.d_ = std::move(d);
  std::sort(p.d_.ranks.begin(), p.d_.ranks.end(),
            [](const RankProgram &a, const RankProgram &b) { return a.rank < b.rank; });
  for (auto &rp : p.d_.ranks)
    std::sort(rp.thread_blocks.begin(), rp.thread_blocks.end(),
              [](const ThreadBlock &a, const ThreadBlock &b) { return a.id < b.id; });
  return p;
}

const RankProgram &Program::rank(RankId r) const {
  SYNCOLL_INVARIANT(r.value() >= 0 && r.index() < d_.ranks.size(), "rank out of range");
  return d_.ranks[r.index()];
}

} // namespace syncoll
