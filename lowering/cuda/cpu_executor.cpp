#include "lowering/cuda/cpu_executor.h"

#include "model/collective_traits.h"
#include "model/invariant.h"
#include "model/runtime_constants.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fmt/format.h>
#include <thread>

namespace syncoll::backend {
namespace {

struct DataTypeRow {
  DataType type;
  std::string_view name;
  int bytes;
};
constexpr DataTypeRow kDataTypes[] = {{DataType::I32, "i32", 4},
                                      {DataType::F32, "f32", 4},
                                      {DataType::F16, "f16", 2},
                                      {DataType::BF16, "bf16", 2}};

struct ReduceOpRow {
  ReduceOp op;
  std::string_view name;
};
constexpr ReduceOpRow kReduceOps[] = {{ReduceOp::Sum, "sum"},
                                      {ReduceOp::Prod, "prod"},
                                      {ReduceOp::Max, "max"},
                                      {ReduceOp::Min, "min"}};

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 16-bit floats held as their bits; arithmetic is done in float and rounded to nearest even on
// the way back, as a GPU's half and bfloat16 reductions round.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

float to_float(Half h) {
  const uint32_t sign = uint32_t(h.bits & 0x8000) << 16, exponent = (h.bits >> 10) & 0x1f;
  uint32_t mantissa = h.bits & 0x3ff, x;
  if (exponent == 0 && mantissa == 0) {
    x = sign;
  } else if (exponent == 0) { // subnormal: normalize
    uint32_t e = 127 - 15 + 1;
    while (!(mantissa & 0x400))
      mantissa <<= 1, --e;
    x = sign | (e << 23) | ((mantissa & 0x3ff) << 13);
  } else if (exponent == 31) {
    x = sign | 0x7f800000 | (mantissa << 13);
  } else {
    x = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
float to_float(BFloat16 b) {
  const uint32_t x = uint32_t(b.bits) << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
// Rounds `value` (the bits below `shift` are dropped) to nearest, ties to even.
uint32_t round_shift(uint32_t value, int shift) {
  const uint32_t kept = value >> shift, rest = value & ((1u << shift) - 1),
                 half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}
Half to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const int biased = int((x >> 23) & 0xff);
  const uint32_t mantissa = x & 0x7fffff;
  if (biased == 0xff)
    return {uint16_t(sign | 0x7c00 | (mantissa ? 0x200 : 0))};
  const int exponent = biased - 127 + 15;
  if (exponent >= 31)
    return {uint16_t(sign | 0x7c00)};
  if (exponent <= 0) {
    if (exponent < -10)
      return {sign};
    return {uint16_t(sign | round_shift(mantissa | 0x800000, 14 - exponent))};
  }
  // A carry out of the mantissa lands in the exponent, which is the right answer.
  return {uint16_t(sign | round_shift((uint32_t(exponent) << 23) | mantissa, 13))};
}
BFloat16 to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffff) > 0x7f800000)
    return {uint16_t((x >> 16) | 0x40)}; // a NaN stays one
  return {uint16_t(round_shift(x, 16))};
}

template <class T> float widen(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else
    return to_float(v);
}
template <class T> T narrow(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else if constexpr (std::is_same_v<T, Half>)
    return to_half(v);
  else
    return to_bfloat16(v);
}
// Significand bits: integers up to 2^bits are exact.
template <class T> int exact_bits() {
  if constexpr (std::is_same_v<T, Half>)
    return 11;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 8;
  else
    return 24;
}

// Inputs whose every reduction is exact in the element type, so that any order of combining
// gives the reference's bits: integers small enough that a sum over every rank stays exact, for
// sums, max and min; -1, 1 and 2 for products (a product's magnitude only grows, and integer
// products wrap the same way in every order).
template <class T> T input_value(ReduceOp op, uint64_t seed, int rank, int ranks, size_t index) {
  const uint64_t h = mix(seed ^ (uint64_t(rank) << 40) ^ index);
  const int v = op == ReduceOp::Prod
                    ? (h % 8 == 0 ? 2
                       : (h & 16) ? 1
                                  : -1)
                    : [&] {
                        const int limit =
                            std::clamp((1 << std::min(exact_bits<T>(), 20)) / (2 * ranks), 1, 100);
                        return int(h % uint64_t(2 * limit + 1)) - limit;
                      }();
  if constexpr (std::is_integral_v<T>)
    return T(v);
  else
    return narrow<T>(float(v));
}

template <class T> T combine(ReduceOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
    case ReduceOp::Sum:
      return T(uint32_t(a) + uint32_t(b));
    case ReduceOp::Prod:
      return T(uint32_t(a) * uint32_t(b));
    case ReduceOp::Max:
      return std::max(a, b);
    case ReduceOp::Min:
      return std::min(a, b);
    }
  } else {
    const float x = widen(a), y = widen(b);
    switch (op) {
    case ReduceOp::Sum:
      return narrow<T>(x + y);
    case ReduceOp::Prod:
      return narrow<T>(x * y);
    case ReduceOp::Max:
      return narrow<T>(std::max(x, y));
    case ReduceOp::Min:
      return narrow<T>(std::min(x, y));
    }
  }
  SYNCOLL_UNREACHABLE("a reduction operator without a row");
}

