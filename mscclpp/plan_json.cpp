#include "mscclpp/plan_json.h"

#include "model/json_document.h"
#include "model/text.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace syncoll::mscclpp {
namespace {

// A plan's counts and ids: far above any machine's, small enough to index with.
constexpr int64_t kMaxCount = 1 << 20;

Expected<int> int_member(const JsonView &v, const std::string &key, int64_t min = 0,
                         int64_t max = kMaxCount) {
  SYNCOLL_TRY(m, v.member(key));
  SYNCOLL_TRY(i, m.as_int(min, max));
  return int(i);
}

Expected<std::vector<int>> int_list(const JsonView &v, int64_t min = 0, int64_t max = kMaxCount) {
  SYNCOLL_TRY(items, v.elements());
  std::vector<int> out;
  for (const JsonView &item : items) {
    SYNCOLL_TRY(i, item.as_int(min, max));
    out.push_back(int(i));
  }
  return out;
}

Expected<PlanBuffer> buffer_of(const JsonView &v) {
  SYNCOLL_TRY(name, v.as_string());
  for (PlanBuffer b : {PlanBuffer::Input, PlanBuffer::Output, PlanBuffer::Scratch})
    if (plan_buffer_name(b) == name)
      return b;
  return v.error(fmt::format("unknown buffer '{}' (i, o or s)", name));
}

Expected<ChannelKind> channel_kind_of(const JsonView &v) {
  SYNCOLL_TRY(s, v.as_string());
  for (ChannelKind k :
       {ChannelKind::Memory, ChannelKind::Port, ChannelKind::Switch, ChannelKind::None})
    if (s == channel_kind_name(k))
      return k;
  return v.error(fmt::format("unknown channel type '{}' (memory, port, switch or none)", s));
}

// What the GPU's parts look like from its operations: read before the thread blocks, so that an
// operation's references are checked where it names them.
struct GpuContext {
  const ExecutionPlan &plan;
  const PlanGpu &gpu;
  const PlanThreadBlock &tb;
  const std::vector<PlanGpu> &gpus; ///< every GPU's buffers, for remote ranges
};

int tb_channels(const PlanThreadBlock &tb, ChannelKind kind) {
  int n = 0;
  for (const ThreadBlockChannels &c : tb.channels)
    if (c.kind == kind)
      n += int(c.ids.size());
  return n;
}

// The thread block's `index`-th remote buffer reference through channels of `kind`.
std::optional<int> tb_remote_buffer(const PlanThreadBlock &tb, ChannelKind kind, int index) {
  for (const ThreadBlockRemoteBuffers &r : tb.remote_buffers) {
    if (r.access != kind)
      continue;
    if (index < int(r.ids.size()))
      return r.ids[size_t(index)];
    index -= int(r.ids.size());
  }
  return std::nullopt;
}

Expected<BufferSlice> read_slice(const JsonView &v, const GpuContext &c, ChannelKind kind) {
  BufferSlice s;
  s.where = v.location();
  SYNCOLL_TRY(index, int_member(v, "index"));
  s.index = index;
  if (auto size = v.optional_member("size")) {
    SYNCOLL_TRY(n, size->as_int(0, kMaxCount));
    s.size = int(n);
  }
  int chunks = 0;
  std::string what;
  if (auto type = v.optional_member("type")) {
    SYNCOLL_TRY(b, buffer_of(*type));
    s.local = b;
    chunks = c.gpu.chunks(b);
    what = fmt::format("GPU {}'s buffer {}", c.gpu.id, plan_buffer_name(b));
  } else if (auto id = v.optional_member("buffer_id")) {
    SYNCOLL_TRY(ref, id->as_int(0, kMaxCount));
    const auto remote = tb_remote_buffer(c.tb, kind, int(ref));
    if (!remote)
      return id->error(fmt::format("thread block {} has no remote buffer {} through {} channels",
                                   c.tb.id, ref, channel_kind_name(kind)));
    s.remote = int(ref);
    const PlanRemoteBuffer &rb = c.gpu.remote_buffers[size_t(*remote)];
    chunks = c.gpus[size_t(rb.rank)].chunks(rb.buffer);
    what = fmt::format("GPU {}'s buffer {}", rb.rank, plan_buffer_name(rb.buffer));
  } else if (auto sw = v.optional_member("switch_channel_id")) {
    SYNCOLL_TRY(ref, sw->as_int(0, kMaxCount));
    std::vector<int> switches;
    for (const ThreadBlockChannels &tc : c.tb.channels)
      if (tc.kind == ChannelKind::Switch)
        switches.insert(switches.end(), tc.ids.begin(), tc.ids.end());
    if (ref >= int64_t(switches.size()))
      return sw->error(fmt::format("thread block {} has no switch channel {}", c.tb.id, ref));
    s.switch_channel = int(ref);
    int k = switches[size_t(ref)];
    for (const PlanChannel &ch : c.gpu.channels)
      if (ch.kind == ChannelKind::Switch) {
        if (k < int(ch.rank_groups.size())) {
          chunks = c.gpu.chunks(*ch.buffer);
          what = fmt::format("the multicast buffer {}", plan_buffer_name(*ch.buffer));
          break;
        }
        k -= int(ch.rank_groups.size());
      }
  } else {
    return v.error("a buffer reference names its buffer: 'type' (local), 'buffer_id' (a peer's) "
                   "or 'switch_channel_id' (NVLS)");
  }
  if (int64_t(s.index) + s.size > chunks)
    return v.error(fmt::format("chunks {} to {} of {}, which has {}", s.index,
                               int64_t(s.index) + s.size - 1, what, chunks));
  return s;
}

Expected<PlanOp> read_op(const JsonView &v, const GpuContext &c, int depth) {
  PlanOp op;
  op.where = v.location();
  SYNCOLL_TRY(name_view, v.member("name"));
  SYNCOLL_TRY(name, name_view.as_string());
  const OpTraits *traits = find_op(name);
  if (!traits) {
    std::string known;
    for (const OpTraits &t : all_op_traits())
      known += (known.empty() ? "" : ", ") + std::string(t.name);
    return name_view.error(fmt::format("unknown operation '{}' (known: {})", name, known));
  }
  op.kind = traits->kind;
  if (auto type = v.optional_member("channel_type")) {
    SYNCOLL_TRY(kind, channel_kind_of(*type));
    op.channel_kind = kind;
  }
  if (traits->uses_channels) {
    if (std::find(traits->channel_kinds.begin(), traits->channel_kinds.end(), op.channel_kind) ==
        traits->channel_kinds.end()) {
      std::string kinds;
      for (ChannelKind k : traits->channel_kinds)
        kinds += (kinds.empty() ? "" : " or ") + std::string(channel_kind_name(k));
      return v.error(fmt::format("'{}' runs on {} channels, not {}", name, kinds,
                                 channel_kind_name(op.channel_kind)));
    }
    if (auto ids = v.optional_member("channel_ids")) {
      SYNCOLL_TRY(list, int_list(*ids));
      const int have = tb_channels(c.tb, op.channel_kind);
      for (int id : list)
        if (id >= have)
          return ids->error(fmt::format("thread block {} has {} {} channel(s); no channel {}",
                                        c.tb.id, have, channel_kind_name(op.channel_kind), id));
      op.channels = std::move(list);
    }
  }
  for (const auto &[key, out] : {std::pair{"src_buff", &op.src}, std::pair{"dst_buff", &op.dst}})
    if (auto slices = v.optional_member(key)) {
      SYNCOLL_TRY(items, slices->elements());
      for (const JsonView &item : items) {
        SYNCOLL_TRY(s, read_slice(item, c, op.channel_kind));
        out->push_back(std::move(s));
      }
    }
  if (auto group = v.optional_member("tbg_info")) {
    SYNCOLL_TRY(size, int_member(*group, "tbg_size", 1));
    SYNCOLL_TRY(index, int_member(*group, "tb_id", 0, size - 1));
    op.group_index = index;
    op.group_size = size;
  }
  if (auto barrier = v.optional_member("barrier_id")) {
    SYNCOLL_TRY(id, barrier->as_int(0, kMaxCount));
    op.barrier_id = int(id);
  }
  if (auto blocks = v.optional_member("num_threadblocks")) {
    SYNCOLL_TRY(n, blocks->as_int(1, int64_t(c.gpu.threadblocks.size())));
    op.barrier_threadblocks = int(n);
  }
  if (auto sems = v.optional_member("semaphore_ids")) {
    SYNCOLL_TRY(list, int_list(*sems));
    for (int id : list)
      if (id >= int(c.gpu.semaphores.size()))
        return sems->error(fmt::format("GPU {} has {} semaphore(s); no semaphore {}", c.gpu.id,
                                       c.gpu.semaphores.size(), id));
    op.semaphores = std::move(list);
  }
  if (op.kind == OpKind::Pipeline) {
    if (depth > 0)
      return v.error("a pipeline inside a pipeline (the executor runs one level)");
    SYNCOLL_TRY(iter, v.member("iter_context"));
    SYNCOLL_TRY(unit, iter.member("unit_size"));
    SYNCOLL_TRY(unit_bytes, unit.as_int(1, int64_t(1) << 40));
    op.pipeline_unit_bytes = unit_bytes;
    SYNCOLL_TRY(chunks, int_member(iter, "num_chunks", 1));
    op.pipeline_chunks = chunks;
    SYNCOLL_TRY(body, v.member("ops"));
    SYNCOLL_TRY(items, body.elements());
    for (const JsonView &item : items) {
      SYNCOLL_TRY(inner, read_op(item, c, depth + 1));
      op.ops.push_back(std::move(inner));
    }
  }
  return op;
}

Expected<PlanChannel> read_channel(const JsonView &v, int self, int ranks) {
  PlanChannel ch;
  ch.where = v.location();
  SYNCOLL_TRY(type, v.member("channel_type"));
  SYNCOLL_TRY(kind, channel_kind_of(type));
  ch.kind = kind;
  if (kind == ChannelKind::Switch) {
    SYNCOLL_TRY(buffer_view, v.member("buffer_type"));
    SYNCOLL_TRY(buffer, buffer_of(buffer_view));
    ch.buffer = buffer;
    SYNCOLL_TRY(groups_view, v.member("rank_groups"));
    SYNCOLL_TRY(groups, groups_view.elements());
    for (const JsonView &g : groups) {
      SYNCOLL_TRY(ranks_view, g.member("ranks"));
      SYNCOLL_TRY(list, int_list(ranks_view, 0, ranks - 1));
      if (std::find(list.begin(), list.end(), self) == list.end())
        return ranks_view.error(
            fmt::format("GPU {}'s switch channel groups ranks without it", self));
      ch.rank_groups.push_back(std::move(list));
    }
    return ch;
  }
  if (kind == ChannelKind::None)
    return type.error("a GPU's channel is memory, port or switch");
  SYNCOLL_TRY(peers_view, v.member("connected_to"));
  SYNCOLL_TRY(peers, int_list(peers_view, 0, ranks - 1));
  if (std::find(peers.begin(), peers.end(), self) != peers.end())
    return peers_view.error(fmt::format("GPU {} has a channel to itself", self));
  ch.peers = std::move(peers);
  return ch;
}

// A GPU's buffers, channels, remote buffers and semaphores (its thread blocks come after every
// GPU's are read: an operation's remote range is in another GPU's buffer).
Expected<PlanGpu> read_gpu_parts(const JsonView &v, int rank, int ranks) {
  PlanGpu gpu;
  gpu.where = v.location();
  SYNCOLL_TRY(id_view, v.member("id"));
  SYNCOLL_TRY(id, id_view.as_int(0, kMaxCount));
  if (id != rank)
    return id_view.error(fmt::format("GPU {} is listed at position {}: the executor reads GPU r "
                                     "from position r",
                                     id, rank));
  gpu.id = rank;
  SYNCOLL_TRY(in, int_member(v, "input_chunks"));
  SYNCOLL_TRY(out, int_member(v, "output_chunks"));
  SYNCOLL_TRY(scratch, int_member(v, "scratch_chunks"));
  gpu.input_chunks = in;
  gpu.output_chunks = out;
  gpu.scratch_chunks = scratch;
  if (in == 0 && out == 0)
    return v.error(fmt::format("GPU {} has neither input nor output chunks", rank));
  if (auto channels = v.optional_member("channels")) {
    SYNCOLL_TRY(items, channels->elements());
    for (const JsonView &item : items) {
      SYNCOLL_TRY(ch, read_channel(item, rank, ranks));
      gpu.channels.push_back(std::move(ch));
    }
  }
  if (auto remotes = v.optional_member("remote_buffers")) {
    SYNCOLL_TRY(items, remotes->elements());
    for (const JsonView &item : items) {
      PlanRemoteBuffer rb;
      rb.where = item.location();
      SYNCOLL_TRY(peer, int_member(item, "rank", 0, ranks - 1));
      rb.rank = peer;
      SYNCOLL_TRY(type, item.member("type"));
      SYNCOLL_TRY(buffer, buffer_of(type));
      rb.buffer = buffer;
      if (auto access = item.optional_member("access_channel_types")) {
        SYNCOLL_TRY(kinds, access->elements());
        for (const JsonView &k : kinds) {
          SYNCOLL_TRY(kind, channel_kind_of(k));
          rb.access.push_back(kind);
        }
      }
      gpu.remote_buffers.push_back(std::move(rb));
    }
  }
  if (auto sems = v.optional_member("semaphores")) {
    SYNCOLL_TRY(items, sems->elements());
    for (const JsonView &item : items) {
      SYNCOLL_TRY(init, int_member(item, "init_value"));
      gpu.semaphores.push_back(init);
    }
  }
  return gpu;
}

Expected<void> read_threadblocks(const JsonView &v, const ExecutionPlan &plan, PlanGpu &gpu) {
  SYNCOLL_TRY(tbs_view, v.member("threadblocks"));
  SYNCOLL_TRY(tbs, tbs_view.elements());
  gpu.threadblocks.resize(tbs.size());
  for (size_t k = 0; k < tbs.size(); ++k) {
    const JsonView &t = tbs[k];
    PlanThreadBlock &tb = gpu.threadblocks[k];
    tb.where = t.location();
    SYNCOLL_TRY(id_view, t.member("id"));
    SYNCOLL_TRY(id, id_view.as_int(0, kMaxCount));
    if (id != int64_t(k))
      return id_view.error(fmt::format("thread block {} is listed at position {}: the executor "
                                       "runs thread block k from position k",
                                       id, k));
    tb.id = int(k);
    if (auto channels = t.optional_member("channels")) {
      SYNCOLL_TRY(items, channels->elements());
      for (const JsonView &item : items) {
        SYNCOLL_TRY(type, item.member("channel_type"));
        SYNCOLL_TRY(kind, channel_kind_of(type));
        SYNCOLL_TRY(ids_view, item.member("channel_ids"));
        SYNCOLL_TRY(ids, int_list(ids_view));
        for (int ch : ids)
          if (ch >= gpu.channel_count(kind))
            return ids_view.error(fmt::format("GPU {} has {} {} channel(s); no channel {}", gpu.id,
                                              gpu.channel_count(kind), channel_kind_name(kind),
                                              ch));
        tb.channels.push_back({kind, std::move(ids)});
      }
    }
    if (auto refs = t.optional_member("remote_buffer_refs")) {
      SYNCOLL_TRY(items, refs->elements());
      for (const JsonView &item : items) {
        SYNCOLL_TRY(type, item.member("access_channel_type"));
        SYNCOLL_TRY(kind, channel_kind_of(type));
        SYNCOLL_TRY(ids_view, item.member("remote_buffer_ids"));
        SYNCOLL_TRY(ids, int_list(ids_view));
        for (int rb : ids)
          if (rb >= int(gpu.remote_buffers.size()))
            return ids_view.error(fmt::format("GPU {} has {} remote buffer(s); no buffer {}",
                                              gpu.id, gpu.remote_buffers.size(), rb));
        tb.remote_buffers.push_back({kind, std::move(ids)});
      }
    }
  }
  // Operations last: a barrier names how many of the GPU's thread blocks it joins.
  for (size_t k = 0; k < tbs.size(); ++k) {
    SYNCOLL_TRY(ops_view, tbs[k].member("ops"));
    SYNCOLL_TRY(ops, ops_view.elements());
    const GpuContext context{plan, gpu, gpu.threadblocks[k], plan.gpus};
    for (const JsonView &item : ops) {
      SYNCOLL_TRY(op, read_op(item, context, 0));
      gpu.threadblocks[k].ops.push_back(std::move(op));
    }
  }
  return {};
}

} // namespace

