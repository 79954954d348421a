#include "verifier/detail/connections.h"

#include <map>
#include <tuple>

namespace syncoll::verifier::detail {

ConnectionMap map_connections(const Program &program) {
  ConnectionMap m;
  std::map<std::tuple<int, int, int>, int> index;
  auto connection = [&](RankId s, RankId r, ChannelId c) {
    auto key = std::make_tuple(s.value(), r.value(), c.value());
    auto [it, inserted] = index.emplace(key, 0);
    if (inserted) {
      it->second = static_cast<int>(m.connections.size());
      m.connections.push_back({s, r, c, {}, {}});
    }
    return it->second;
  };
  for (const RankProgram &rp : program.ranks()) {
    m.tb_base.push_back(m.num_tbs);
    m.num_tbs += static_cast<int>(rp.thread_blocks.size());
    m.send_connection.emplace_back(rp.thread_blocks.size(), -1);
    m.recv_connection.emplace_back(rp.thread_blocks.size(), -1);
    for (const ThreadBlock &tb : rp.thread_blocks) {
      if (tb.send_peer) {
        int c = connection(rp.rank, *tb.send_peer, tb.channel);
        m.connections[size_t(c)].pushers.push_back(tb.id);
        m.send_connection.back()[tb.id.index()] = c;
      }
      if (tb.recv_peer) {
        int c = connection(*tb.recv_peer, rp.rank, tb.channel);
        m.connections[size_t(c)].poppers.push_back(tb.id);
        m.recv_connection.back()[tb.id.index()] = c;
      }
    }
  }
  return m;
}

} // namespace syncoll::verifier::detail
