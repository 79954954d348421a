// A compact way to write thread-block programs in tests: steps as {type, src, dst, cnt, depid,
// deps, hasdep} with buffer slots written "i0", "o3", "s1".
#pragma once

#include "model/program.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace syncoll::testing {

struct St {
  const char *type;
  const char *src = "i0";
  const char *dst = "i0";
  int cnt = 1;
  int depid = -1;
  int deps = -1;
  int hasdep = 0;
};
struct Tb {
  int id;
  int send;
  int recv;
  int chan;
  std::vector<St> steps;
};
struct Gpu {
  int id;
  int i_chunks;
  int o_chunks;
  int s_chunks;
  std::vector<Tb> tbs;
};

inline BufferRef slot(const char *s) {
  auto kind = parse_buffer_kind(std::string(1, s[0]));
  EXPECT_TRUE(kind) << s;
  return {kind.value_or(BufferKind::Input), std::stoi(s + 1)};
}

inline Program make_program(const char *coll, int chunks_per_loop, bool inplace, bool outofplace,
                            const std::vector<Gpu> &gpus, Protocol proto = Protocol::Simple) {
  ProgramDraft d;
  d.name = "test";
  d.collective = coll;
  d.protocol = proto;
  d.num_ranks = static_cast<int>(gpus.size());
  d.chunks_per_loop = chunks_per_loop;
  d.in_place = inplace;
  d.out_of_place = outofplace;
  int channels = 1;
  for (const Gpu &g : gpus) {
    RankProgram rp{RankId(g.id), g.i_chunks, g.o_chunks, g.s_chunks, {}};
    for (const Tb &t : g.tbs) {
      ThreadBlock tb;
      tb.id = TbId(t.id);
      if (t.send >= 0)
        tb.send_peer = RankId(t.send);
      if (t.recv >= 0)
        tb.recv_peer = RankId(t.recv);
      tb.channel = ChannelId(t.chan);
      channels = std::max(channels, t.chan + 1);
      for (size_t k = 0; k < t.steps.size(); ++k) {
        const St &s = t.steps[k];
        Instruction in;
        auto op = parse_op_type(s.type);
        EXPECT_TRUE(op) << s.type;
        in.op = op.value_or(OpType::Nop);
        in.src = slot(s.src);
        in.dst = slot(s.dst);
        in.count = s.cnt;
        if (s.depid >= 0)
          in.dependency = Dependency{TbId(s.depid), StepIndex(s.deps)};
        in.has_dep = s.hasdep != 0;
        in.declared_index = static_cast<int>(k);
        tb.steps.push_back(in);
      }
      rp.thread_blocks.push_back(std::move(tb));
    }
    d.ranks.push_back(std::move(rp));
  }
  d.num_channels = channels;
  auto p = Program::create(std::move(d));
  EXPECT_TRUE(p) << p.error().to_string();
  return *p;
}

} // namespace syncoll::testing
