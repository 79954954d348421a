// Every option of `simulate`, `compose`, `lower`, `verify` and `dot` is honoured or refused: a
// table row per option runs the command twice, without and with the option (or with another value
// of it), and asserts that the output changes, that the named file is written, or that the option
// is refused with one line and exit 2. A second test reads each command's --help and fails on an
// option the table does not cover, so a new option cannot be accepted and ignored.
#include "tests/cli/run_cli.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

namespace syncoll::testing {
namespace {

enum class Expect {
  Changes, ///< neither run is bad input, and their exit codes or outputs differ
  Writes,  ///< the second run writes the file named by `{out}`
  Refused, ///< the second run is bad input: exit 2, one line, nothing on stdout
};

struct OptionRow {
  const char *command; ///< the subcommand whose option this is
  const char *option;  ///< as --help spells its first name
  const char *without;
  const char *with;
  Expect expect;
};

constexpr const char *kRing4 = "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB";

// clang-format off
const OptionRow kRows[] = {
    {"simulate", "--baseline", "--baseline nccl-ring -c allreduce -t ring -n 4", "--baseline nccl-tree -c allreduce -t ring -n 4", Expect::Changes},
    {"simulate", "-t", kRing4, "--baseline nccl-ring -c allreduce -t fully_connected -n 4 -s 1MiB", Expect::Changes},
    {"simulate", "-n", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 8 -s 1MiB", Expect::Changes},
    {"simulate", "--dims", "--baseline nccl-ring -c allreduce -t hypercube --dims 2", "--baseline nccl-ring -c allreduce -t hypercube --dims 3", Expect::Changes},
    {"simulate", "--shape", "--baseline nccl-ring -c allreduce -t torus2d --shape 2x2", "--baseline nccl-ring -c allreduce -t torus2d --shape 2x4", Expect::Changes},
    {"simulate", "--nodes", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 2", "--baseline nccl-ring -c allreduce -t multinode --nodes 4 --gpus 2", Expect::Changes},
    {"simulate", "--nodes", "--system dgx_h100 --baseline nccl -c allreduce", "--system dgx_h100 --nodes 2 --baseline nccl -c allreduce", Expect::Changes},
    {"simulate", "--gpus", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 2", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 4", Expect::Changes},
    {"simulate", "--gpus", "--system dgx_h100 --baseline nccl -c allreduce", "--system dgx_h100 --gpus 4 --baseline nccl -c allreduce", Expect::Changes},
    {"simulate", "--intra", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 4 --intra ring", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 4 --intra fully_connected", Expect::Changes},
    {"simulate", "--intra", "--system dgx_h100 --baseline nccl -c allreduce", "--system dgx_h100 --intra ring --baseline nccl -c allreduce", Expect::Refused},
    {"simulate", "--nics", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 4 -s 64MiB", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 4 --nics 2 -s 64MiB", Expect::Changes},
    {"simulate", "--nics", "--system dgx_h100 --nodes 2 --baseline nccl -c allreduce -s 64MiB", "--system dgx_h100 --nodes 2 --nics 2 --baseline nccl -c allreduce -s 64MiB", Expect::Changes},
    {"simulate", "--nic-bandwidth", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 2 -s 64MiB", "--baseline nccl-ring -c allreduce -t multinode --nodes 2 --gpus 2 --nic-bandwidth 5 -s 64MiB", Expect::Changes},
    {"simulate", "--nic-bandwidth", "--system dgx_h100 --nodes 2 --baseline nccl -c allreduce -s 64MiB", "--system dgx_h100 --nodes 2 --nic-bandwidth 5 --baseline nccl -c allreduce -s 64MiB", Expect::Changes},
    {"simulate", "--tiers", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --leaves-per-pod 2", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --leaves-per-pod 2 --tiers 3", Expect::Changes},
    {"simulate", "--nodes-per-leaf", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 8", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 2", Expect::Changes},
    {"simulate", "--leaves-per-pod", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --tiers 3 --leaves-per-pod 8", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --tiers 3 --leaves-per-pod 2", Expect::Changes},
    {"simulate", "--oversubscription", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 2 -s 64MiB", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 2 --oversubscription 4 -s 64MiB", Expect::Changes},
    {"simulate", "--unidirectional", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --unidirectional", Expect::Changes},
    {"simulate", "--rails", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 4 --gpus 4 --nics 4 --nodes-per-leaf 2 -s 64MiB --oversubscription 4", "--baseline nccl-ring -c allreduce -t fat_tree --nodes 4 --gpus 4 --nics 4 --nodes-per-leaf 2 -s 64MiB --oversubscription 4 --rails", Expect::Changes},
    {"simulate", "--system", "--system dgx_h100 --baseline nccl -c allreduce", "--system dgx_a100 --baseline nccl -c allreduce", Expect::Changes},
    {"simulate", "-c", kRing4, "--baseline nccl-ring -c allgather -t ring -n 4 -s 1MiB", Expect::Changes},
    {"simulate", "-C", "examples/algorithms/ring4_allreduce.json -t ring -n 4", "examples/algorithms/ring4_allreduce.json -t ring -n 4 -C 8", Expect::Changes},
    {"simulate", "-C", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB -C 2", Expect::Refused},
    {"simulate", "--root", "--baseline nccl-ring -c broadcast -t dgx1 --root 0", "--baseline nccl-ring -c broadcast -t dgx1 --root 5", Expect::Changes},
    {"simulate", "--root", "examples/ir/ring_allreduce_4.xml -t ring -n 4", "examples/ir/ring_allreduce_4.xml -t ring -n 4 --root 1", Expect::Refused},
    {"simulate", "--root", "--baseline nccl-ring -c broadcast -t ring -n 4", "--baseline nccl-ring -c broadcast -t ring -n 4 --root 9", Expect::Refused},
    {"simulate", "--root", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --root 1", Expect::Refused},
    {"simulate", "--root", "--system dgx_h100 --baseline nccl -c broadcast", "--system dgx_h100 --baseline nccl -c broadcast --root 1", Expect::Refused},
    {"simulate", "-s", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 2MiB", Expect::Changes},
    {"simulate", "--protocol", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --protocol LL", Expect::Changes},
    {"simulate", "--preset", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --preset nccl", Expect::Changes},
    {"simulate", "--preset", "--system dgx_h100 --baseline nccl -c allreduce", "--system dgx_h100 --baseline nccl -c allreduce --preset nccl", Expect::Refused},
    {"simulate", "--lowering", "examples/algorithms/dgx1_allgather_ring.json --system dgx1 -s 1GiB", "examples/algorithms/dgx1_allgather_ring.json --system dgx1 -s 1GiB --lowering copy-engine", Expect::Changes},
    {"simulate", "--lowering", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --lowering kernel", Expect::Refused},
    {"simulate", "--mode", "examples/algorithms/line4_broadcast_s4r4.json -t line -n 4 -s 1MiB", "examples/algorithms/line4_broadcast_s4r4.json -t line -n 4 -s 1MiB --mode dataflow", Expect::Changes},
    {"simulate", "--mode", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --mode dataflow", Expect::Refused},
    {"simulate", "--switching", "examples/algorithms/ring4_allreduce.json -t line -n 4 -s 1MiB", "examples/algorithms/ring4_allreduce.json -t line -n 4 -s 1MiB --switching store-and-forward", Expect::Changes},
    {"simulate", "--switching", "--system dgx_h100 --baseline nccl -c allreduce", "--system dgx_h100 --baseline nccl -c allreduce --switching cut-through", Expect::Refused},
    {"simulate", "--sharing", "--baseline nccl-tree -c allreduce -t hub_and_spoke -n 6 -s 64KiB", "--baseline nccl-tree -c allreduce -t hub_and_spoke -n 6 -s 64KiB --sharing fair", Expect::Changes},
    {"simulate", "--sharing-window", "--baseline nccl-tree -c allreduce -t hub_and_spoke -n 6 -s 64KiB --sharing fair", "--baseline nccl-tree -c allreduce -t hub_and_spoke -n 6 -s 64KiB --sharing fair --sharing-window 20", Expect::Changes},
    {"simulate", "--streamed", "--baseline nccl-ring -c allgather -t torus2d --shape 4x4 -s 4MiB --channels 1", "--baseline nccl-ring -c allgather -t torus2d --shape 4x4 -s 4MiB --channels 1 --streamed", Expect::Changes},
    {"simulate", "--streamed", "--system dgx_h100 --baseline nccl -c allreduce", "--system dgx_h100 --baseline nccl -c allreduce --streamed", Expect::Refused},
    {"simulate", "--channels", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --channels 1", Expect::Changes},
    {"simulate", "--channels", "examples/ir/ring_allreduce_4.xml -t ring -n 4", "examples/ir/ring_allreduce_4.xml -t ring -n 4 --channels 2", Expect::Refused},
    {"simulate", "--trace", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --trace {out}", Expect::Writes},
    {"simulate", "--csv", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --csv {out}", Expect::Writes},

    {"compose", "-c", "-c allgather --system dgx_h100 --nodes 2", "-c broadcast --system dgx_h100 --nodes 2", Expect::Changes},
    {"compose", "--file", "-c allreduce --system dgx_h100 --gpus 2", "--file examples/compositions/allreduce_2.json --system dgx_h100 --gpus 2", Expect::Changes},
    {"compose", "--system", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_a100 --nodes 2", Expect::Changes},
    {"compose", "--nodes", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 3", Expect::Changes},
    {"compose", "--nics", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB --nics 1", Expect::Changes},
    {"compose", "--nics", "-c allgather --system dgx_h100", "-c allgather --system dgx_h100 --nics 1", Expect::Refused},
    {"compose", "--nic-bandwidth", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB --nic-bandwidth 5", Expect::Changes},
    {"compose", "--gpus", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --gpus 4", Expect::Changes},
    {"compose", "-C", "-c allreduce --system dgx_h100 --gpus 4", "-c allreduce --system dgx_h100 --gpus 4 -C 2", Expect::Changes},
    {"compose", "--root", "-c broadcast --system dgx_h100 --nodes 2", "-c broadcast --system dgx_h100 --nodes 2 --root 9", Expect::Changes},
    {"compose", "--root", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --root 1", Expect::Refused},
    {"compose", "--factors", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --factors 2,2,4", Expect::Changes},
    {"compose", "--transports", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --transports net,p2p", Expect::Changes},
    {"compose", "--stripes", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --stripes 2", Expect::Changes},
    {"compose", "--ring-nodes", "-c allgather --system dgx_h100 --nodes 3", "-c allgather --system dgx_h100 --nodes 3 --ring-nodes 3", Expect::Changes},
    {"compose", "--pipeline", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --pipeline 2", Expect::Changes},
    {"compose", "--search", "-c broadcast --system dgx_h100 --gpus 4", "-c broadcast --system dgx_h100 --gpus 4 --search", Expect::Changes},
    {"compose", "-s", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 -s 2MiB", Expect::Changes},
    {"compose", "-o", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 -o {out}", Expect::Writes},
    {"compose", "--dot", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --dot {out}", Expect::Writes},

    {"lower", "--example", "--example ring_allreduce -n 4", "--example ring_allgather -n 4", Expect::Changes},
    {"lower", "--list", "--example ring_allreduce -n 4", "--list", Expect::Changes},
    {"lower", "--in-place", "--example ring_allgather -n 4", "--example ring_allgather -n 4 --in-place", Expect::Changes},
    {"lower", "-t", "examples/algorithms/ring4_allreduce.json -t fully_connected -n 4", "examples/algorithms/ring4_allreduce.json -t line -n 4", Expect::Refused},
    {"lower", "-n", "--example ring_allreduce -n 4", "--example ring_allreduce -n 8", Expect::Changes},
    {"lower", "--nodes", "--example hierarchical_allreduce -n 8 --nodes 2", "--example hierarchical_allreduce -n 8 --nodes 4", Expect::Changes},
    {"lower", "--dims", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --dims 2", Expect::Refused},
    {"lower", "--shape", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --shape 2x2", Expect::Refused},
    {"lower", "--gpus", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --gpus 4", Expect::Refused},
    {"lower", "--intra", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --intra ring", Expect::Refused},
    {"lower", "--nics", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --nics 2", Expect::Refused},
    {"lower", "--nic-bandwidth", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --nic-bandwidth 5", Expect::Refused},
    {"lower", "--tiers", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --tiers 3", Expect::Refused},
    {"lower", "--nodes-per-leaf", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --nodes-per-leaf 2", Expect::Refused},
    {"lower", "--leaves-per-pod", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --leaves-per-pod 2", Expect::Refused},
    {"lower", "--oversubscription", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --oversubscription 2", Expect::Refused},
    {"lower", "--unidirectional", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --unidirectional", Expect::Refused},
    {"lower", "--rails", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --rails", Expect::Refused},
    {"lower", "-c", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 -c allgather", Expect::Refused},
    {"lower", "-C", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 -C 2", Expect::Refused},
    {"lower", "--root", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --root 1", Expect::Refused},
    {"lower", "--protocol", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --protocol LL", Expect::Changes},
    {"lower", "--instances", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --instances 2", Expect::Changes},
    {"lower", "-o", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 -o {out}", Expect::Writes},
    {"verify", "-c", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml -c allgather", Expect::Changes},
    {"verify", "-C", "examples/ir/ring_allreduce_4.xml -c allreduce", "examples/ir/ring_allreduce_4.xml -c allreduce -C 2", Expect::Changes},
    {"verify", "--root", "examples/ir/ring_allreduce_4.xml -c broadcast --root 0", "examples/ir/ring_allreduce_4.xml -c broadcast --root 9", Expect::Refused},
    {"verify", "--root", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml --root 1", Expect::Refused},
    {"verify", "--protocol", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml --protocol LL", Expect::Changes},
    {"verify", "--sm-budget", "examples/ir/dgx1_allgather_637.xml", "examples/ir/dgx1_allgather_637.xml --sm-budget 1", Expect::Changes},
    {"verify", "--mode", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml --mode relaxed", Expect::Changes},
    {"verify", "-s", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml -s 1KiB..64MiB", Expect::Changes},
    {"verify", "--iterations", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml --iterations 3", Expect::Changes},
    {"verify", "--json", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml --json", Expect::Changes},

    {"dot", "--format", "topo dgx1 -o -", "topo dgx1 -o - --format svg", Expect::Changes},
    {"dot", "--level", "dag example:ring_allreduce -n 4 -o -", "dag example:ring_allreduce -n 4 -o - --level instruction", Expect::Changes},
    {"dot", "--level", "topo dgx1 -o -", "topo dgx1 -o - --level chunk", Expect::Refused},
    {"dot", "-s", "timeline examples/ir/ring_allreduce_4.xml --format svg -o - -t ring -n 4", "timeline examples/ir/ring_allreduce_4.xml --format svg -o - -t ring -n 4 -s 2MiB", Expect::Changes},
    {"dot", "-s", "topo dgx1 -o -", "topo dgx1 -o - -s 1MiB", Expect::Refused},
    {"dot", "-t", "timeline examples/ir/ring_allreduce_4.xml --format svg -o - -t ring -n 4", "timeline examples/ir/ring_allreduce_4.xml --format svg -o - -t fully_connected -n 4", Expect::Changes},
    {"dot", "-t", "program examples/ir/ring_allreduce_4.xml -o -", "program examples/ir/ring_allreduce_4.xml -o - -t ring", Expect::Refused},
    {"dot", "-n", "topo ring -n 4 -o -", "topo ring -n 6 -o -", Expect::Changes},
    {"dot", "--dims", "topo hypercube --dims 2 -o -", "topo hypercube --dims 3 -o -", Expect::Changes},
    {"dot", "--shape", "topo torus2d --shape 2x2 -o -", "topo torus2d --shape 2x3 -o -", Expect::Changes},
    {"dot", "--nodes", "topo multinode --nodes 2 --gpus 2 -o -", "topo multinode --nodes 3 --gpus 2 -o -", Expect::Changes},
    {"dot", "--gpus", "topo multinode --nodes 2 --gpus 2 -o -", "topo multinode --nodes 2 --gpus 3 -o -", Expect::Changes},
    {"dot", "--intra", "topo multinode --nodes 2 --gpus 4 --intra ring -o -", "topo multinode --nodes 2 --gpus 4 --intra fully_connected -o -", Expect::Changes},
    {"dot", "--nics", "topo multinode --nodes 2 --gpus 4 -o -", "topo multinode --nodes 2 --gpus 4 --nics 2 -o -", Expect::Changes},
    {"dot", "--nic-bandwidth", "topo multinode --nodes 2 --gpus 4 -o -", "topo multinode --nodes 2 --gpus 4 --nic-bandwidth 5 -o -", Expect::Changes},
    {"dot", "--tiers", "topo fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --leaves-per-pod 2 -o -", "topo fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --leaves-per-pod 2 --tiers 3 -o -", Expect::Changes},
    {"dot", "--nodes-per-leaf", "topo fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 8 -o -", "topo fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 2 -o -", Expect::Changes},
    {"dot", "--leaves-per-pod", "topo fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --tiers 3 --leaves-per-pod 8 -o -", "topo fat_tree --nodes 16 --gpus 2 --nodes-per-leaf 2 --tiers 3 --leaves-per-pod 2 -o -", Expect::Changes},
    {"dot", "--oversubscription", "topo fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 2 -o -", "topo fat_tree --nodes 8 --gpus 2 --nodes-per-leaf 2 --oversubscription 4 -o -", Expect::Changes},
    {"dot", "--unidirectional", "topo ring -n 4 -o -", "topo ring -n 4 --unidirectional -o -", Expect::Changes},
    {"dot", "--rails", "topo fat_tree --nodes 4 --gpus 4 --nics 4 --nodes-per-leaf 2 -o -", "topo fat_tree --nodes 4 --gpus 4 --nics 4 --nodes-per-leaf 2 --rails -o -", Expect::Changes},
    {"dot", "-o", "topo dgx1 -o -", "topo dgx1 -o {out}", Expect::Writes},
};
// clang-format on

std::string with_output(std::string args, const std::string &out) {
  const auto at = args.find("{out}");
  if (at != std::string::npos)
    args.replace(at, 5, out);
  return args;
}

TEST(OptionWalkTest, EveryOptionIsHonouredOrRefused) {
  const std::string out = temp_file("option-walk-output").string();
  for (const OptionRow &row : kRows) {
    const std::string label = std::string(row.command) + " " + row.option + ": " + row.with;
    std::filesystem::remove(out);
    const CliRun without = run_cli(std::string(row.command) + " " + row.without);
    const CliRun with = run_cli(std::string(row.command) + " " + with_output(row.with, out));
    EXPECT_NE(without.exit_code, 2) << label << "\n(without) " << without.err;
    switch (row.expect) {
    case Expect::Changes:
      EXPECT_NE(with.exit_code, 2) << label << "\n" << with.err;
      EXPECT_TRUE(with.out != without.out || with.exit_code != without.exit_code)
          << label << ": the option changed nothing";
      break;
    case Expect::Writes:
      EXPECT_EQ(with.exit_code, 0) << label << "\n" << with.err;
      EXPECT_TRUE(std::filesystem::exists(out) && std::filesystem::file_size(out) > 0) << label;
      break;
    case Expect::Refused:
      EXPECT_EQ(with.exit_code, 2) << label << "\n" << with.out << with.err;
      EXPECT_EQ(std::count(with.err.begin(), with.err.end(), '\n'), 1) << label << ": " << with.err;
      EXPECT_EQ(with.out, "") << label;
      break;
    }
  }
  std::filesystem::remove(out);
}

// The options `syncoll COMMAND --help` lists, by their first name (-h,--help left out).
std::set<std::string> listed_options(const std::string &command) {
  const CliRun help = run_cli(command + " --help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  std::set<std::string> names;
  std::stringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] != '-')
      continue;
    std::string name = line.substr(first, line.find_first_of(" ,", first) - first);
    if (name != "-h")
      names.insert(name);
  }
  return names;
}

TEST(OptionWalkTest, TheTableCoversEveryOptionOfTheWalkedCommands) {
  for (const char *command : {"simulate", "compose", "lower", "verify", "dot"}) {
    std::set<std::string> walked;
    for (const OptionRow &row : kRows)
      if (std::string(row.command) == command)
        walked.insert(row.option);
    const std::set<std::string> listed = listed_options(command);
    EXPECT_GT(listed.size(), 5u) << command; // --help was read
    for (const std::string &name : listed)
      EXPECT_TRUE(walked.count(name)) << command << " " << name << " has no row in the walk";
    for (const std::string &name : walked)
      EXPECT_TRUE(listed.count(name)) << command << " " << name << " is not an option any more";
  }
}

} // namespace
} // namespace syncoll::testing