Expected<ExecutionPlan> read_execution_plan(std::string_view text, const std::string &file) {
  SYNCOLL_TRY(doc, JsonDocument::parse(text, file));
  const JsonView root = doc.root();
  if (!root.is_object())
    return root.error("expected an MSCCL++ execution plan (a JSON object)");
  ExecutionPlan plan;
  plan.file = file;
  SYNCOLL_TRY(name_view, root.member("name"));
  SYNCOLL_TRY(name, name_view.as_string());
  plan.name = name;
  SYNCOLL_TRY(coll_view, root.member("collective"));
  SYNCOLL_TRY(coll, coll_view.as_string());
  const auto kind = parse_collective_kind(coll);
  if (!kind || !is_mscclpp_collective(*kind))
    return coll_view.error(fmt::format("collective '{}' is none of MSCCL++'s (allreduce, "
                                       "allgather, reducescatter, broadcast, alltoall)",
                                       coll));
  plan.collective = *kind;
  SYNCOLL_TRY(protocol_view, root.member("protocol"));
  SYNCOLL_TRY(protocol, protocol_view.as_string());
  if (protocol != "Simple" && protocol != "LL")
    return protocol_view.error(fmt::format("protocol '{}' (Simple or LL)", protocol));
  plan.packets = protocol == "LL";
  SYNCOLL_TRY(in_place_view, root.member("inplace"));
  SYNCOLL_TRY(in_place, in_place_view.as_bool());
  plan.in_place = in_place;
  for (const auto &[key, out] : {std::pair{"reuse_resources", &plan.reuse_resources},
                                 std::pair{"use_double_scratch_buffer", &plan.double_scratch}})
    if (auto flag = root.optional_member(key)) {
      SYNCOLL_TRY(b, flag->as_bool());
      *out = b;
    }
  if (auto align = root.optional_member("buffer_alignment")) {
    SYNCOLL_TRY(a, align->as_int(1, 1 << 20));
    plan.buffer_alignment = int(a);
  }
  if (auto threads = root.optional_member("num_threads_per_block")) {
    SYNCOLL_TRY(t, threads->as_int(1, 1024));
    plan.threads_per_block = int(t);
  }
  // Message sizes up to 2^64 - 1 (the DSL's "no limit"), read as a double and clamped.
  for (const auto &[key, out] : {std::pair{"min_message_size", &plan.min_message_bytes},
                                 std::pair{"max_message_size", &plan.max_message_bytes}})
    if (auto size = root.optional_member(key)) {
      SYNCOLL_TRY(bytes, size->as_number(0, 1.9e19));
      *out = bytes >= 18446744073709551615.0 ? UINT64_MAX : uint64_t(bytes);
    }
  if (plan.min_message_bytes > plan.max_message_bytes)
    return root.error(fmt::format("min_message_size {} is above max_message_size {}",
                                  plan.min_message_bytes, plan.max_message_bytes));
  SYNCOLL_TRY(gpus_view, root.member("gpus"));
  SYNCOLL_TRY(gpus, gpus_view.elements());
  if (gpus.empty())
    return gpus_view.error("a plan runs on at least one GPU");
  const int ranks = int(gpus.size());
  for (int r = 0; r < ranks; ++r) {
    SYNCOLL_TRY(gpu, read_gpu_parts(gpus[size_t(r)], r, ranks));
    plan.gpus.push_back(std::move(gpu));
  }
  for (int r = 0; r < ranks; ++r) {
    // Each GPU's thread blocks need every GPU's buffers (a put's range is in its peer's).
    PlanGpu gpu = plan.gpus[size_t(r)];
    SYNCOLL_CHECK(read_threadblocks(gpus[size_t(r)], plan, gpu));
    plan.gpus[size_t(r)] = std::move(gpu);
  }
  return plan;
}

