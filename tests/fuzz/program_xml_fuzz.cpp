// Fuzz target: the MSCCL-IR XML reader (every command that takes a program).
#include "model/mscclir.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_reader(parse_mscclir_xml(fuzz::as_text(data, size), fuzz::kInputName));
  return 0;
}
