// Connections of a program: which thread blocks push onto and pop from each
// (sender rank, receiver rank, channel) FIFO (docs/semantics.md, "FIFOs").
#pragma once

#include "model/program.h"

#include <vector>

namespace syncoll::verifier::detail {

struct Connection {
  RankId sender;
  RankId receiver;
  ChannelId channel;
  std::vector<TbId> pushers; ///< thread blocks of `sender` with send peer `receiver` on channel
  std::vector<TbId> poppers; ///< thread blocks of `receiver` with recv peer `sender` on channel
};

struct ConnectionMap {
  std::vector<Connection> connections; ///< sorted by (sender, receiver, channel)
  /// Per rank, per thread block: its send and receive connection, -1 for none.
  std::vector<std::vector<int>> send_connection;
  std::vector<std::vector<int>> recv_connection;
  /// Global index of a thread block: tb_base[rank] + tb id.
  std::vector<int> tb_base;
  int num_tbs = 0;
};

ConnectionMap map_connections(const Program &program);

/// Messages a step moves on its connection when a transfer carries at most `max_chunks` chunks
/// (docs/semantics.md, "Pipelining and count splitting"). Local steps move none.
inline int messages_of(const Instruction &in, int max_chunks) {
  if (!op_sends(in.op) && !op_receives(in.op))
    return 0;
  const int chunks = std::max(1, in.count);
  return (chunks + max_chunks - 1) / max_chunks;
}

} // namespace syncoll::verifier::detail
