// Table-driven: every malformed or inconsistent input gives exit code 2 and exactly one line on
// stderr, `file:line:col: what is wrong`, with nothing on stdout and no output file.
#include "tests/cli/run_cli.h"

#include <filesystem>

namespace syncoll::testing {
namespace {

struct MalformedCase {
  const char *file;     ///< in tests/data/malformed
  const char *location; ///< "line:col"
  const char *message;  ///< a part of the message
};

// Names the case by its file in gtest's output.
void PrintTo(const MalformedCase &c, std::ostream *os) {
  *os << c.file;
}

// The command that reads each kind of file; ir files are converted to a file that must not appear.
std::string command_for(const std::string &file, const std::string &output) {
  const std::string path = "tests/data/malformed/" + file;
  if (file.starts_with("topo_"))
    return "topo show " + path;
  if (file.starts_with("coll_"))
    return "algo check examples/algorithms/dgx1_allgather_ring.json --collective " + path;
  if (file.starts_with("algo_"))
    return "algo check " + path + " --topology dgx1";
  if (file.starts_with("study_"))
    return "study " + path + " -o " + output;
  if (file.starts_with("comp_"))
    return "compose --file " + path + " --system dgx_h100 --gpus 2 -o " + output;
  return "ir convert " + path + " -o " + output;
}

class MalformedInputTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedInputTest, ExitsTwoWithOneLocatedLine) {
  const MalformedCase &c = GetParam();
  const auto output = std::filesystem::temp_directory_path() /
                      ("syncoll-malformed-" + std::to_string(::getpid()) + ".out");
  std::filesystem::remove(output);
  CliRun run = run_cli(command_for(c.file, output.string()));
  EXPECT_EQ(run.exit_code, 2);
  const std::string prefix =
      std::string("tests/data/malformed/") + c.file + ":" + c.location + ": ";
  EXPECT_EQ(run.err.substr(0, prefix.size()), prefix) << run.err;
  EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_FALSE(std::filesystem::exists(output)) << "partial output file written";
}

const MalformedCase kCases[] = {
    // Composition JSON
    {"comp_two_writers.json", "4:5", "writes rank 1 recv slot 0, which another primitive"},
    {"comp_unknown_buffer.json", "3:52", "unknown buffer 'scratch'"},
    // Study files
    {"study_bad_size.json", "5:13", "size '64XB' has an unknown unit 'XB'"},
    {"study_collnet_without_nccl.json", "6:73", "\"collnet\" applies to an \"nccl\" variant"},
    {"study_collnet_forced_off.json", "6:71", "reduces in the network: it needs \"collnet\": true"},
    {"study_missing_program.json", "7:44", "cannot read program"},
    {"study_system_and_topology.json", "4:16",
     "a machine is a \"system\" (a preset) or a \"topology\""},
    {"study_time_limit_without_synth.json", "6:65",
     "\"time_limit_s\" applies to a \"synth\" variant"},
    {"study_too_many_gpus.json", "3:47", "system 'dgx_h100' has 8 GPUs per node, not 16"},
    {"study_two_kinds.json", "7:16", "a variant is exactly one of"},
    {"study_unknown_baseline.json", "7:15", "no variant is named 'nccl'"},
    {"study_unknown_protocol.json", "6:27", "unknown protocol 'LL256'"},
    {"study_unknown_dsl.json", "7:39", "unknown DSL example 'ring_allreduse'"},
    {"study_unknown_key.json", "5:12", "unknown key 'sizez'"},
    {"study_unknown_system.json", "3:27", "unknown system 'dgx9'"},
    // Topology JSON
    {"topo_trailing_comma.json", "6:3", "invalid JSON: syntax error"},
    // A line break inside a string: at the break, not at column 0 of the next line.
    {"topo_line_break_in_string.json", "2:13", "must be escaped"},
    {"topo_number_overflow.json", "3:12", "number overflow parsing '4e99999'"},
    {"topo_unknown_key.json", "5:37", "unknown key 'capcity'"},
    {"topo_negative_capacity.json", "5:38", "capacity -2 must be at least 1"},
    {"topo_dangling_link.json", "6:23", "destination 9 is out of range [0, 4)"},
    {"topo_self_link.json", "5:23", "link 2->2 connects a vertex to itself"},
    {"topo_duplicate_link.json", "6:5", "duplicate link 0->1"},
    {"topo_relation_missing_link.json", "8:54", "names link 1->0, which the topology does not"},
    {"topo_hierarchy_mismatch.json", "5:27", "multiply to 6, but the topology has 4 ranks"},
    {"topo_ranks_not_integer.json", "3:12", "expected an integer, found a string"},
    {"topo_zero_bandwidth.json", "5:59", "bandwidth must be positive"},
    {"topo_unknown_sharing.json", "8:47", "unknown sharing 'fast' (expected fifo or fair)"},
    // Collective JSON
    {"coll_rank_out_of_range.json", "8:32", "rank 5 is out of range [0, 2)"},
    {"coll_unknown_kind.json", "2:11", "unknown collective kind 'allgathr'"},
    // Algorithm JSON
    {"algo_short_send.json", "5:29", "found 2 elements"},
    {"algo_zero_rounds.json", "5:16", "value 0 is out of range"},
    {"algo_unknown_op.json", "5:39", "unknown send operation 'sum'"},
    // MSCCL-IR XML
    {"ir_unclosed_tag.xml", "5:7", "invalid XML"},
    {"ir_missing_cnt.xml", "4:7", "<step> is missing attribute 'cnt'"},
    {"ir_unknown_type.xml", "4:19", "unknown step type 'xyz'"},
    {"ir_unknown_protocol.xml", "1:16", "unknown protocol 'LL64'"},
    {"ir_unknown_collective.xml", "1:74", "unknown collective 'allgatherv'"},
    {"ir_peer_out_of_range.xml", "3:16", "send peer 8 is out of range"},
    {"ir_send_to_self.xml", "3:16", "send peer is the rank itself"},
    {"ir_offset_past_buffer.xml", "4:39", "srcoff 5 is past the end of buffer 'i'"},
    {"ir_count_negative.xml", "4:72", "cnt -1 must not be negative"},
    {"ir_tb_ids_gap.xml", "2:3", "tb ids must be contiguous from 0"},
    {"ir_send_without_peer.xml", "4:19", "'s' sends, but the thread block has no send peer"},
    {"ir_hasdep_two.xml", "4:101", "'hasdep' must be 0 or 1"},
    {"ir_unknown_buffer.xml", "4:28", "'srcbuf' must be i, o or s"},
    {"ir_nop_chain_unterminated.xml", "5:80", "chain of nop dependencies"},
    {"ir_channel_negative.xml", "3:35", "channel -2 must not be negative"},
    {"ir_ngpus_mismatch.xml", "1:1", "ngpus is 3 but the program has 2 gpu elements"},
    {"ir_bad_integer.xml", "4:39", "'srcoff' must be an integer, found '0x1'"},
    {"ir_gpu_id_out_of_range.xml", "3:8", "gpu id 7 is out of range [0, 2)"},
    // Program JSON
    {"program_count_is_string.json", "14:92", "expected an integer, found a string"},
};

INSTANTIATE_TEST_SUITE_P(Table, MalformedInputTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<MalformedCase> &param) {
                           std::string name = param.param.file;
                           for (char &ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return name;
                         });

TEST(MalformedInputTest, TableCoversEveryFile) {
  // Check that no file in the data folder is left out of the table.
  size_t files = 0;
  for ([[maybe_unused]] const auto &e : std::filesystem::directory_iterator(
           std::string(SYNCOLL_SOURCE_DIR) + "/tests/data/malformed"))
    ++files;
  EXPECT_EQ(files, std::size(kCases));
  EXPECT_GE(std::size(kCases), 20u);
}

} // namespace
} // namespace syncoll::testing
