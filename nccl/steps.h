// NCCL's ring and tree collectives as streamed step-synchronous schedules (StepSource), for
// machines too large for their thread-block programs: 8192 ranks on 32 channels would be billions
// of instructions, where a schedule is generated one step at a time and its repeated steps are
// timed once (docs/cost-model.md, "NCCL at cluster scale").
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/program.h"
#include "simulator/algorithm_sim.h"
#include "simulator/cost_model.h"

#include <vector>

namespace syncoll::nccl {

/// Ring Allreduce (reduce-scatter then allgather, 2(N-1) steps), Allgather or ReduceScatter
/// (N-1 steps) on every channel's ring at once: at each step every rank sends one chunk of
/// every channel to the next rank of that channel's ring. Every step sends what the one before
/// sent.
class NcclRingSteps final : public simulator::StepSource {
public:
  /// Fails for another collective, no rings, rings of different lengths or under 2 ranks.
  [[nodiscard]] static Expected<NcclRingSteps> create(CollectiveKind kind,
                                                      std::vector<std::vector<RankId>> rings);
  int num_steps() const override;
  void sends(int step, std::vector<Send> &out) const override;
  bool repeats_previous(int step) const override { return step > 0; }
  /// Bytes of one send for a call of `size_bytes` as nccl-tests counts it.
  int64_t chunk_bytes(int64_t size_bytes) const;

private:
  NcclRingSteps(CollectiveKind kind, std::vector<std::vector<RankId>> rings)
      : kind_(kind), rings_(std::move(rings)) {}
  CollectiveKind kind_;
  std::vector<std::vector<RankId>> rings_;
};

/// Alltoall as NCCL's grouped point-to-point moves it: one step in which every rank sends its part
/// for every other rank directly (rank r's k-th send goes to r + k), all at once.
class AlltoallSteps final : public simulator::StepSource {
public:
  explicit AlltoallSteps(int ranks) : ranks_(ranks) {}
  int num_steps() const override { return 1; }
  void sends(int step, std::vector<Send> &out) const override;
  /// Bytes of one part for a call of `size_bytes` (a rank's input, as nccl-tests counts it).
  int64_t chunk_bytes(int64_t size_bytes) const;

private:
  int ranks_;
};

/// Tree Allreduce on every channel's tree at once (each tree as a parent per rank, -1 for the
/// root), its buffer share cut into `pipeline_chunks` chunks: chunk j leaves a rank of height h
/// (the longest way down to a leaf) for its parent at step j + h, once the children's partials
/// are in, and leaves a rank of depth d for its children at step j + H + d, H the root's height;
/// so reduction and broadcast of different chunks overlap. The steps in which every rank sends
/// both ways repeat one another.
class NcclTreeSteps final : public simulator::StepSource {
public:
  /// Fails for no trees, trees of different sizes, a parent vector that is not one tree, or
  /// fewer than 1 pipeline chunk.
  [[nodiscard]] static Expected<NcclTreeSteps> create(std::vector<std::vector<int>> trees,
                                                      int pipeline_chunks);
  int num_steps() const override;
  void sends(int step, std::vector<Send> &out) const override;
  bool repeats_previous(int step) const override;
  int64_t chunk_bytes(int64_t size_bytes) const;

private:
  struct Tree {
    std::vector<int> parent;
    std::vector<int> height_of; ///< per rank: the longest way down to a leaf
    std::vector<int> depth_of;  ///< per rank: the way up to the root
    std::vector<std::vector<int>> children;
    int height = 0; ///< the root's
  };
  NcclTreeSteps(std::vector<Tree> trees, int pipeline_chunks)
      : trees_(std::move(trees)), chunks_(pipeline_chunks) {}
  std::vector<Tree> trees_;
  int chunks_;
};

/// NCCL's ring for a call of `size_bytes` (nccl-tests' count), timed as the streamed
/// step-synchronous schedule where that schedule is what the ring's thread-block program
/// (nccl_ring_program, the default path) does on `topology` under `model` and `protocol`: every
/// chunk moves as one message (it fits the protocol's pipeline piece), no link or relation carries
/// two sends of a step (channels sharing one fall out of step in the program and hide each other's
/// latency), and the model charges nothing the schedule leaves out (per-message latency, thread
/// block and memory bandwidth caps, launch, step overhead, start skew). Anywhere else it fails,
/// saying which of these does not hold, so the two paths never give two answers.
[[nodiscard]] Expected<simulator::SimulationResult>
simulate_streamed_ring(const NcclRingSteps &ring, const Topology &topology, int64_t size_bytes,
                       const simulator::CostModel &model, Protocol protocol);

} // namespace syncoll::nccl
