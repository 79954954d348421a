// Fuzz target: the collective JSON reader (custom collectives, verify --collective FILE).
#include "model/collective.h"
#include "model/json_document.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_json_reader(data, size,
                          [](const JsonView &root) { return collective_from_json(root); });
  return 0;
}
