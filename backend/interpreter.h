// The interpreter of device tables (backend/device_tables.h): one thread block of a
// program, run by one CUDA block on a GPU or by one host thread in the CPU executor. The same
// source runs in both; only the platform differs (how threads of a block meet, how counters are
// loaded and stored, how a wait gives up).
//
// Per step: wait for the dependency's flag (acquire), then move data in messages of at most
// `per_message` chunks. A receive waits for the connection's tail (acquire) or, under LL, for
// each 16-byte line's flag; a send waits for a credit (acquire) so that at most `fifo_depth`
// messages are outstanding, writes the FIFO slot (or, for a direct put, the receiver's
// destination), and announces it (release). A consumed message returns its credit (release).
// A publishing step stores its flag (release) once every thread of the block is done.
//
// Platform requirements (P): kPacks (whether data moves in 16-byte packs), thread(), threads(),
// barrier(), barrier_or(bool) (a barrier that also tells every thread whether any passed true),
// load_acquire / store_release on 64-bit counters, store_line / load_line for LL lines, progress()
// after each step (the host watchdog's pulse), and a Waiter made by waiter() whose keep_going() is
// false once the run is being stopped (watchdog).
#pragma once

#include "backend/device_tables.h"
#include "backend/element.h"

namespace syncoll::backend::device {

/// Everything a block reads, in the executing address space.
struct Tables {
  const Step *steps = nullptr;
  const Block *blocks = nullptr;
  const Connection *connections = nullptr;
  const int32_t *units = nullptr; ///< chunk table: unit in the owning rank's arena
  const RankBases *bases = nullptr;
  BlockStatus *status = nullptr; ///< per block
  RunShape shape;
  ReduceOp op = ReduceOp::Sum;
  int64_t launch = 0; ///< launches of this program so far; flags stay monotone across them
};

/// kOp: the reduction operator fixed at compile time (the GPU kernels, one per operator), or
/// kRuntimeOp to read it from the tables (the CPU executor).
inline constexpr int kRuntimeOp = -1;

template <class P, class T, int kOp = kRuntimeOp> class Interpreter {
public:
  SYNCOLL_HOST_DEVICE Interpreter(P &platform, const Tables &tables)
      : p_(platform), t_(tables), s_(tables.shape), layout_(comm_layout(tables.shape)) {}

  /// Runs block `b` through every pipeline iteration; false when it was stopped.
  SYNCOLL_HOST_DEVICE bool run_block(int b) {
    const Block block = t_.blocks[b];
    Counters n = load_counters(block);
    bool ok = true;
    for (int it = 0; ok && it < s_.iterations; ++it) {
      const int64_t offset = int64_t(it) * s_.tile_elements;
      const int64_t elements = min64(s_.tile_elements, s_.chunk_elements - offset);
      const int64_t flag_base = (t_.launch * s_.iterations + it) * s_.flag_stride;
      for (int k = 0; ok && k < block.num_steps; ++k) {
        const Step step = t_.steps[block.first_step + k];
        if (step.dependency_block >= 0) {
          uint64_t *flag = flag_at(block.rank, t_.blocks[step.dependency_block].flag);
          const uint64_t goal = uint64_t(flag_base + step.dependency_step) + 1;
          ok = wait_counter(b, k, it, kWaitsFlag, flag, goal);
          if (!ok)
            break;
        }
        ok = execute(b, block, step, k, it, offset, elements, n);
        if (ok && (step.bits & kPublishes)) {
          p_.barrier();
          if (p_.thread() == 0)
            p_.store_release(flag_at(block.rank, block.flag), uint64_t(flag_base + k) + 1);
        }
        p_.progress();
      }
    }
    p_.barrier();
    if (p_.thread() == 0) {
      store_counters(block, n);
      if (ok)
        t_.status[b].finished = 1;
    }
    return ok;
  }

private:
  P &p_;
  const Tables &t_;
  const RunShape &s_;
  const CommLayout layout_;

  // A block's place on its two connections: messages taken from the inbound one and sent on the
  // outbound one, over every launch so far.
  struct Counters {
    uint64_t taken = 0, sent = 0;
  };

  SYNCOLL_HOST_DEVICE static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
  SYNCOLL_HOST_DEVICE ReduceOp op() const {
    if constexpr (kOp == kRuntimeOp)
      return t_.op;
    else
      return ReduceOp(kOp);
  }

  SYNCOLL_HOST_DEVICE uint64_t *counter(int rank, int64_t region, int index) const {
    return reinterpret_cast<uint64_t *>(t_.bases[rank].comm + region +
                                        CommLayout::kCounterBytes * index);
  }
  SYNCOLL_HOST_DEVICE uint64_t *flag_at(int rank, int index) const {
    return counter(rank, layout_.flags, index);
  }
  SYNCOLL_HOST_DEVICE char *fifo_slot(const Connection &c, uint64_t message) const {
    return t_.bases[c.receiver].comm + layout_.fifos +
           (int64_t(c.inbound) * s_.fifo_depth + int64_t(message % uint64_t(s_.fifo_depth))) *
               s_.slot_bytes;
  }
  SYNCOLL_HOST_DEVICE T *chunk(int rank, int32_t index, int64_t offset) const {
    return reinterpret_cast<T *>(t_.bases[rank].arena) +
           int64_t(t_.units[index]) * s_.chunk_elements + offset;
  }

  SYNCOLL_HOST_DEVICE Counters load_counters(const Block &block) const {
    Counters n;
    if (block.recv_connection >= 0) {
      const Connection &c = t_.connections[block.recv_connection];
      n.taken = *counter(c.receiver, layout_.taken, c.inbound);
    }
    if (block.send_connection >= 0) {
      const Connection &c = t_.connections[block.send_connection];
      n.sent = *counter(c.sender, layout_.sent, c.outbound);
    }
    return n;
  }
  SYNCOLL_HOST_DEVICE void store_counters(const Block &block, const Counters &n) const {
    if (block.recv_connection >= 0) {
      const Connection &c = t_.connections[block.recv_connection];
      *counter(c.receiver, layout_.taken, c.inbound) = n.taken;
    }
    if (block.send_connection >= 0) {
      const Connection &c = t_.connections[block.send_connection];
      *counter(c.sender, layout_.sent, c.outbound) = n.sent;
    }
  }

  SYNCOLL_HOST_DEVICE void note_wait(int b, int k, int it, WaitKind kind) const {
    BlockStatus &st = t_.status[b];
    st.step = k;
    st.iteration = it;
    st.waiting = kind;
  }

  // Thread 0 waits until *counter >= goal; every thread learns whether the run goes on.
  SYNCOLL_HOST_DEVICE bool wait_counter(int b, int k, int it, WaitKind kind, uint64_t *at,
                                        uint64_t goal) {
    bool stopped = false;
    if (p_.thread() == 0 && p_.load_acquire(at) < goal) {
      note_wait(b, k, it, kind);
      auto waiter = p_.waiter();
      while (p_.load_acquire(at) < goal)
        if (!waiter.keep_going()) {
          stopped = true;
          break;
        }
    }
    return !p_.barrier_or(stopped);
  }

  // One step over elements [offset, offset + elements) of each of its chunks.
  SYNCOLL_HOST_DEVICE bool execute(int b, const Block &block, const Step &step, int k, int it,
                                   int64_t offset, int64_t elements, Counters &n) {
    const uint32_t bits = step.bits;
    const bool receives = bits & kReceives, sends = bits & kSends;
    if (!(bits & (kReceives | kSends | kReadsSrc | kWritesDst)))
      return true;
    const int per = (receives || sends) ? s_.per_message : step.count;
    for (int lo = 0; lo < step.count; lo += per) {
      const int hi = lo + per < step.count ? lo + per : step.count;
      const Connection *in = receives ? &t_.connections[block.recv_connection] : nullptr;
      const Connection *out = sends ? &t_.connections[block.send_connection] : nullptr;
      const bool ll_in = in && s_.ll, ll_out = out && s_.ll;
      if (in && !ll_in &&
          !wait_counter(b, k, it, kWaitsMessage, counter(in->receiver, layout_.tails, in->inbound),
                        n.taken + 1))
        return false;
      if (out &&
          !wait_counter(b, k, it, kWaitsRoom, counter(out->sender, layout_.credits, out->outbound),
                        n.sent + 1 > uint64_t(s_.fifo_depth) ? n.sent + 1 - s_.fifo_depth : 0))
        return false;
      char *got = in && !(bits & kLandsDirect) ? fifo_slot(*in, n.taken) : nullptr;
      char *slot = out && !(bits & kPutsDirect) ? fifo_slot(*out, n.sent) : nullptr;
      bool ok = true;
      if (ll_in || ll_out)
        ok = move_ll(b, k, it, block.rank, step, lo, hi, offset, elements, got, slot,
                     uint32_t(n.taken + 1), uint32_t(n.sent + 1), out);
      else
        move_simple(block.rank, step, lo, hi, offset, elements, got, slot, out);
      if (p_.barrier_or(!ok))
        return false;
      if (p_.thread() == 0) {
        if (in)
          p_.store_release(counter(in->sender, layout_.credits, in->outbound), n.taken + 1);
        if (out && !ll_out)
          p_.store_release(counter(out->receiver, layout_.tails, out->inbound), n.sent + 1);
      }
      n.taken += in ? 1 : 0;
      n.sent += out ? 1 : 0;
    }
    return true;
  }

  // The step's value for one element: what came in (reduced with the local operand), else the
  // local operand (reduced into the destination for a local reduction).
  SYNCOLL_HOST_DEVICE T value(uint32_t bits, const T *got, const T *src, const T *dst,
                              int64_t i) const {
    if (got)
      return (bits & kReduces) ? element::combine(op(), got[i], src[i]) : got[i];
    return (bits & kReduces) ? element::combine(op(), dst[i], src[i]) : src[i];
  }

  struct Operands {
    const T *got = nullptr, *src = nullptr;
    T *dst = nullptr, *put = nullptr;
  };
  SYNCOLL_HOST_DEVICE Operands operands(int rank, const Step &step, int c, int64_t offset,
                                        const T *got, T *put, const Connection *out) const {
    Operands o;
    const uint32_t bits = step.bits;
    o.got = got;
    o.src = (bits & kReadsSrc) ? chunk(rank, step.src + c, offset) : nullptr;
    o.dst = (bits & (kWritesDst | kReadsDst)) ? chunk(rank, step.dst + c, offset) : nullptr;
    if ((bits & kLandsDirect) && !got)
      o.got = o.dst; // the data is already where the receive would have put it
    o.put = put;
    if (out && (bits & kPutsDirect))
      o.put = chunk(out->receiver, step.put + c, offset);
    return o;
  }

  SYNCOLL_HOST_DEVICE void move_simple(int rank, const Step &step, int lo, int hi, int64_t offset,
                                       int64_t elements, const char *got, char *slot,
                                       const Connection *out) {
    const uint32_t bits = step.bits;
    for (int c = lo; c < hi; ++c) {
      const T *g = got ? reinterpret_cast<const T *>(got) + int64_t(c - lo) * elements : nullptr;
      T *s = slot ? reinterpret_cast<T *>(slot) + int64_t(c - lo) * elements : nullptr;
      const Operands o = operands(rank, step, c, offset, g, s, out);
      const bool write_dst = (bits & kWritesDst) && !(o.got == o.dst && !(bits & kReduces));
      if (!write_dst && !o.put)
        continue; // a receive whose data landed directly and goes nowhere else
      int64_t done = 0;
      if constexpr (P::kPacks)
        done = move_packs(bits, o, write_dst, elements);
      for (int64_t i = done + p_.thread(); i < elements; i += p_.threads()) {
        const T v = value(bits, o.got, o.src, o.dst, i);
        if (write_dst)
          o.dst[i] = v;
        if (o.put)
          o.put[i] = v;
      }
    }
  }

  // 16-byte packs, several in flight per thread, where every operand is 16-byte aligned: how a
  // GPU reaches its memory bandwidth. Returns the elements done.
  struct alignas(16) Pack {
    T lane[16 / sizeof(T)];
  };
  SYNCOLL_HOST_DEVICE static bool aligned(const void *p) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0;
  }
  SYNCOLL_HOST_DEVICE int64_t move_packs(uint32_t bits, const Operands &o, bool write_dst,
                                         int64_t elements) {
    constexpr int kLanes = 16 / int(sizeof(T)), kUnroll = 4;
    if ((o.got && !aligned(o.got)) || (o.src && !aligned(o.src)) || (o.dst && !aligned(o.dst)) ||
        (o.put && !aligned(o.put)))
      return 0;
    const int64_t packs = elements / kLanes;
    const Pack *got = reinterpret_cast<const Pack *>(o.got);
    const Pack *src = reinterpret_cast<const Pack *>(o.src);
    Pack *dst = reinterpret_cast<Pack *>(o.dst);
    Pack *put = reinterpret_cast<Pack *>(o.put);
    const int64_t stride = p_.threads();
    for (int64_t base = p_.thread(); base < packs; base += stride * kUnroll) {
      Pack v[kUnroll];
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * stride;
        if (i >= packs)
          break;
        const Pack a = got ? got[i] : ((bits & kReduces) ? dst[i] : src[i]);
        if (bits & kReduces) {
          const Pack b = src[i];
          for (int j = 0; j < kLanes; ++j)
            v[u].lane[j] = element::combine(op(), a.lane[j], b.lane[j]);
        } else {
          v[u] = a;
        }
      }
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * stride;
        if (i >= packs)
          break;
        if (write_dst)
          dst[i] = v[u];
        if (put)
          put[i] = v[u];
      }
    }
    return packs * kLanes;
  }

  // LL: each chunk of the message is padded to whole 8-byte payload lines; a line carries 8 bytes
  // of data and the message's flag twice, in one 16-byte store.
  SYNCOLL_HOST_DEVICE bool move_ll(int b, int k, int it, int rank, const Step &step, int lo, int hi,
                                   int64_t offset, int64_t elements, char *got, char *slot,
                                   uint32_t in_flag, uint32_t out_flag, const Connection *out) {
    constexpr int kPerLine = 8 / int(sizeof(T));
    const int64_t lines = (elements + kPerLine - 1) / kPerLine;
    const uint32_t bits = step.bits;
    bool ok = true;
    bool noted = false;
    for (int c = lo; ok && c < hi; ++c) {
      uint64_t *in_lines =
          got ? reinterpret_cast<uint64_t *>(got) + 2 * int64_t(c - lo) * lines : nullptr;
      uint64_t *out_lines =
          slot ? reinterpret_cast<uint64_t *>(slot) + 2 * int64_t(c - lo) * lines : nullptr;
      const Operands o = operands(rank, step, c, offset, nullptr, nullptr, out);
      for (int64_t line = p_.thread(); line < lines; line += p_.threads()) {
        T received[kPerLine] = {};
        if (in_lines) {
          uint32_t words[2];
          if (!p_.load_line(in_lines + 2 * line, in_flag, words)) {
            if (!noted && p_.thread() == 0) {
              note_wait(b, k, it, kWaitsMessage);
              noted = true;
            }
            auto waiter = p_.waiter();
            while (!p_.load_line(in_lines + 2 * line, in_flag, words))
              if (!waiter.keep_going()) {
                ok = false;
                break;
              }
            if (!ok)
              break;
          }
          std::memcpy(received, words, sizeof received);
        }
        const int64_t first = line * kPerLine;
        T outgoing[kPerLine] = {};
        for (int j = 0; j < kPerLine && first + j < elements; ++j) {
          const T v =
              in_lines ? ((bits & kReduces) ? element::combine(op(), received[j], o.src[first + j])
                                            : received[j])
                       : value(bits, o.got, o.src, o.dst, first + j);
          if (bits & kWritesDst)
            o.dst[first + j] = v;
          if (o.put)
            o.put[first + j] = v;
          outgoing[j] = v;
        }
        if (out_lines) {
          uint32_t words[2];
          std::memcpy(words, outgoing, sizeof words);
          p_.store_line(out_lines + 2 * line, words, out_flag);
        }
      }
    }
    return ok;
  }
};

} // namespace syncoll::backend::device
