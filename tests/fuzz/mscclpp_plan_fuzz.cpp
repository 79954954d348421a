// Fuzz target: the reader of MSCCL++ execution plans.
#include "mscclpp/plan_json.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_reader(mscclpp::read_execution_plan(fuzz::as_text(data, size), fuzz::kInputName));
  return 0;
}