bool is_execution_plan(std::string_view text) {
  auto doc = JsonDocument::parse(text, "");
  return doc && is_execution_plan(doc->root());
}

bool is_execution_plan(const JsonView &root) {
  return root.has("gpus") && root.has("collective");
}

Expected<ExecutionPlan> read_execution_plan_file(const std::string &path) {
  SYNCOLL_TRY(text, read_text_file(path));
  return read_execution_plan(text, path);
}

namespace {

using nlohmann::ordered_json;

ordered_json slice_json(const BufferSlice &s) {
  ordered_json j;
  if (s.local)
    j["type"] = std::string(plan_buffer_name(*s.local));
  if (s.remote)
    j["buffer_id"] = *s.remote;
  if (s.switch_channel)
    j["switch_channel_id"] = *s.switch_channel;
  j["index"] = s.index;
  j["size"] = s.size;
  return j;
}

ordered_json op_json(const PlanOp &op) {
  ordered_json j;
  j["name"] = std::string(op_traits(op.kind).name);
  if (op.channel_kind != ChannelKind::None) {
    j["channel_type"] = std::string(channel_kind_name(op.channel_kind));
    if (!op.channels.empty())
      j["channel_ids"] = op.channels;
  }
  for (const auto &[key, slices] : {std::pair{"src_buff", &op.src}, std::pair{"dst_buff", &op.dst}})
    if (!slices->empty()) {
      ordered_json list = ordered_json::array();
      for (const BufferSlice &s : *slices)
        list.push_back(slice_json(s));
      j[key] = list;
    }
  if (op.group_size > 1)
    j["tbg_info"] = {{"tb_id", op.group_index}, {"tbg_size", op.group_size}};
  if (op.barrier_id)
    j["barrier_id"] = *op.barrier_id;
  if (op.barrier_threadblocks)
    j["num_threadblocks"] = *op.barrier_threadblocks;
  if (!op.semaphores.empty())
    j["semaphore_ids"] = op.semaphores;
  if (op.kind == OpKind::Pipeline) {
    j["iter_context"] = {{"unit_size", op.pipeline_unit_bytes}, {"num_chunks", op.pipeline_chunks}};
    ordered_json body = ordered_json::array();
    for (const PlanOp &inner : op.ops)
      body.push_back(op_json(inner));
    j["ops"] = body;
  }
  return j;
}

ordered_json gpu_json(const PlanGpu &g) {
  ordered_json j;
  j["id"] = g.id;
  j["input_chunks"] = g.input_chunks;
  j["output_chunks"] = g.output_chunks;
  j["scratch_chunks"] = g.scratch_chunks;
  ordered_json tbs = ordered_json::array();
  for (const PlanThreadBlock &tb : g.threadblocks) {
    ordered_json t;
    t["id"] = tb.id;
    ordered_json ops = ordered_json::array();
    for (const PlanOp &op : tb.ops)
      ops.push_back(op_json(op));
    t["ops"] = ops;
    t["channels"] = ordered_json::array();
    for (const ThreadBlockChannels &c : tb.channels)
      t["channels"].push_back(
          {{"channel_type", std::string(channel_kind_name(c.kind))}, {"channel_ids", c.ids}});
    t["remote_buffer_refs"] = ordered_json::array();
    for (const ThreadBlockRemoteBuffers &r : tb.remote_buffers)
      t["remote_buffer_refs"].push_back(
          {{"access_channel_type", std::string(channel_kind_name(r.access))},
           {"remote_buffer_ids", r.ids}});
    tbs.push_back(t);
  }
  j["threadblocks"] = tbs;
  j["channels"] = ordered_json::array();
  for (const PlanChannel &c : g.channels) {
    ordered_json cj;
    cj["channel_type"] = std::string(channel_kind_name(c.kind));
    if (c.kind == ChannelKind::Switch) {
      cj["buffer_type"] = std::string(plan_buffer_name(*c.buffer));
      cj["rank_groups"] = ordered_json::array();
      for (const std::vector<int> &group : c.rank_groups)
        cj["rank_groups"].push_back({{"size", group.size()}, {"ranks", group}});
    } else {
      cj["connected_to"] = c.peers;
    }
    j["channels"].push_back(cj);
  }
  j["remote_buffers"] = ordered_json::array();
  for (const PlanRemoteBuffer &rb : g.remote_buffers) {
    ordered_json access = ordered_json::array();
    for (ChannelKind k : rb.access)
      access.push_back(std::string(channel_kind_name(k)));
    j["remote_buffers"].push_back({{"rank", rb.rank},
                                   {"type", std::string(plan_buffer_name(rb.buffer))},
                                   {"access_channel_types", access}});
  }
  j["semaphores"] = ordered_json::array();
  for (int init : g.semaphores)
    j["semaphores"].push_back({{"init_value", init}});
  return j;
}

} // namespace

std::string execution_plan_json(const ExecutionPlan &plan) {
  ordered_json j;
  j["name"] = plan.name;
  j["collective"] = std::string(collective_kind_name(plan.collective));
  j["protocol"] = plan.packets ? "LL" : "Simple";
  j["inplace"] = plan.in_place;
  j["reuse_resources"] = plan.reuse_resources;
  ordered_json gpus = ordered_json::array();
  for (const PlanGpu &g : plan.gpus)
    gpus.push_back(gpu_json(g));
  j["gpus"] = gpus;
  j["num_threads_per_block"] = plan.threads_per_block;
  j["use_double_scratch_buffer"] = plan.double_scratch;
  j["buffer_alignment"] = plan.buffer_alignment;
  j["min_message_size"] = plan.min_message_bytes;
  j["max_message_size"] = plan.max_message_bytes;
  return to_canonical_json(j);
}

} // namespace syncoll::mscclpp
