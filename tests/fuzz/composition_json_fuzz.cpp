// Fuzz target: the composition JSON reader (syncoll compose --file).
#include "compose/composition_json.h"
#include "model/json_document.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_json_reader(
      data, size, [](const JsonView &root) { return compose::composition_from_json(root); });
  return 0;
}
