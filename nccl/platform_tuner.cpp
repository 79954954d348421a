// aws-ofi-nccl's region tuner as a table of its decisions. Its source (src/tuner/
// nccl_ofi_regions.cpp, aws-ofi-nccl 1.16-1.18) draws polygons over (log2 size, log2 ranks) per
// platform and collective; the rows below are those polygons read at 8 ranks a node on 3 to 1,024
// nodes: from each size on, the algorithm and protocol of the first region holding the point, or
// NCCL's own choice where none does. A node count between rows takes the row below it.
#include "nccl/platform_tuner.h"

#include "model/invariant.h"

#include <array>

namespace syncoll::nccl {
namespace {

using A = NcclAlgorithm;
using P = Protocol;

struct Band {
  int64_t from_bytes;
  std::optional<NcclAlgorithm> algorithm; ///< none: NCCL's own choice
  Protocol protocol;
};

struct Row {
  PlatformTuner tuner;
  CollectiveKind kind;
  int nodes;
  std::array<Band, 7> bands; ///< in order of size; unused bands repeat nothing (from_bytes 0)
};

// clang-format off
const Row kRows[] = {
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 3, {{{0, A::Tree, P::LL128}, {34997678, A::Ring, P::LL128}, {1285894812, std::nullopt, P::Simple}, {1339373846, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 4, {{{0, A::Tree, P::LL128}, {37748736, A::Ring, P::LL128}, {1494622854, std::nullopt, P::Simple}, {1610612736, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 6, {{{0, A::Tree, P::LL128}, {73322879, A::Ring, P::LL128}, {1847581865, std::nullopt, P::Simple}, {2171522474, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 8, {{{0, A::Tree, P::LL128}, {117440512, A::Ring, P::LL128}, {2147483648, std::nullopt, P::Simple}, {2684354560, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 12, {{{0, A::Tree, P::LL128}, {204058466, A::Ring, P::LL128}, {2147483648, std::nullopt, P::Simple}, {4364850740, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 16, {{{0, A::Tree, P::LL128}, {301989888, A::Ring, P::LL128}, {2147483648, A::NvlsTree, P::Simple}, {6442450945, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 24, {{{0, A::Tree, P::LL128}, {301989888, std::nullopt, P::Simple}, {307097114, A::NvlsTree, P::Simple}, {626146810, A::Ring, P::LL128}, {1610612736, std::nullopt, P::Simple}, {1731469189, A::NvlsTree, P::Simple}, {9663676418, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 32, {{{0, A::Tree, P::LL128}, {301989888, A::NvlsTree, P::Simple}, {1074790400, A::Ring, P::LL128}, {2147483648, A::NvlsTree, P::Simple}, {12884901888, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 48, {{{0, A::Tree, P::LL128}, {321187635, A::NvlsTree, P::Simple}, {19327352832, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 64, {{{0, A::Tree, P::LL128}, {335544320, A::NvlsTree, P::Simple}, {25769803776, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 96, {{{0, A::Tree, P::LL128}, {441725455, A::NvlsTree, P::Simple}, {38654705664, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 128, {{{0, A::Tree, P::LL128}, {536870912, A::NvlsTree, P::Simple}, {51539607552, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 192, {{{0, A::Tree, P::LL128}, {453717362, A::NvlsTree, P::Simple}, {77309411328, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 256, {{{0, A::Tree, P::LL128}, {402653184, A::NvlsTree, P::Simple}, {103079215104, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 384, {{{0, A::Tree, P::LL128}, {402653184, A::NvlsTree, P::Simple}, {77297045202, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 512, {{{0, A::Tree, P::LL128}, {402653184, A::NvlsTree, P::Simple}, {59641941529, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 768, {{{0, A::Tree, P::LL128}, {402653184, A::NvlsTree, P::Simple}, {41384271377, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5, CollectiveKind::Allreduce, 1024, {{{0, A::Tree, P::LL128}, {402653184, A::NvlsTree, P::Simple}, {31931858291, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 3, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {20521517, A::Ring, P::LL128}, {113739357, A::NvlsTree, P::Simple}, {4695088128, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 4, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {28206615, A::Ring, P::LL128}, {293601280, A::NvlsTree, P::Simple}, {509607936, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 6, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {44162180, A::Ring, P::LL128}, {441321306, A::NvlsTree, P::Simple}, {861251736, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 8, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {60700466, A::Ring, P::LL128}, {589299712, A::NvlsTree, P::Simple}, {1249750805, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 12, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {95036745, A::Ring, P::LL128}, {565653433, A::NvlsTree, P::Simple}, {2112113987, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 16, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {129753051, A::NvlsTree, P::Simple}, {3064860186, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 24, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {143580732, A::NvlsTree, P::Simple}, {5179699860, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 32, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {154276390, A::NvlsTree, P::Simple}, {7516192769, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 48, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {170717505, A::NvlsTree, P::Simple}, {13681205440, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 64, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {183434643, A::NvlsTree, P::Simple}, {20926038550, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 96, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {202983130, A::NvlsTree, P::Simple}, {38090219516, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 128, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {218103808, A::NvlsTree, P::Simple}, {58260758195, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 192, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {241346961, A::NvlsTree, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 256, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {259325449, A::NvlsTree, P::Simple}, {88665742746, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 384, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {286961560, A::NvlsTree, P::Simple}, {67149193991, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 512, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {308337984, A::NvlsTree, P::Simple}, {55130522862, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 768, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {341197323, A::NvlsTree, P::Simple}, {41751978383, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allreduce, 1024, {{{0, A::Tree, P::LL}, {196608, A::Tree, P::LL128}, {366613893, A::NvlsTree, P::Simple}, {34279017543, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 3, {{{0, A::Ring, P::LL}, {1115298, A::Ring, P::LL128}, {356384465, std::nullopt, P::Simple}, {364585163, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 4, {{{0, A::Ring, P::LL}, {1429042, A::Ring, P::LL128}, {476048885, std::nullopt, P::Simple}, {494927872, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 6, {{{0, A::Ring, P::LL}, {2026631, A::Ring, P::LL128}, {715915827, std::nullopt, P::Simple}, {727565498, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 8, {{{0, A::Ring, P::LL}, {2596741, A::Ring, P::LL128}, {956301312, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 12, {{{0, A::Ring, P::LL}, {3682633, A::Ring, P::LL128}, {1512325460, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 16, {{{0, A::Ring, P::LL}, {4718592, A::Ring, P::LL128}, {2093504261, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 24, {{{0, A::Ring, P::LL}, {6979791, A::Ring, P::LL128}, {3310734550, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 32, {{{0, A::Ring, P::LL}, {9214688, A::Ring, P::LL128}, {4583032603, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 48, {{{0, A::Ring, P::LL}, {13630464, A::Ring, P::LL128}, {7247754241, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 64, {{{0, A::Ring, P::LL}, {19922944, A::Ring, P::LL128}, {9715483188, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 96, {{{0, A::Ring, P::LL}, {28305408, A::Ring, P::LL128}, {14683467756, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 128, {{{0, A::Ring, P::LL}, {33554432, A::Ring, P::LL128}, {19682922379, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 192, {{{0, A::Ring, P::LL}, {42646026, A::Ring, P::LL128}, {29747728496, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 256, {{{0, A::Ring, P::LL}, {50554409, A::Ring, P::LL128}, {39876290851, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 384, {{{0, A::Ring, P::LL}, {64252158, A::Ring, P::LL128}, {60266918236, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 512, {{{0, A::Ring, P::LL}, {76167235, A::Ring, P::LL128}, {80786711517, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 768, {{{0, A::Ring, P::LL}, {96804795, A::Ring, P::LL128}, {97627963093, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::Allgather, 1024, {{{0, A::Ring, P::LL}, {114756512, A::Ring, P::LL128}, {78583550693, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 3, {{{0, A::Ring, P::LL}, {1115298, A::Ring, P::LL128}, {440010241, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 4, {{{0, A::Ring, P::LL}, {1429042, A::Ring, P::LL128}, {589299712, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 6, {{{0, A::Ring, P::LL}, {2026631, A::Ring, P::LL128}, {890334068, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 8, {{{0, A::Ring, P::LL}, {2596741, A::Ring, P::LL128}, {1193189185, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 12, {{{0, A::Ring, P::LL}, {3682633, A::Ring, P::LL128}, {1802710844, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 16, {{{0, A::Ring, P::LL}, {4718592, A::Ring, P::LL128}, {2415919104, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 24, {{{0, A::Ring, P::LL}, {6110240, A::Ring, P::LL128}, {4593888291, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 32, {{{0, A::Ring, P::LL}, {7340032, A::Ring, P::LL128}, {7247757313, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 48, {{{0, A::Ring, P::LL}, {12753654, A::Ring, P::LL128}, {10618482553, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 64, {{{0, A::Ring, P::LL}, {18874368, A::Ring, P::LL128}, {13923267269, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 96, {{{0, A::Ring, P::LL}, {32795111, A::Ring, P::LL128}, {20398581825, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 128, {{{0, A::Ring, P::LL}, {48534089, A::Ring, P::LL128}, {26747221670, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 192, {{{0, A::Ring, P::LL}, {84330284, A::Ring, P::LL128}, {39186591717, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 256, {{{0, A::Ring, P::LL}, {124801944, A::Ring, P::LL128}, {51382613956, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 384, {{{0, A::Ring, P::LL}, {216849302, A::Ring, P::LL128}, {75279202426, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 512, {{{0, A::Ring, P::LL}, {320919283, A::Ring, P::LL128}, {98708308829, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 768, {{{0, A::Ring, P::LL}, {557612492, A::Ring, P::LL128}}}},
    {PlatformTuner::AwsP5en, CollectiveKind::ReduceScatter, 1024, {{{0, A::Ring, P::LL}, {825221014, A::Ring, P::LL128}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 3, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {10443312, A::NvlsTree, P::Simple}, {4280773402, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 4, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {18350080, A::Ring, P::LL128}, {133693440, A::NvlsTree, P::Simple}, {435159040, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 6, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {29103310, A::NvlsTree, P::Simple}, {33312177, A::Ring, P::LL128}, {125542161, A::NvlsTree, P::Simple}, {737653531, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 8, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {40370176, A::NvlsTree, P::Simple}, {50855936, A::Ring, P::LL128}, {120061952, A::NvlsTree, P::Simple}, {1072693248, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 12, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {49471196, A::NvlsTree, P::Simple}, {71339118, A::Ring, P::LL128}, {101897418, A::NvlsTree, P::Simple}, {1680915125, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 16, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {57147392, A::NvlsTree, P::Simple}, {2311800330, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 24, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {65881217, A::NvlsTree, P::Simple}, {3622601472, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 32, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {72876032, A::NvlsTree, P::Simple}, {4982245179, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 48, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {79231575, A::NvlsTree, P::Simple}, {7807200513, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 64, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {84074285, A::NvlsTree, P::Simple}, {10737418241, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 96, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {91406432, A::NvlsTree, P::Simple}, {16651341262, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 128, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {96993280, A::NvlsTree, P::Simple}, {22732444432, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 192, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {102407050, A::NvlsTree, P::Simple}, {35252952014, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 256, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {106430464, A::NvlsTree, P::Simple}, {48127400676, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 384, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {112370979, A::NvlsTree, P::Simple}, {74634866111, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 512, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {116785860, A::NvlsTree, P::Simple}, {101891668655, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 768, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {123304372, A::NvlsTree, P::Simple}, {72337501126, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allreduce, 1024, {{{0, A::Tree, P::LL}, {393216, A::Tree, P::LL128}, {128148809, A::NvlsTree, P::Simple}, {52619465014, std::nullopt, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 3, {{{0, A::Ring, P::LL}, {1179648, A::Ring, P::LL128}, {323080257, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 4, {{{0, A::Ring, P::LL}, {1572864, A::Ring, P::LL128}, {456130560, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 6, {{{0, A::Ring, P::LL}, {2120627, A::Ring, P::LL128}, {666084016, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 8, {{{0, A::Ring, P::LL}, {2621440, A::Ring, P::LL128}, {871366656, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 12, {{{0, A::Ring, P::LL}, {3697130, A::Ring, P::LL128}, {1352972007, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 16, {{{0, A::Ring, P::LL}, {4718592, A::Ring, P::LL128}, {1848705850, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 24, {{{0, A::Ring, P::LL}, {10089974, A::Ring, P::LL128}, {2870487696, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 32, {{{0, A::Ring, P::LL}, {17301504, A::Ring, P::LL128}, {3922244783, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 48, {{{0, A::Ring, P::LL}, {26566992, A::Ring, P::LL128}, {6090073977, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 64, {{{0, A::Ring, P::LL}, {36015953, A::Ring, P::LL128}, {8321499137, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 96, {{{0, A::Ring, P::LL}, {55303603, A::Ring, P::LL128}, {12363111044, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 128, {{{0, A::Ring, P::LL}, {74973184, A::Ring, P::LL128}, {16372362378, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 192, {{{0, A::Ring, P::LL}, {138238836, A::Ring, P::LL128}, {24324142900, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 256, {{{0, A::Ring, P::LL}, {213385216, A::Ring, P::LL128}, {32212254723, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 384, {{{0, A::Ring, P::LL}, {393448995, A::Ring, P::LL128}, {47857204041, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 512, {{{0, A::Ring, P::LL}, {607327153, A::Ring, P::LL128}, {63376886623, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 768, {{{0, A::Ring, P::LL}, {1119816369, A::Ring, P::LL128}, {94157972516, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::Allgather, 1024, {{{0, A::Ring, P::LL}, {1728546513, A::Ring, P::LL128}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 3, {{{0, A::Ring, P::LL}, {1179648, A::Ring, P::LL128}, {358952127, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 4, {{{0, A::Ring, P::LL}, {1572864, A::Ring, P::LL128}, {508559360, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 6, {{{0, A::Ring, P::LL}, {2120627, A::Ring, P::LL128}, {556068879, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 8, {{{0, A::Ring, P::LL}, {2621440, A::Ring, P::LL128}, {592445440, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 12, {{{0, A::Ring, P::LL}, {3697130, A::Ring, P::LL128}, {1057482878, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 16, {{{0, A::Ring, P::LL}, {4718592, A::Ring, P::LL128}, {1595159487, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 24, {{{0, A::Ring, P::LL}, {10089974, A::Ring, P::LL128}, {2847272899, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 32, {{{0, A::Ring, P::LL}, {17301504, A::Ring, P::LL128}, {4294967297, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 48, {{{0, A::Ring, P::LL}, {26181555, A::Ring, P::LL128}, {6442450944, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 64, {{{0, A::Ring, P::LL}, {35127296, A::Ring, P::LL128}, {8589934593, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 96, {{{0, A::Ring, P::LL}, {54284023, A::Ring, P::LL128}, {12884901888, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 128, {{{0, A::Ring, P::LL}, {73924608, A::Ring, P::LL128}, {17179869184, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 192, {{{0, A::Ring, P::LL}, {135846375, A::Ring, P::LL128}, {25769803776, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 256, {{{0, A::Ring, P::LL}, {209190912, A::Ring, P::LL128}, {34359738368, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 384, {{{0, A::Ring, P::LL}, {384416337, A::Ring, P::LL128}, {51539607552, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 512, {{{0, A::Ring, P::LL}, {591965772, A::Ring, P::LL128}, {68719476736, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 768, {{{0, A::Ring, P::LL}, {1087816443, A::Ring, P::LL128}, {103079215104, A::Ring, P::Simple}}}},
    {PlatformTuner::AwsP6B200, CollectiveKind::ReduceScatter, 1024, {{{0, A::Ring, P::LL}, {1675137185, A::Ring, P::LL128}}}},
};
// clang-format on

} // namespace

std::optional<PlatformTunerChoice> platform_tuner_choice(PlatformTuner tuner, CollectiveKind kind,
                                                         int nodes, int gpus_per_node,
                                                         int64_t bytes) {
  // The plugin leaves two nodes or fewer to NCCL ("the regions are not well defined there") and
  // has regions for 8 ranks a node only among these collectives.
  if (tuner == PlatformTuner::None || nodes <= 2 || gpus_per_node != 8)
    return std::nullopt;
  const Row *row = nullptr;
  for (const Row &r : kRows)
    if (r.tuner == tuner && r.kind == kind && r.nodes <= nodes && (!row || r.nodes > row->nodes))
      row = &r;
  if (!row)
    return std::nullopt;
  const Band *band = &row->bands[0];
  for (const Band &b : row->bands)
    if (b.from_bytes > 0 && b.from_bytes <= bytes)
      band = &b;
  if (!band->algorithm)
    return std::nullopt;
  return PlatformTunerChoice{*band->algorithm, band->protocol};
}

std::string_view platform_tuner_name(PlatformTuner tuner) {
  switch (tuner) {
  case PlatformTuner::None:
    return "";
  case PlatformTuner::AwsP5:
  case PlatformTuner::AwsP5en:
  case PlatformTuner::AwsP6B200:
    return "aws-ofi-nccl region tuner";
  }
  SYNCOLL_UNREACHABLE("a tuner plugin without a name");
}

} // namespace syncoll::nccl
