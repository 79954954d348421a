// A compact way to write thread-block programs in tests: steps as {type, src, dst, cnt, depid,
// deps, hasdep} with buffer slots written "i0", "o3", "s1".
#pragma once

#include "model/program.h"
#include "testing/programs.h"

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
      ThreadBlockBuilder tb = thread_block(t.id, t.send, t.recv, t.chan);
      channels = std::max(channels, t.chan + 1);
      for (const St &s : t.steps) {
        auto op = parse_op_type(s.type);
        EXPECT_TRUE(op) << s.type;
        std::optional<Dependency> dep;
        if (s.depid >= 0)
          dep = Dependency{TbId(s.depid), StepIndex(s.deps)};
        tb.step(op.value_or(OpType::Nop), slot(s.src), slot(s.dst), s.cnt, dep, s.hasdep != 0);
      }
      rp.thread_blocks.push_back(tb.take());
    }
    d.ranks.push_back(std::move(rp));
  }
  d.num_channels = channels;
  auto p = Program::create(std::move(d));
  EXPECT_TRUE(p) << p.error().to_string();
  return *p;
}

} // namespace syncoll::testing
