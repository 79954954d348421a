// Fuzz target: the algorithm JSON reader (syncoll algo check, simulate, lower).
#include "model/algorithm.h"
#include "model/json_document.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_json_reader(data, size,
                          [](const JsonView &root) { return algorithm_from_json(root); });
  return 0;
}