template <class T> double printable(T v) {
  if constexpr (std::is_integral_v<T>)
    return double(v);
  else
    return double(widen(v));
}

// One connection's FIFO: `capacity` message slots, a producer and a consumer counter. The sender
// fills slot tail % capacity and publishes it by storing tail + 1 with release; the receiver
// acquires tail, reads, and frees the slot by storing head + 1 with release.
template <class T> struct Fifo {
  std::vector<std::vector<T>> slots;
  alignas(64) std::atomic<uint64_t> tail{0};
  alignas(64) std::atomic<uint64_t> head{0};
};

struct alignas(64) Flag {
  std::atomic<int64_t> value{-1};
};

// Where a worker stands, for the watchdog's report; written by the worker only, read after join.
struct WorkerState {
  int step = 0, iteration = 0;
  std::string waiting_for;
  bool finished = false;
};

template <class T> class CpuExecutor {
public:
  CpuExecutor(const ExecutableProgram &e, const RunOptions &o, int64_t chunk_elements)
      : e_(e), o_(o), spec_(e.collective()), chunk_(size_t(chunk_elements)),
        in_place_(e.program().in_place() && !e.program().out_of_place()),
        protocol_(e.program().protocol()) {
    const int64_t tile_bytes = protocol_traits(protocol_).executor_tile_bytes;
    tile_ = size_t(std::max<int64_t>(1, tile_bytes / int64_t(sizeof(T))));
    iterations_ = int((chunk_ + tile_ - 1) / tile_);
    per_transfer_ = max_chunks_per_transfer(protocol_, int64_t(chunk_ * sizeof(T)));
    const int ranks = e.program().num_ranks();
    memory_.resize(size_t(ranks));
    for (const RankProgram &rp : e.program().ranks()) {
      auto &m = memory_[rp.rank.index()];
      for (BufferKind b : {BufferKind::Input, BufferKind::Output, BufferKind::Scratch}) {
        const int slots = b == BufferKind::Scratch
                              ? rp.chunks(b)
                              : slots_addressable(spec_, rp.chunks(b), b, in_place_);
        m[size_t(b)].assign(size_t(std::max(0, slots)) * chunk_, T{});
      }
    }
    // Inputs by input slot, written where each slot lives (in place: in the home buffer).
    initial_input_.resize(size_t(ranks));
    for (const RankProgram &rp : e.program().ranks()) {
      const int slots =
          slots_addressable(spec_, rp.chunks(BufferKind::Input), BufferKind::Input, in_place_);
      std::vector<T> &initial = initial_input_[rp.rank.index()];
      initial.resize(size_t(std::max(0, slots)) * chunk_);
      for (size_t i = 0; i < initial.size(); ++i)
        initial[i] = input_value<T>(o.op, o.seed, rp.rank.value(), ranks, i);
      for (int slot = 0; slot < slots; ++slot)
        std::copy_n(initial.data() + size_t(slot) * chunk_, chunk_,
                    chunk_at(rp.rank, BufferKind::Input, slot));
    }
    fifos_ = std::vector<Fifo<T>>(e.connections().size());
    for (Fifo<T> &f : fifos_)
      f.slots.assign(size_t(std::max(1, protocol_traits(protocol_).fifo_messages)),
                     std::vector<T>(size_t(per_transfer_) * std::min(tile_, chunk_)));
    flags_ = std::vector<Flag>(e.blocks().size());
    states_.resize(e.blocks().size());
  }

  CpuRun run() {
    CpuRun r;
    r.chunk_bytes = int64_t(chunk_ * sizeof(T));
    r.iterations = iterations_;
    const auto start = std::chrono::steady_clock::now();
    {
      std::vector<std::jthread> workers;
      for (size_t b = 0; b < e_.blocks().size(); ++b)
        workers.emplace_back([this, b] { work(b); });
      watch();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.completed = !aborted_.load();
    for (size_t b = 0; b < states_.size(); ++b)
      if (!states_[b].finished)
        r.blocked.push_back({e_.blocks()[b].rank, e_.blocks()[b].tb, states_[b].step,
                             states_[b].iteration, states_[b].waiting_for});
    if (r.completed)
      check(r);
    return r;
  }

private:
  const ExecutableProgram &e_;
  const RunOptions &o_;
  const CollectiveSpec &spec_;
  size_t chunk_;
  bool in_place_;
  Protocol protocol_;
  size_t tile_ = 1;
  int iterations_ = 1;
  int per_transfer_ = 1;
  std::vector<std::array<std::vector<T>, 3>> memory_; ///< per rank: input, output, scratch
  std::vector<std::vector<T>> initial_input_;
  std::vector<Fifo<T>> fifos_;
  std::vector<Flag> flags_;
  std::vector<WorkerState> states_;
  std::atomic<uint64_t> progress_{0};
  std::atomic<size_t> finished_{0};
  std::atomic<bool> aborted_{false};

  // The first element of chunk `slot` of `buffer` on `rank`, through the in-place alias.
  T *chunk_at(RankId rank, BufferKind buffer, int slot) {
    if (in_place_ && buffer != BufferKind::Scratch) {
      const AliasedSlot home = in_place_slot(spec_, rank, buffer, slot);
      buffer = home.buffer;
      slot = home.index;
    }
    std::vector<T> &m = memory_[rank.index()][size_t(buffer)];
    SYNCOLL_INVARIANT(slot >= 0 && size_t(slot + 1) * chunk_ <= m.size(),
                      "a verified program addressed past its buffer");
    return m.data() + size_t(slot) * chunk_;
  }

  // Spins until `ready` holds, then yields the core, then sleeps between looks (there are more
  // thread blocks than cores); false when the watchdog stopped the run.
  template <class Ready> bool wait(Ready &&ready) {
    for (int spins = 0; !ready(); ++spins) {
      if (aborted_.load(std::memory_order_relaxed))
        return false;
      if (spins > 256)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      else if (spins > 32)
        std::this_thread::yield();
    }
    return true;
  }

  void work(size_t b) {
    const BlockTable &block = e_.blocks()[b];
    WorkerState &state = states_[b];
    const int64_t stride = e_.longest() + 1;
    for (int it = 0; it < iterations_; ++it) {
      const size_t offset = size_t(it) * tile_;
      const size_t n = std::min(tile_, chunk_ - offset);
      for (size_t k = 0; k < block.steps.size(); ++k) {
        const StepRecord &s = block.steps[k];
        state.step = int(k);
        state.iteration = it;
        if (s.dependency_block >= 0) {
          const int64_t goal = int64_t(it) * stride + s.dependency_step;
          state.waiting_for =
              fmt::format("tb {}'s flag for step {}",
                          e_.blocks()[size_t(s.dependency_block)].tb.value(), s.dependency_step);
          std::atomic<int64_t> &flag = flags_[size_t(s.dependency_block)].value;
          if (!wait([&] { return flag.load(std::memory_order_acquire) >= goal; }))
            return;
        }
        if (!execute(block, s, offset, n, state))
          return;
        if (s.publishes)
          flags_[b].value.store(int64_t(it) * stride + int64_t(k), std::memory_order_release);
        progress_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    state.finished = true;
    state.waiting_for.clear();
    finished_.fetch_add(1, std::memory_order_release);
  }

  // One step over elements [offset, offset + n) of each of its chunks.
  bool execute(const BlockTable &block, const StepRecord &s, size_t offset, size_t n,
               WorkerState &state) {
    const OpTraits &traits = op_traits(s.op);
    if (s.op == OpType::Nop)
      return true;
    const bool moves = traits.sends || traits.receives;
    const int per = moves ? per_transfer_ : std::max(1, s.count);
    const int messages = std::max(1, (s.count + per - 1) / per);
    for (int m = 0; m < messages; ++m) {
      const int lo = m * per, hi = std::min(s.count, lo + per);
      const T *received = nullptr;
      Fifo<T> *in = traits.receives ? &fifos_[size_t(block.recv_connection)] : nullptr;
      Fifo<T> *out = traits.sends ? &fifos_[size_t(block.send_connection)] : nullptr;
      uint64_t popped = 0, pushed = 0;
      if (in) {
        const Connection &c = e_.connections()[size_t(block.recv_connection)];
        state.waiting_for = fmt::format("a message on connection {}->{} channel {}",
                                        c.sender.value(), c.receiver.value(), c.channel.value());
        popped = in->head.load(std::memory_order_relaxed);
        if (!wait([&] { return in->tail.load(std::memory_order_acquire) > popped; }))
          return false;
        received = in->slots[popped % in->slots.size()].data();
      }
      if (out) {
        const Connection &c = e_.connections()[size_t(block.send_connection)];
        state.waiting_for = fmt::format("room on connection {}->{} channel {}", c.sender.value(),
                                        c.receiver.value(), c.channel.value());
        pushed = out->tail.load(std::memory_order_relaxed);
        const uint64_t capacity = out->slots.size();
        if (!wait([&] { return pushed - out->head.load(std::memory_order_acquire) < capacity; }))
          return false;
      }
      T *sending = out ? out->slots[pushed % out->slots.size()].data() : nullptr;
      for (int c = lo; c < hi; ++c) {
        const T *src = traits.reads_src
                           ? chunk_at(block.rank, s.src_buffer, s.src_offset + c) + offset
                           : nullptr;
        T *dst = traits.writes_dst || traits.reads_dst
                     ? chunk_at(block.rank, s.dst_buffer, s.dst_offset + c) + offset
                     : nullptr;
        const T *got = received ? received + size_t(c - lo) * n : nullptr;
        T *put = sending ? sending + size_t(c - lo) * n : nullptr;
        for (size_t i = 0; i < n; ++i) {
          // The step's value: what came in (reduced with the local operand), else the local
          // operand (reduced into the destination for a local reduction).
          T v;
          if (got)
            v = traits.reduces ? combine(o_.op, got[i], src[i]) : got[i];
          else
            v = traits.reduces ? combine(o_.op, dst[i], src[i]) : src[i];
          if (traits.writes_dst)
            dst[i] = v;
          if (put)
            put[i] = v;
        }
      }
      if (in)
        in->head.store(popped + 1, std::memory_order_release);
      if (out)
        out->tail.store(pushed + 1, std::memory_order_release);
    }
    state.waiting_for.clear();
    return true;
  }

  void watch() {
    const size_t blocks = e_.blocks().size();
    uint64_t seen = progress_.load();
    auto last_change = std::chrono::steady_clock::now();
    while (finished_.load(std::memory_order_acquire) < blocks) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const uint64_t now_progress = progress_.load();
      const auto now = std::chrono::steady_clock::now();
      if (now_progress != seen) {
        seen = now_progress;
        last_change = now;
      } else if (now - last_change > o_.watchdog) {
        aborted_.store(true);
        return;
      }
    }
  }

  // Every output element the collective defines against the host reference.
  void check(CpuRun &r) {
    std::vector<T> expected(chunk_);
    for (int c = 0; c < spec_.num_chunks(); ++c) {
      const ChunkSpec &chunk = spec_.chunk(ChunkId(c));
      bool first = true;
      for (const Contribution &part : spec_.expected_value(ChunkId(c))) {
        const auto pre = std::find_if(chunk.pre.begin(), chunk.pre.end(),
                                      [&](const ChunkPlace &p) { return p.rank == part.rank; });
        SYNCOLL_INVARIANT(pre != chunk.pre.end(), "a contribution from a rank without the chunk");
        const T *in = initial_input_[part.rank.index()].data() + size_t(pre->slot) * chunk_;
        for (size_t i = 0; i < chunk_; ++i)
          expected[i] = first ? in[i] : combine(o_.op, expected[i], in[i]);
        first = false;
      }
      for (const ChunkPlace &post : chunk.post) {
        const T *got = chunk_at(post.rank, BufferKind::Output, post.slot);
        for (size_t i = 0; i < chunk_; ++i) {
          ++r.elements_checked;
          if (std::memcmp(&got[i], &expected[i], sizeof(T)) == 0)
            continue;
          if (r.mismatches++ < 8)
            r.first_mismatches.push_back(fmt::format(
                "rank {} output chunk {} element {}: got {}, expected {}", post.rank.value(),
                post.slot, i, printable(got[i]), printable(expected[i])));
        }
      }
    }
  }
};

template <class T>
CpuRun run_typed(const ExecutableProgram &e, const RunOptions &o, int64_t chunk_elements) {
  return CpuExecutor<T>(e, o, chunk_elements).run();
}

} // namespace

std::optional<DataType> parse_data_type(std::string_view name) {
  for (const DataTypeRow &row : kDataTypes)
    if (row.name == name)
      return row.type;
  return std::nullopt;
}
std::string_view data_type_name(DataType type) {
  return kDataTypes[size_t(type)].name;
}
int data_type_bytes(DataType type) {
  return kDataTypes[size_t(type)].bytes;
}
std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (const ReduceOpRow &row : kReduceOps)
    if (row.name == name)
      return row.op;
  return std::nullopt;
}
std::string_view reduce_op_name(ReduceOp op) {
  return kReduceOps[size_t(op)].name;
}

