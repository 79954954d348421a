// Fuzz target: the MSCCL-IR JSON reader (syncoll ir convert's other direction, and programs given
// as JSON).
#include "model/json_document.h"
#include "model/mscclir.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_json_reader(data, size, [](const JsonView &root) { return program_from_json(root); });
  return 0;
}
