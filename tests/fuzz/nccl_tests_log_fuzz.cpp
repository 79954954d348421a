// Fuzz target: the reader of nccl-tests' logs, text and JSON (syncoll compare).
#include "nccl/nccl_tests.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_reader(nccl::read_nccl_tests_log(fuzz::as_text(data, size), fuzz::kInputName));
  return 0;
}