Expected<CpuRun> run_on_cpu(const ExecutableProgram &program, const RunOptions &options) {
  const int element = data_type_bytes(options.type);
  const int chunks = nccl_tests_chunks(program.collective());
  if (options.size_bytes <= 0 || options.size_bytes % (int64_t(chunks) * element) != 0)
    return fail({}, fmt::format("size {} does not cut into {} chunks of whole {} elements",
                                options.size_bytes, chunks, data_type_name(options.type)));
  const int64_t chunk_elements = options.size_bytes / chunks / element;
  // One host thread per thread block: beyond this many the host is the limit, not the program.
  constexpr size_t kMaxThreadBlocks = 4096;
  if (program.blocks().size() > kMaxThreadBlocks)
    return fail({}, fmt::format("the CPU executor runs one host thread per thread block; {} thread "
                                "blocks are more than its {}",
                                program.blocks().size(), kMaxThreadBlocks));
  switch (options.type) {
  case DataType::I32:
    return run_typed<int32_t>(program, options, chunk_elements);
  case DataType::F32:
    return run_typed<float>(program, options, chunk_elements);
  case DataType::F16:
    return run_typed<Half>(program, options, chunk_elements);
  case DataType::BF16:
    return run_typed<BFloat16>(program, options, chunk_elements);
  }
  SYNCOLL_UNREACHABLE("a data type without a row");
}

} // namespace syncoll::backend
