// Fuzz target: the study file reader (syncoll study). Files a study names are looked up in a
// folder that does not exist, so every such reference fails as a located diagnostic too.
#include "model/json_document.h"
#include "study/study_file.h"
#include "tests/fuzz/reader_contract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace syncoll;
  fuzz::check_json_reader(data, size, [](const JsonView &root) {
    return study::study_from_json(root, "/nonexistent/syncoll-fuzz", true);
  });
  return 0;
}
