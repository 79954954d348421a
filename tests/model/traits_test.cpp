// The one-fact tables of model/: collective traits, step types, protocols. Each test holds a
// convention users rely on (what nchunksperloop a lowered program declares, what nccl-tests calls
// the size, how in-place buffers alias), and that the derived forms agree with their table.
#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/runtime_constants.h"

#include <gtest/gtest.h>
#include <set>

namespace syncoll {
namespace {

std::optional<int> root_for(CollectiveKind kind) {
  return collective_traits(kind).rooted ? std::optional<int>(0) : std::nullopt;
}

Program program_declaring(std::string_view coll, int ranks, int chunks_per_loop) {
  ProgramDraft d;
  d.name = "declaration";
  d.collective = std::string(coll);
  d.num_ranks = ranks;
  d.chunks_per_loop = chunks_per_loop;
  for (int r = 0; r < ranks; ++r)
    d.ranks.push_back({RankId(r), 1, 1, 0, {}});
  auto p = Program::create(std::move(d));
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().items().front().message);
  return *p;
}

TEST(CollectiveTraitsTest, EveryKindHasItsRowAndItsName) {
  ASSERT_EQ(all_collective_traits().size(), size_t(CollectiveKind::Custom) + 1);
  for (const CollectiveTraits &t : all_collective_traits()) {
    EXPECT_EQ(&collective_traits(t.kind), &t);
    EXPECT_EQ(parse_collective_kind(t.name), t.kind) << t.name;
    EXPECT_EQ(collective_kind_name(t.kind), t.name);
  }
  EXPECT_EQ(parse_collective_kind("Reduce_Scatter"), CollectiveKind::ReduceScatter);
  EXPECT_EQ(collective_traits(CollectiveKind::AllToNext).executor_name, "custom");
}

TEST(CollectiveTraitsTest, StandardSpecificationsHaveTheTablesBufferSizes) {
  for (const CollectiveTraits &t : all_collective_traits()) {
    if (!t.standard)
      continue;
    for (int P : {2, 3, 8})
      for (int C : {1, 2, 3}) {
        auto spec = make_collective(t.kind, P, C, root_for(t.kind));
        ASSERT_TRUE(spec.has_value()) << t.name;
        EXPECT_EQ(spec->input_chunks(), scaled_chunks(t.input_chunks, P, C)) << t.name;
        EXPECT_EQ(spec->output_chunks(), scaled_chunks(t.output_chunks, P, C)) << t.name;
        EXPECT_EQ(spec->in_place(), t.in_place) << t.name;
      }
  }
}

// The executor cuts count x sizeMultiplier elements into nchunksperloop chunks; count is the
// per-rank send count of allgather and gather, the per-rank receive count of reducescatter and
// scatter, the per-peer count of alltoall and the whole buffer otherwise.
TEST(CollectiveTraitsTest, ChunksPerLoopFollowTheExecutorsCount) {
  const int P = 4, C = 2;
  const std::pair<CollectiveKind, int> expected[] = {
      {CollectiveKind::Allgather, P * C}, {CollectiveKind::ReduceScatter, P * C},
      {CollectiveKind::Alltoall, P * C},  {CollectiveKind::Allreduce, C},
      {CollectiveKind::Broadcast, C},     {CollectiveKind::Reduce, C},
      {CollectiveKind::Gather, C},        {CollectiveKind::Scatter, C},
  };
  for (const auto &[kind, chunks] : expected) {
    auto spec = make_collective(kind, P, C, root_for(kind));
    ASSERT_TRUE(spec.has_value());
    EXPECT_EQ(chunks_per_loop(*spec), chunks) << collective_kind_name(kind);
  }
}

// Reading a program's collective back from its declaration inverts what lowering declares.
TEST(CollectiveTraitsTest, CollectiveForProgramInvertsTheDeclaration) {
  for (const CollectiveTraits &t : all_collective_traits()) {
    if (!t.standard || t.executor_name != t.name)
      continue;
    for (int P : {2, 5})
      for (int C : {1, 3}) {
        auto spec = make_collective(t.kind, P, C, root_for(t.kind));
        ASSERT_TRUE(spec.has_value());
        auto read = collective_for_program(
            program_declaring(t.executor_name, P, chunks_per_loop(*spec)), std::nullopt);
        ASSERT_TRUE(read.has_value()) << t.name;
        EXPECT_EQ(*read, *spec) << t.name << " P=" << P << " C=" << C;
      }
  }
}

TEST(CollectiveTraitsTest, CollectiveForProgramRejectsWhatItCannotRead) {
  auto custom = collective_for_program(program_declaring("custom", 4, 4), std::nullopt);
  ASSERT_FALSE(custom.has_value());
  EXPECT_NE(custom.error().items().front().message.find("--collective"), std::string::npos);
  auto uneven = collective_for_program(program_declaring("allgather", 4, 6), std::nullopt);
  ASSERT_FALSE(uneven.has_value());
  EXPECT_NE(uneven.error().items().front().message.find("not a multiple of 4"), std::string::npos);
}

TEST(CollectiveTraitsTest, NcclTestsSizeIsTheLargerBuffer) {
  const int64_t MiB = int64_t(1) << 20;
  auto ag = make_collective(CollectiveKind::Allgather, 8, 1);
  auto ar = make_collective(CollectiveKind::Allreduce, 8, 1);
  auto gather = make_collective(CollectiveKind::Gather, 8, 1, 0);
  auto scatter = make_collective(CollectiveKind::Scatter, 8, 1, 0);
  auto rs = make_collective(CollectiveKind::ReduceScatter, 8, 1);
  EXPECT_EQ(nccl_tests_size(*ag, MiB), 8 * MiB);
  EXPECT_EQ(nccl_tests_size(*gather, MiB), 8 * MiB);
  EXPECT_EQ(nccl_tests_size(*ar, MiB), MiB);
  EXPECT_EQ(nccl_tests_size(*rs, 8 * MiB), 8 * MiB);
  EXPECT_EQ(nccl_tests_size(*scatter, 8 * MiB), 8 * MiB);
  for (const auto *spec : {&*ag, &*ar, &*gather, &*scatter, &*rs})
    EXPECT_EQ(nccl_tests_size(*spec, input_bytes_for_nccl_tests_size(*spec, 64 * MiB)), 64 * MiB);
  EXPECT_EQ(input_bytes_for_nccl_tests_size(*ag, 4), 1); // never below one byte
}

TEST(CollectiveTraitsTest, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::Allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::Allgather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::ReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::Alltoall, 2), 1.0 / 2);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::Broadcast, 8), 1.0);
}

