// Fuzz target: the topology JSON reader (syncoll topo show FILE, -t FILE).
#include "model/topology_json.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_reader(parse_topology_json(fuzz::as_text(data, size), fuzz::kInputName));
  return 0;
}
