// Every option of every subcommand is honoured or refused: a table row per option runs the command
// twice, without and with the option (or with another value of it), and asserts that the output
// changes (or shows what the option asked for), that the named file is written, or that the
// option is refused with one line and exit 2. The topology options shared by `topo show`, `algo
// check` and `synth` get generated rows. A second test reads each command's --help and fails on
// an option the walk does not cover, so a new option cannot be accepted and ignored.
#include "tests/cli/run_cli.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

namespace syncoll::testing {
namespace {

enum class Expect {
  Changes, ///< neither run is bad input, and their exit codes or outputs differ
  Writes,  ///< the second run is not bad input and writes the file named by `{out}`
  Refused, ///< the second run is bad input: exit 2, one line, nothing on stdout
  Shows,   ///< neither run is bad input, and only the second prints `marker`
};

struct OptionRow {
  const char *command; ///< the subcommand whose option this is
  const char *option;  ///< as --help spells its first name
  const char *without;
  const char *with;
  Expect expect;
  const char *marker = ""; ///< Shows: what the second run prints and the first does not
};

constexpr const char *kRing4 = "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB";
constexpr const char *kProgram = "examples/ir/ring_allreduce_4.xml";
constexpr const char *kFamily = "--family ring_allreduce --ranks 2..4 --cases 3";
constexpr const char *kInstance = "-t ring -n 4 -c allgather -S 3";
constexpr const char *kPareto = "-t ring -n 4 -c allgather";

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
    {"simulate", "--fabric", "--system dgx_h100 --nodes 2 --baseline nccl -c allreduce -s 64KiB", "--system dgx_h100 --nodes 2 --fabric tcpxo --baseline nccl -c allreduce -s 64KiB", Expect::Changes},
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
    {"simulate", "--nccl-version", "--system dgx_h100 --nodes 2 --baseline nccl -c allreduce -s 64KiB", "--system dgx_h100 --nodes 2 --baseline nccl -c allreduce -s 64KiB --nccl-version 2.18", Expect::Changes},
    {"simulate", "--nccl-version", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --nccl-version 2.18", Expect::Refused},
    {"simulate", "--collnet", "--system dgx_a100 --nodes 8 --baseline nccl -c allreduce -s 1GiB", "--system dgx_a100 --nodes 8 --baseline nccl -c allreduce -s 1GiB --collnet", Expect::Shows, "COLLNET_DIRECT"},
    {"simulate", "--collnet", "--system aws_p5 --nodes 2 --baseline nccl -c allreduce -s 1GiB", "--system aws_p5 --nodes 2 --baseline nccl -c allreduce -s 1GiB --collnet", Expect::Refused},
    {"simulate", "--collnet", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --collnet", Expect::Refused},
    {"simulate", "--no-tuner-plugin", "--system aws_p5 --nodes 16 --baseline nccl -c allreduce -s 128MiB", "--system aws_p5 --nodes 16 --baseline nccl -c allreduce -s 128MiB --no-tuner-plugin", Expect::Shows, "Algo NVLSTREE proto Simple"},
    {"simulate", "--no-tuner-plugin", "--system dgx_h100 --nodes 4 --baseline nccl -c allreduce -s 1MiB", "--system dgx_h100 --nodes 4 --baseline nccl -c allreduce -s 1MiB --no-tuner-plugin", Expect::Refused},
    {"simulate", "--no-nvls", "--system dgx_b200 --nodes 4 --baseline nccl -c allreduce -s 2GiB", "--system dgx_b200 --nodes 4 --baseline nccl -c allreduce -s 2GiB --no-nvls", Expect::Shows, "Algo RING proto Simple channels 32"},
    {"simulate", "--no-nvls", "--system dgx_a100 --nodes 2 --baseline nccl -c allreduce -s 1MiB", "--system dgx_a100 --nodes 2 --baseline nccl -c allreduce -s 1MiB --no-nvls", Expect::Refused},
    {"simulate", "--no-nvls", "--system dgx_h100 --nodes 2 --baseline nccl-nvlstree -c allreduce -s 1GiB", "--system dgx_h100 --nodes 2 --baseline nccl-nvlstree -c allreduce -s 1GiB --no-nvls", Expect::Refused},
    {"simulate", "--channels", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --channels 1", Expect::Changes},
    {"simulate", "--channels", "examples/ir/ring_allreduce_4.xml -t ring -n 4", "examples/ir/ring_allreduce_4.xml -t ring -n 4 --channels 2", Expect::Refused},
    {"simulate", "--min-ctas", "--system dgx_h100 --nodes 8 --baseline nccl -c allreduce -s 16MiB", "--system dgx_h100 --nodes 8 --baseline nccl -c allreduce -s 16MiB --min-ctas 24", Expect::Shows, "Algo NVLSTREE proto Simple channels 24"},
    {"simulate", "--min-ctas", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --min-ctas 2", Expect::Refused},
    {"simulate", "--min-ctas", "--system dgx_h100 --baseline nccl -c allreduce --channels 4", "--system dgx_h100 --baseline nccl -c allreduce --channels 4 --min-ctas 8", Expect::Refused},
    {"simulate", "--trace", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --trace {out}", Expect::Writes},
    {"simulate", "--csv", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --csv {out}", Expect::Writes},
    {"simulate", "--nccl-tests", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --nccl-tests", Expect::Shows, "# Collective test starting: all_reduce_perf"},
    {"compare", "log", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/bad_number.log --system dgx_h100", Expect::Refused},
    {"compare", "--system", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_a100", Expect::Changes},
    {"compare", "--nodes", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 -c allgather", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 --nodes 2", Expect::Refused},
    {"compare", "--gpus", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 --gpus 4", Expect::Refused},
    {"compare", "--nics", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 --nics 2", Expect::Refused},
    {"compare", "--nic-bandwidth", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 --nic-bandwidth 5", Expect::Refused},
    {"compare", "--fabric", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 --fabric roce", Expect::Refused},
    {"compare", "-c", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 -c broadcast", Expect::Changes},
    {"compare", "--nccl-version", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100", "tests/data/nccl_tests/mpi_info_allgather.log --system dgx_h100 --nccl-version 2.18", Expect::Changes},
    {"tune", "--system", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_a100 -c allreduce -s 1MiB..64MiB", Expect::Changes},
    {"tune", "--nodes", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB", Expect::Changes},
    {"tune", "--gpus", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 -c allreduce -s 1MiB..64MiB --gpus 4", Expect::Changes},
    {"tune", "--nics", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB --nics 4", Expect::Changes},
    {"tune", "--nic-bandwidth", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB --nic-bandwidth 25", Expect::Changes},
    {"tune", "--fabric", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB --fabric roce", Expect::Changes},
    {"tune", "-c", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 -c alltoall -s 1MiB..64MiB", Expect::Refused},
    {"tune", "-s", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 -c allreduce -s 1KiB..64MiB", Expect::Changes},
    {"tune", "--nccl-version", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB --nccl-version 2.18", Expect::Changes},
    {"tune", "--collnet", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 --nodes 2 -c allreduce -s 1MiB..64MiB --collnet", Expect::Changes},
    {"tune", "--no-nvls", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 -c allreduce -s 1MiB..64MiB --no-nvls", Expect::Changes},
    {"tune", "--nccl-tuner-csv", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 -c allreduce -s 1MiB..64MiB --nccl-tuner-csv {out}", Expect::Writes},
    {"tune", "--ncclx-tuner-csv", "--system dgx_h100 -c allreduce -s 1MiB..64MiB", "--system dgx_h100 -c allreduce -s 1MiB..64MiB --ncclx-tuner-csv {out}", Expect::Writes},
    {"simulate", "--syncoll-rings", "--baseline nccl-ring -c allreduce -t examples/nccl_topo/pcie_amd_4gpu_bridged.xml -s 64MiB", "--baseline nccl-ring -c allreduce -t examples/nccl_topo/pcie_amd_4gpu_bridged.xml -s 64MiB --syncoll-rings", Expect::Changes},
    {"simulate", "--write-nccl-graph", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --write-nccl-graph {out}", Expect::Writes},
    {"simulate", "--nccl-graph", "--baseline nccl-ring -c allreduce -t dgx1 -s 1MiB", "--baseline nccl-ring -c allreduce -t dgx1 -s 1MiB --nccl-graph tests/data/nccl_graph/dgx1_one_ring.xml", Expect::Changes},
    {"simulate", "--nccl-tests-json", kRing4, "--baseline nccl-ring -c allreduce -t ring -n 4 -s 1MiB --nccl-tests-json {out}", Expect::Writes},

    {"compose", "-c", "-c allgather --system dgx_h100 --nodes 2", "-c broadcast --system dgx_h100 --nodes 2", Expect::Changes},
    {"compose", "--file", "-c allreduce --system dgx_h100 --gpus 2", "--file examples/compositions/allreduce_2.json --system dgx_h100 --gpus 2", Expect::Changes},
    {"compose", "--system", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_a100 --nodes 2", Expect::Changes},
    {"compose", "--format", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 2 --format mscclpp", Expect::Changes},
    {"compose", "--nodes", "-c allgather --system dgx_h100 --nodes 2", "-c allgather --system dgx_h100 --nodes 3", Expect::Changes},
    {"compose", "--nics", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB --nics 1", Expect::Changes},
    {"compose", "--nics", "-c allgather --system dgx_h100", "-c allgather --system dgx_h100 --nics 1", Expect::Refused},
    {"compose", "--nic-bandwidth", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB", "-c allgather --system dgx_h100 --nodes 2 -s 64MiB --nic-bandwidth 5", Expect::Changes},
    {"compose", "--fabric", "-c allgather --system dgx_h100 --nodes 2 -s 64KiB", "-c allgather --system dgx_h100 --nodes 2 -s 64KiB --fabric tcpxo", Expect::Changes},
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
    {"lower", "--passes", "examples/algorithms/ring4_allreduce.json -t ring -n 4", "examples/algorithms/ring4_allreduce.json -t ring -n 4 --passes gc3", Expect::Changes},
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
    {"lower", "--format", "--example ring_allreduce -n 4", "--example ring_allreduce -n 4 --format mscclpp", Expect::Changes},
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
    {"run", "--backend", kProgram, "examples/ir/ring_allreduce_4.xml --backend cuda", Expect::Refused},
    {"run", "--emulate", kProgram, "examples/ir/ring_allreduce_4.xml --emulate", Expect::Refused},
    {"run", "--rank", kProgram, "examples/ir/ring_allreduce_4.xml --rank 0", Expect::Refused},
    {"run", "--id-file", kProgram, "examples/ir/ring_allreduce_4.xml --id-file {out}", Expect::Refused},
    {"run", "--device", kProgram, "examples/ir/ring_allreduce_4.xml --device 0", Expect::Refused},
    {"run", "-s", kProgram, "examples/ir/ring_allreduce_4.xml -s 2MiB", Expect::Shows, " 2097152 "},
    {"run", "--dtype", kProgram, "examples/ir/ring_allreduce_4.xml --dtype f16", Expect::Shows, " f16 "},
    {"run", "--op", kProgram, "examples/ir/ring_allreduce_4.xml --op max", Expect::Shows, " max "},
    {"run", "--iters", kProgram, "examples/ir/ring_allreduce_4.xml --iters 2", Expect::Shows, "2 checked run(s)"},
    {"run", "--seed", kProgram, "examples/ir/ring_allreduce_4.xml --seed 7", Expect::Shows, "seed 7,"},
    {"run", "--root", kProgram, "examples/ir/ring_allreduce_4.xml --root 1", Expect::Refused},
    {"run", "--watchdog-ms", kProgram, "examples/ir/ring_allreduce_4.xml --watchdog-ms 50", Expect::Shows, "watchdog 50 ms"},
    {"check", "--family", kFamily, "--family ring_allgather --ranks 2..4 --cases 3", Expect::Shows, "family ring_allgather"},
    {"check", "--example", kFamily, "--example ring_allreduce --ranks 2..4 --cases 3", Expect::Shows, "example ring_allreduce"},
    {"check", "--programs", kFamily, "--programs examples/ir/ring_allreduce_4.xml --cases 3", Expect::Shows, "programs "},
    {"check", "--synthesize", kFamily, "--synthesize ring --ranks 3..4 -c allgather --cases 2", Expect::Shows, "allgather synthesized on ring"},
    {"check", "-c", "--synthesize ring --ranks 3..4 -c allgather --cases 2", "--synthesize ring --ranks 3..4 -c allreduce --cases 2", Expect::Shows, "allreduce synthesized"},
    {"check", "-c", kFamily, "--family ring_allreduce --ranks 2..4 --cases 3 -c allgather", Expect::Refused},
    {"check", "--root", "--synthesize ring --ranks 3..4 -c broadcast --cases 2", "--synthesize ring --ranks 3..4 -c broadcast --cases 2 --root 1", Expect::Shows, "from root 1"},
    {"check", "--root", "--synthesize ring --ranks 3..4 -c allgather --cases 2", "--synthesize ring --ranks 3..4 -c allgather --cases 2 --root 1", Expect::Refused},
    {"check", "--ranks", kFamily, "--family ring_allreduce --ranks 2..3 --cases 3", Expect::Shows, "ranks 2..3"},
    {"check", "--ranks", "--programs examples/ir/ring_allreduce_4.xml --cases 2", "--programs examples/ir/ring_allreduce_4.xml --cases 2 --ranks 4", Expect::Refused},
    {"check", "--nodes", "--example hierarchical_allreduce --ranks 6 --cases 2", "--example hierarchical_allreduce --ranks 6 --cases 2 --nodes 3", Expect::Shows, "on 3 nodes"},
    {"check", "--nodes", kFamily, "--family ring_allreduce --ranks 2..4 --cases 3 --nodes 2", Expect::Refused},
    {"check", "--nodes", "--example ring_allreduce --ranks 4 --cases 2", "--example ring_allreduce --ranks 4 --cases 2 --nodes 2", Expect::Refused},
    {"check", "-s", kFamily, "--family ring_allreduce --ranks 2..4 --cases 3 -s 4KiB", Expect::Shows, "sizes 4 KiB,"},
    {"check", "--seed", kFamily, "--family ring_allreduce --ranks 2..4 --cases 3 --seed 9", Expect::Shows, "seed 9"},
    {"check", "--cases", kFamily, "--family ring_allreduce --ranks 2..4 --cases 4", Expect::Shows, "4 cases pass"},
    {"check", "--shrink", "--family broken_allpairs_allreduce --ranks 2..4 --cases 20 --no-shrink -o {out}", "--family broken_allpairs_allreduce --ranks 2..4 --cases 20 --shrink -o {out}", Expect::Changes},
    {"check", "--laws", kFamily, "--family ring_allreduce --ranks 2..4 --cases 3 --laws verifies", Expect::Shows, "laws verifies\n"},
    {"check", "-o", "--family broken_allpairs_allreduce --ranks 2..4 --cases 20 -o {out}2", "--family broken_allpairs_allreduce --ranks 2..4 --cases 20 -o {out}", Expect::Writes},
    {"synth instance", "-c", kInstance, "-t ring -n 4 -c broadcast -S 3", Expect::Changes},
    {"synth instance", "--root", "-t ring -n 4 -c broadcast -S 3", "-t ring -n 4 -c broadcast -S 3 --root 2", Expect::Changes},
    {"synth instance", "--root", kInstance, "-t ring -n 4 -c allgather -S 3 --root 2", Expect::Refused},
    {"synth instance", "--time-limit", kInstance, "-t ring -n 4 -c allgather -S 3 --time-limit 0.000001", Expect::Shows, "unknown"},
    {"synth instance", "--certify", "-t dgx1 -c allgather -C 3 -S 2 -R 4", "-t dgx1 -c allgather -C 3 -S 2 -R 4 --certify", Expect::Shows, "certified: "},
    {"synth instance", "--certify", kInstance, "-t ring -n 4 -c allgather -S 3 --backend smt --certify", Expect::Refused},
    {"synth instance", "--symmetry", kInstance, "-t ring -n 4 -c allgather -S 3 --symmetry", Expect::Shows, "symmetry breaking"},
    {"synth instance", "--symmetry", kInstance, "-t ring -n 4 -c allgather -S 3 --backend smt --symmetry", Expect::Refused},
    {"synth instance", "--backend", kInstance, "-t ring -n 4 -c allgather -S 3 --backend smt", Expect::Changes},
    {"synth instance", "--allreduce", "-t ring -n 4 -c allreduce -C 4 -S 6 --backend smt", "-t ring -n 4 -c allreduce -C 4 -S 6 --backend smt --allreduce direct", Expect::Changes},
    {"synth instance", "--allreduce", kInstance, "-t ring -n 4 -c allgather -S 3 --allreduce direct", Expect::Refused},
    {"synth instance", "-C", kInstance, "-t ring -n 4 -c allgather -S 3 -C 2", Expect::Changes},
    {"synth instance", "-o", kInstance, "-t ring -n 4 -c allgather -S 3 -o {out}", Expect::Writes},
    {"synth instance", "-S", kInstance, "-t ring -n 4 -c allgather -S 4", Expect::Changes},
    {"synth instance", "-R", kInstance, "-t ring -n 4 -c allgather -S 3 -R 4", Expect::Changes},
    {"synth pareto", "-c", kPareto, "-t ring -n 4 -c reducescatter", Expect::Changes},
    {"synth pareto", "--root", "-t ring -n 4 -c broadcast", "-t ring -n 4 -c broadcast --root 1", Expect::Changes},
    {"synth pareto", "--time-limit", kPareto, "-t ring -n 4 -c allgather --time-limit 0.000001", Expect::Shows, " unknown"},
    {"synth pareto", "--certify", kPareto, "-t ring -n 4 -c allgather --certify", Expect::Shows, "unsat proofs checked"},
    {"synth pareto", "--symmetry", kPareto, "-t ring -n 4 -c allgather --symmetry", Expect::Shows, "symmetry breaking"},
    {"synth pareto", "--backend", kPareto, "-t ring -n 4 -c allgather --backend smt", Expect::Changes},
    {"synth pareto", "--allreduce", kPareto, "-t ring -n 4 -c allgather --allreduce direct", Expect::Refused},
    {"synth pareto", "-k", kPareto, "-t ring -n 4 -c allgather -k 1", Expect::Shows, "S <= R <= S + 1)"},
    {"synth pareto", "--max-chunks", kPareto, "-t ring -n 4 -c allgather --max-chunks 2", Expect::Shows, "(C <= 2,"},
    {"synth pareto", "--max-steps", kPareto, "-t ring -n 4 -c allgather --max-steps 3", Expect::Shows, "S <= 3,"},
    {"synth pareto", "-o", kPareto, "-t ring -n 4 -c allgather -o {out}", Expect::Changes},
    {"synth least-steps", "-c", kPareto, "-t ring -n 4 -c reducescatter", Expect::Changes},
    {"synth least-steps", "--root", "-t ring -n 4 -c broadcast", "-t ring -n 4 -c broadcast --root 1", Expect::Changes},
    {"synth least-steps", "--time-limit", kPareto, "-t ring -n 4 -c allgather --time-limit 0.000001", Expect::Shows, "unknown"},
    {"synth least-steps", "--certify", kPareto, "-t ring -n 4 -c allgather --certify", Expect::Shows, "unsat proofs checked"},
    {"synth least-steps", "--symmetry", kPareto, "-t ring -n 4 -c allgather --symmetry", Expect::Shows, "symmetry breaking"},
    {"synth least-steps", "--backend", kPareto, "-t ring -n 4 -c allgather --backend smt", Expect::Changes},
    {"synth least-steps", "--allreduce", kPareto, "-t ring -n 4 -c allgather --allreduce direct", Expect::Refused},
    {"synth least-steps", "-C", kPareto, "-t ring -n 4 -c allgather -C 2", Expect::Changes},
    {"synth least-steps", "-o", kPareto, "-t ring -n 4 -c allgather -o {out}", Expect::Writes},
    {"synth least-steps", "-R", kPareto, "-t ring -n 4 -c allgather -R 3", Expect::Changes},
    {"synth least-steps", "-k", kPareto, "-t ring -n 4 -c allgather -k 1", Expect::Changes},
    {"synth least-steps", "--max-steps", kPareto, "-t ring -n 4 -c allgather --max-steps 1", Expect::Changes},
    {"synth bound", "-c", kPareto, "-t ring -n 4 -c reducescatter", Expect::Changes},
    {"synth bound", "-s", kPareto, "-t ring -n 4 -c allgather -s 2GiB", Expect::Changes},
    {"synth scale", "-c", kPareto, "-t ring -n 4 -c reducescatter", Expect::Changes},
    {"synth scale", "-C", "-t torus2d --shape 4x4 -c allgather", "-t torus2d --shape 4x4 -c allgather -C 2", Expect::Changes},
    {"synth scale", "--steps", "-t torus2d --shape 4x4 -c allgather", "-t torus2d --shape 4x4 -c allgather --steps 5", Expect::Changes},
    {"synth scale", "-o", kPareto, "-t ring -n 4 -c allgather -o {out}", Expect::Writes},
    {"algo check", "-c", "examples/algorithms/ring4_allreduce.json", "examples/algorithms/ring4_allreduce.json -c allgather", Expect::Changes},
    {"algo check", "-C", "examples/algorithms/ring4_allreduce.json", "examples/algorithms/ring4_allreduce.json -C 8", Expect::Changes},
    {"algo check", "--root", "examples/algorithms/line4_broadcast_s4r4.json", "examples/algorithms/line4_broadcast_s4r4.json --root 3", Expect::Changes},
    {"algo check", "--root", "examples/algorithms/ring4_allreduce.json", "examples/algorithms/ring4_allreduce.json --root 1", Expect::Refused},
    {"ir convert", "-o", "examples/ir/ring_allreduce_4.xml", "examples/ir/ring_allreduce_4.xml -o {out}", Expect::Writes},
    {"topo show", "--json", "dgx1", "dgx1 --json", Expect::Changes},
    {"study", "-o", "tests/data/studies/quick.json -o {out}", "tests/data/studies/quick.json -o {out}/..", Expect::Changes},
    {"study", "--shard", "tests/data/studies/quick.json -o {out}", "tests/data/studies/quick.json -o {out}2 --shard 0/2", Expect::Shows, "shard 0/2"},
    {"study", "--quick", "tests/data/studies/quick.json -o {out}", "tests/data/studies/quick.json -o {out} --quick", Expect::Shows, "1 points"},
    {"study", "--quick", "tests/data/studies/sharding.json -o {out} --shard 1/99", "tests/data/studies/sharding.json -o {out} --quick", Expect::Refused},
    {"study", "--fresh", "tests/data/studies/quick.json -o {out}", "tests/data/studies/quick.json -o {out} --fresh", Expect::Shows, "4 evaluated now"},
    {"demo", "-o", nullptr, "-o /nonexistent/syncoll-demo", Expect::Refused},
};
// clang-format on

std::string with_output(std::string args, const std::string &out) {
  for (auto at = args.find("{out}"); at != std::string::npos; at = args.find("{out}"))
    args.replace(at, 5, out);
  return args;
}

void check_row(const OptionRow &row, const std::string &out) {
  const std::string label = std::string(row.command) + " " + row.option + ": " + row.with;
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(out + "2");
  // A run that leaves state in {out} (a study's cache) runs twice, so that the row compares the
  // option with the state the command leaves; a row without `without` only checks a refusal.
  CliRun without;
  if (row.without != nullptr) {
    const std::string base = std::string(row.command) + " " + with_output(row.without, out);
    without = run_cli(base);
    if (std::string(row.without).find("{out}") != std::string::npos)
      without = run_cli(base);
    EXPECT_NE(without.exit_code, 2) << label << "\n(without) " << without.err;
  }
  const CliRun with = run_cli(std::string(row.command) + " " + with_output(row.with, out));
  switch (row.expect) {
  case Expect::Changes:
    EXPECT_NE(with.exit_code, 2) << label << "\n" << with.err;
    EXPECT_TRUE(with.out != without.out || with.exit_code != without.exit_code)
        << label << ": the option changed nothing";
    break;
  case Expect::Writes:
    EXPECT_NE(with.exit_code, 2) << label << "\n" << with.err;
    EXPECT_TRUE(std::filesystem::exists(out) && std::filesystem::file_size(out) > 0) << label;
    break;
  case Expect::Refused:
    EXPECT_EQ(with.exit_code, 2) << label << "\n" << with.out << with.err;
    EXPECT_EQ(std::count(with.err.begin(), with.err.end(), '\n'), 1) << label << ": " << with.err;
    EXPECT_EQ(with.out, "") << label;
    break;
  case Expect::Shows:
    EXPECT_NE(with.exit_code, 2) << label << "\n" << with.err;
    EXPECT_NE(with.out.find(row.marker), std::string::npos)
        << label << ": \"" << row.marker << "\" not in\n"
        << with.out;
    EXPECT_EQ(without.out.find(row.marker), std::string::npos)
        << label << ": \"" << row.marker << "\" already in\n"
        << without.out;
    break;
  }
}

TEST(OptionWalkTest, EveryOptionIsHonouredOrRefused) {
  const std::string out = temp_file("option-walk-output").string();
  for (const OptionRow &row : kRows)
    check_row(row, out);
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(out + "2");
}

// The topology options shared by `topo show`, `algo check` and `synth`, walked on a ring: -t,
// -n and --unidirectional change the answer, and every option a ring does not take is refused.
struct TopologyCommand {
  const char *command;
  const char *before;   ///< arguments before the topology
  const char *after;    ///< and after it
  const char *topology; ///< "-t " or "" for a positional topology
  bool ranks_fixed;     ///< the input fixes the ranks: another -n is refused
};

const TopologyCommand kTopologyCommands[] = {
    {"topo show", "", "", "", false},
    {"algo check", "examples/algorithms/ring4_allreduce.json ", "", "-t ", true},
    {"synth instance", "", " -c allgather -S 3", "-t ", false},
    {"synth pareto", "", " -c allgather", "-t ", false},
    {"synth least-steps", "", " -c allgather", "-t ", false},
    {"synth bound", "", " -c allgather", "-t ", false},
    {"synth scale", "", " -c allgather", "-t ", false},
};

const std::pair<const char *, const char *> kNotARingsOption[] = {
    {"--dims", "--dims 3"},
    {"--shape", "--shape 2x2"},
    {"--nodes", "--nodes 2"},
    {"--gpus", "--gpus 2"},
    {"--intra", "--intra ring"},
    {"--nics", "--nics 1"},
    {"--nic-bandwidth", "--nic-bandwidth 5"},
    {"--tiers", "--tiers 3"},
    {"--nodes-per-leaf", "--nodes-per-leaf 2"},
    {"--leaves-per-pod", "--leaves-per-pod 2"},
    {"--oversubscription", "--oversubscription 2"},
    {"--rails", "--rails"},
};

struct OwnedRow {
  std::string command, option, without, with;
  Expect expect;
  OptionRow row() const {
    return {command.c_str(), option.c_str(), without.c_str(), with.c_str(), expect};
  }
};

std::vector<OwnedRow> topology_rows() {
  std::vector<OwnedRow> rows;
  for (const TopologyCommand &c : kTopologyCommands) {
    auto args = [&](const std::string &topology) {
      return std::string(c.before) + c.topology + topology + c.after;
    };
    const std::string ring = args("ring -n 4");
    if (*c.topology != 0)
      rows.push_back({c.command, "-t", ring, args("line -n 4"), Expect::Changes});
    rows.push_back({c.command, "-n", ring, args("ring -n 5"),
                    c.ranks_fixed ? Expect::Refused : Expect::Changes});
    rows.push_back(
        {c.command, "--unidirectional", ring, args("ring -n 4 --unidirectional"), Expect::Changes});
    for (const auto &[option, given] : kNotARingsOption)
      rows.push_back(
          {c.command, option, ring, args(std::string("ring -n 4 ") + given), Expect::Refused});
  }
  return rows;
}

TEST(OptionWalkTest, TopologyOptionsAreReadByEveryCommandThatTakesThem) {
  const std::string out = temp_file("option-walk-topology").string();
  for (const OwnedRow &row : topology_rows())
    check_row(row.row(), out);
  std::filesystem::remove_all(out);
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

TEST(OptionWalkTest, TheWalkCoversEveryOptionOfEveryCommand) {
  const std::vector<OwnedRow> generated = topology_rows();
  for (const char *command :
       {"simulate", "compose", "lower", "verify", "dot", "run", "check", "synth instance",
        "synth pareto", "synth least-steps", "synth bound", "synth scale", "algo check", "ir show",
        "ir convert", "topo list", "topo show", "study", "demo"}) {
    std::set<std::string> walked;
    for (const OptionRow &row : kRows)
      if (std::string(row.command) == command)
        walked.insert(row.option);
    for (const OwnedRow &row : generated)
      if (row.command == command)
        walked.insert(row.option);
    const std::set<std::string> listed = listed_options(command);
    for (const std::string &name : listed)
      EXPECT_TRUE(walked.count(name)) << command << " " << name << " has no row in the walk";
    for (const std::string &name : walked)
      EXPECT_TRUE(listed.count(name)) << command << " " << name << " is not an option any more";
  }
}

} // namespace
} // namespace syncoll::testing
