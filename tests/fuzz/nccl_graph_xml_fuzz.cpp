// Fuzz target: the reader of NCCL's graph file (simulate --nccl-graph).
#include "nccl/graph_xml.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_reader(nccl::read_nccl_graph_xml(fuzz::as_text(data, size), fuzz::kInputName));
  return 0;
}