// In place, every slot of either buffer lands in the home buffer, inside the collective's size
// of it, and no two slots of the aliased buffer land on the same home slot: the table's in-place
// convention fits its buffer sizes.
TEST(CollectiveTraitsTest, InPlaceSlotsLandInsideTheHomeBuffer) {
  for (const CollectiveTraits &t : all_collective_traits()) {
    if (!t.standard || t.in_place == InPlaceKind::None)
      continue;
    auto spec = make_collective(t.kind, 4, 2, root_for(t.kind));
    ASSERT_TRUE(spec.has_value());
    for (int r = 0; r < 4; ++r)
      for (BufferKind b : {BufferKind::Input, BufferKind::Output}) {
        const BufferKind home = in_place_home(*spec, b);
        EXPECT_EQ(in_place_home(*spec, home), home) << t.name;
        std::set<int> landed;
        for (int k = 0; k < buffer_chunks(*spec, b); ++k) {
          const AliasedSlot slot = in_place_slot(*spec, RankId(r), b, k);
          EXPECT_EQ(slot.buffer, home) << t.name;
          EXPECT_GE(slot.index, 0) << t.name;
          EXPECT_LT(slot.index, buffer_chunks(*spec, home)) << t.name << " rank " << r;
          EXPECT_TRUE(landed.insert(slot.index).second) << t.name << " rank " << r;
        }
      }
  }
  auto ag = make_collective(CollectiveKind::Allgather, 4, 2);
  EXPECT_EQ(in_place_slot(*ag, RankId(3), BufferKind::Input, 1),
            (AliasedSlot{BufferKind::Output, 7}));
  auto rs = make_collective(CollectiveKind::ReduceScatter, 4, 2);
  EXPECT_EQ(in_place_slot(*rs, RankId(1), BufferKind::Output, 1),
            (AliasedSlot{BufferKind::Input, 3}));
  EXPECT_EQ(in_place_slot(*rs, RankId(1), BufferKind::Scratch, 1),
            (AliasedSlot{BufferKind::Scratch, 1}));
}

TEST(OpTraitsTest, TheTableIsTheRuntimesStepTypes) {
  ASSERT_EQ(all_op_traits().size(), size_t(OpType::Nop) + 1);
  for (const OpTraits &op : all_op_traits()) {
    EXPECT_EQ(&op_traits(op.op), &op);
    EXPECT_EQ(parse_op_type(op.name), op.op);
    // Names spell what an op does: a leading r receives, a trailing s sends (but "s" itself).
    const std::string_view n = op.name;
    EXPECT_EQ(op.receives, n[0] == 'r' && n != "re") << n;
    EXPECT_EQ(op.sends, n == "s" || (n.size() > 2 && n.back() == 's')) << n;
    EXPECT_EQ(op.reduces, n.starts_with("rr") || n == "re") << n;
    EXPECT_FALSE(op.reads_dst && !op.writes_dst) << n;
  }
  // The runtime reads a receive-reduce's src as its local operand, and rrs writes nothing.
  EXPECT_TRUE(op_traits(OpType::RecvReduceCopy).reads_src);
  EXPECT_FALSE(op_traits(OpType::RecvReduceSend).writes_dst);
  EXPECT_TRUE(op_traits(OpType::Reduce).reads_dst);
  EXPECT_FALSE(op_traits(OpType::RecvReduceCopy).parser_checks_src);
  EXPECT_FALSE(op_traits(OpType::RecvReduceCopy).parser_checks_dst);
}

