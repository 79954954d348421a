// Fuzz target: the reader of NCCL's topology dump (syncoll topo show and every -t that names one).
#include "nccl/topo_xml.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_reader(
      nccl::read_nccl_topology_xml(fuzz::as_text(data, size), fuzz::kInputName, "input"));
  return 0;
}
