#include "nccl/tuner_table.h"

#include "model/collective_traits.h"
#include "model/invariant.h"

#include <cmath>
#include <fmt/format.h>

namespace syncoll::nccl {

bool nccl_tunes(CollectiveKind kind) {
  return collective_traits(kind).nccl_tuned;
}

std::string_view tuner_collective_name(CollectiveKind kind) {
  SYNCOLL_INVARIANT(nccl_tunes(kind), "a tuner table row for a collective NCCL does not tune");
  return collective_traits(kind).name;
}

std::string_view tuner_algorithm_name(NcclAlgorithm algorithm) {
  switch (algorithm) {
  case NcclAlgorithm::Tree:
    return "tree";
  case NcclAlgorithm::Ring:
    return "ring";
  case NcclAlgorithm::CollNetDirect:
    return "collnet_direct";
  case NcclAlgorithm::CollNetChain:
    return "collnet_chain";
  case NcclAlgorithm::Nvls:
    return "nvls";
  case NcclAlgorithm::NvlsTree:
    return "nvls_tree";
  case NcclAlgorithm::Pat:
    return "pat";
  case NcclAlgorithm::P2p:
    break; // never a tuner's answer: NCCL does not ask about point-to-point
  }
  SYNCOLL_UNREACHABLE("a point-to-point choice in a tuner table");
}

std::string_view tuner_protocol_name(Protocol protocol) {
  switch (protocol) {
  case Protocol::LL:
    return "ll";
  case Protocol::LL128:
    return "ll128";
  case Protocol::Simple:
    return "simple";
  }
  SYNCOLL_UNREACHABLE("a protocol without a tuner name");
}

namespace {

bool same_choice(const NcclEstimate &a, const NcclEstimate &b) {
  return a.algorithm == b.algorithm && a.protocol == b.protocol && a.channels == b.channels;
}

// The first byte of the band that `upper` stands for: geometrically halfway from `lower`, moved
// up to a multiple of the rank count where one lies between the two sizes.
int64_t band_edge(int64_t lower, int64_t upper, int ranks) {
  const auto middle = int64_t(std::ceil(std::sqrt(double(lower) * double(upper))));
  const int64_t edge = (middle + ranks - 1) / ranks * ranks;
  if (edge > lower && edge <= upper)
    return edge;
  return std::clamp(middle, lower + 1, upper);
}

Expected<TunerPoint> tune_one(CollectiveKind kind, int64_t bytes,
                              const simulator::SystemModel &system, const NcclMachine &machine,
                              const NcclRunOptions &options, std::size_t &done, std::size_t total,
                              const std::function<void(std::size_t, std::size_t)> &progress) {
  SYNCOLL_TRY(nccl, simulate_nccl(kind, bytes, system, machine, options));
  TunerPoint point{kind, bytes, nccl.choice, double(nccl.result.completion) / 1e6, {}, 0};
  SYNCOLL_TRY(candidates, nccl_candidates(kind, bytes, system, machine, options));
  bool found = false;
  for (const NcclEstimate &candidate : candidates) {
    // NCCL's own choice has run already; every other candidate runs forced.
    NcclEstimate ran = nccl.choice;
    double us = point.nccl_us;
    if (candidate.algorithm != ran.algorithm || candidate.protocol != ran.protocol) {
      NcclRunOptions forced = options;
      forced.algorithm = candidate.algorithm;
      forced.protocol = candidate.protocol;
      SYNCOLL_TRY(run, simulate_nccl(kind, bytes, system, machine, forced));
      ran = run.choice;
      us = double(run.result.completion) / 1e6;
    }
    // Ties go to NCCL's own choice, then to the first in NCCL's table order.
    if (!found || us < point.fastest_us ||
        (us == point.fastest_us && same_choice(ran, point.nccl))) {
      point.fastest = ran;
      point.fastest_us = us;
      found = true;
    }
  }
  if (progress)
    progress(++done, total);
  SYNCOLL_INVARIANT(found, "NCCL ran a choice that was not among its candidates");
  return point;
}

} // namespace

Expected<TunerTable> tune_nccl(const simulator::SystemModel &system, const NcclMachine &machine,
                               const TunerSweep &sweep,
                               const std::function<void(std::size_t, std::size_t)> &progress) {
  if (sweep.options.algorithm || sweep.options.protocol || sweep.options.channels ||
      sweep.options.min_channels)
    return fail({}, "a tuner table chooses the algorithm, protocol and channels itself; nothing "
                    "may be forced");
  if (sweep.sizes.empty() || sweep.sizes.front() < 1)
    return fail({}, "a tuner table needs sizes of at least one byte");
  for (CollectiveKind kind : sweep.kinds)
    if (!nccl_tunes(kind))
      return fail({}, fmt::format("NCCL asks its tuner about broadcast, reduce, allgather, "
                                  "reducescatter and allreduce only, not {}",
                                  collective_kind_name(kind)));
  TunerTable table;
  table.nodes = system.nodes;
  table.ranks = system.topology.num_ranks();
  const std::size_t total = sweep.kinds.size() * sweep.sizes.size();
  std::size_t done = 0;
  for (CollectiveKind kind : sweep.kinds) {
    const std::size_t first = table.points.size();
    for (int64_t bytes : sweep.sizes) {
      SYNCOLL_TRY(point,
                  tune_one(kind, bytes, system, machine, sweep.options, done, total, progress));
      table.points.push_back(point);
    }
    for (std::size_t i = first; i < table.points.size(); ++i) {
      const TunerPoint &p = table.points[i];
      if (i > first && same_choice(p.fastest, table.points[i - 1].fastest))
        continue;
      const int64_t start =
          i == first ? 0 : band_edge(table.points[i - 1].bytes, p.bytes, table.ranks);
      if (i > first)
        table.rows.back().max_bytes = start - 1;
      table.rows.push_back(
          {kind, start, std::nullopt, p.fastest.algorithm, p.fastest.protocol, p.fastest.channels});
    }
  }
  return table;
}

namespace {

std::string comment_lines(std::string_view source) {
  std::string out;
  std::size_t begin = 0;
  while (begin <= source.size()) {
    const std::size_t end = std::min(source.find('\n', begin), source.size());
    out += fmt::format("# {}\n", source.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

} // namespace

std::string write_nccl_tuner_csv(const TunerTable &table, std::string_view source) {
  std::string out = comment_lines(source);
  out += "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,"
         "numPipeOps,regBuff\n";
  for (const TunerRow &row : table.rows)
    out += fmt::format(
        "{},{},{},{},{},{},{},{},-1,-1\n", tuner_collective_name(row.kind), row.min_bytes,
        row.max_bytes ? fmt::format("{}", *row.max_bytes) : fmt::format("{}", UINT64_MAX),
        tuner_algorithm_name(row.algorithm), tuner_protocol_name(row.protocol), row.channels,
        table.nodes, table.ranks);
  return out;
}

std::string write_ncclx_tuner_csv(const TunerTable &table, std::string_view source) {
  std::string out = comment_lines(source);
  out += "# collective,bytesPerRank,algorithm,protocol,channels,nNodes,nLocalRanks\n";
  const int64_t ranks = table.ranks;
  for (const TunerRow &row : table.rows) {
    const std::string per_rank =
        row.max_bytes ? fmt::format("[{},{}]", row.min_bytes / ranks, *row.max_bytes / ranks)
                      : fmt::format("[{},)", row.min_bytes / ranks);
    out += fmt::format("{},{},{},{},{},{},{}\n", tuner_collective_name(row.kind), per_rank,
                       tuner_algorithm_name(row.algorithm), tuner_protocol_name(row.protocol),
                       row.channels, table.nodes, table.ranks / table.nodes);
  }
  return out;
}

} // namespace syncoll::nccl