TEST(ProtocolTraitsTest, FifoAndBandwidthFactorsPerProtocol) {
  for (const ProtocolTraits &t : all_protocol_traits()) {
    EXPECT_EQ(parse_protocol(t.name), t.protocol);
    EXPECT_EQ(protocol_name(t.protocol), t.name);
    EXPECT_GT(t.payload_fraction, 0);
    EXPECT_LE(t.payload_fraction, 1);
  }
  EXPECT_EQ(protocol_traits(Protocol::Simple).fifo_messages, 2);
  EXPECT_EQ(protocol_traits(Protocol::LL).fifo_messages, 8);
  // Two different facts: LL128's wire format carries 120 of 128 bytes, NCCL's model uses 0.92.
  EXPECT_DOUBLE_EQ(protocol_traits(Protocol::LL128).payload_fraction, 120.0 / 128.0);
  EXPECT_DOUBLE_EQ(protocol_traits(Protocol::LL128).nccl_tuning_bandwidth_factor, 0.92);
}

TEST(FabricTraitsTest, EveryFabricHasItsRowNameAndSource) {
  for (const FabricTraits &f : all_fabrics()) {
    EXPECT_EQ(&fabric_traits(f.fabric), &f) << f.name;
    EXPECT_EQ(find_fabric(f.name), &f) << f.name;
    EXPECT_FALSE(f.source.empty()) << f.name;
    EXPECT_GT(f.nic_payload_share, 0) << f.name;
    EXPECT_LE(f.nic_payload_share, 1) << f.name;
    EXPECT_GT(f.message_latency_us + f.host_cost_us, 0) << f.name;
    EXPECT_GT(f.connection_gbps, 0) << f.name;
    EXPECT_GT(f.ll128_connection_share, 0) << f.name;
    EXPECT_LE(f.ll128_connection_share, 1) << f.name;
  }
  EXPECT_EQ(find_fabric("IB-NDR"), &fabric_traits(Fabric::InfinibandNdr));
  EXPECT_EQ(find_fabric("ib_qdr"), nullptr);
}

TEST(FabricTraitsTest, OnlyInfinibandFromHdrOnReducesInItsSwitches) {
  // NCCL's SHARP plugin needs streaming aggregation: Quantum (HDR) switches and newer. EDR's
  // SHARP v1, Ethernet (RoCE, TCPXO) and EFA reduce nothing a CollNet call can use.
  for (const FabricTraits &f : all_fabrics()) {
    const bool sharp = f.fabric == Fabric::InfinibandHdr || f.fabric == Fabric::InfinibandNdr ||
                       f.fabric == Fabric::InfinibandXdr;
    EXPECT_EQ(!f.in_network_reduction.empty(), sharp) << f.name;
  }
}

TEST(FabricTraitsTest, EverySystemNamesAFabricAndASource) {
  for (const SystemPreset &s : all_system_presets())
    EXPECT_FALSE(s.source.empty()) << s.name;
  // The machines users rent run on their own fabrics.
  EXPECT_EQ(find_system_preset("aws_p5")->fabric, Fabric::EfaV2);
  EXPECT_EQ(find_system_preset("gcp_a3_mega")->fabric, Fabric::GcpTcpxo);
  EXPECT_EQ(find_system_preset("dgx_superpod_h100")->fabric, Fabric::InfinibandNdr);
  EXPECT_EQ(find_system_preset("gb300_nvl72")->fabric, Fabric::InfinibandXdr);
}

TEST(FabricTraitsTest, MachinesAsMeasuredOnEfaPayEfaNotTheirHarness) {
  // nccl-tests adds the same few microseconds on every machine; what an EFA pair adds beyond an
  // InfiniBand pair at small sizes is EFA's own per-message cost, so the p4de row keeps
  // nccl-tests' floor and every EFA generation carries a cost above InfiniBand's.
  EXPECT_DOUBLE_EQ(find_system_preset("aws_p4de")->launch_us,
                   find_system_preset("aws_p5")->launch_us);
  const FabricTraits &ib = fabric_traits(Fabric::InfinibandNdr);
  for (Fabric efa : {Fabric::EfaV1, Fabric::EfaV2, Fabric::EfaV3, Fabric::EfaV4}) {
    const FabricTraits &f = fabric_traits(efa);
    EXPECT_GT(f.message_latency_us + f.host_cost_us, ib.message_latency_us + ib.host_cost_us)
        << f.name;
  }
}

TEST(GenerationTraitsTest, ABlackwellThreadBlockCopiesAsFastAsAHoppers) {
  // Same SM copy loop, a newer SM: a B200 thread block is no slower than an H100's.
  const GenerationTraits &hopper = generation_traits(GpuGeneration::Hopper);
  const GenerationTraits &blackwell = generation_traits(GpuGeneration::Blackwell);
  for (size_t p = 0; p < hopper.thread_block_gbps.size(); ++p)
    EXPECT_GE(blackwell.thread_block_gbps[p], hopper.thread_block_gbps[p]) << p;
}

} // namespace
} // namespace syncoll
