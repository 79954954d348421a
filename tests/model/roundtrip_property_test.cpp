// Round-trip properties: serialize, parse, serialize again gives the same bytes and the same
// value (docs/architecture.md, "Tests and benchmarks").
#include "model/json_document.h"
#include "model/mscclir.h"
#include "model/topology_json.h"
#include "testing/generators.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll {
namespace {

RC_GTEST_PROP(RoundTripProperty, TopologyThroughJson, ()) {
  const Topology t = *testing::gen_topology();
  const std::string first = to_canonical_json(topology_to_json(t));
  auto back = parse_topology_json(first, "random.json");
  RC_ASSERT(back.has_value());
  RC_ASSERT(*back == t);
  const std::string second = to_canonical_json(topology_to_json(*back));
  RC_ASSERT(second == first);
}

RC_GTEST_PROP(RoundTripProperty, ProgramThroughXml, ()) {
  const Program p = *testing::gen_program();
  const std::string first = program_to_mscclir_xml(p);
  auto back = parse_mscclir_xml(first, "random.xml");
  RC_ASSERT(back.has_value());
  RC_ASSERT(back->value == p);
  const std::string second = program_to_mscclir_xml(back->value);
  RC_ASSERT(second == first);
}

RC_GTEST_PROP(RoundTripProperty, ProgramThroughJson, ()) {
  const Program p = *testing::gen_program();
  const std::string first = to_canonical_json(program_to_json(p));
  auto doc = JsonDocument::parse(first, "random.json");
  RC_ASSERT(doc.has_value());
  auto back = program_from_json(doc->root());
  RC_ASSERT(back.has_value());
  RC_ASSERT(*back == p);
  RC_ASSERT(to_canonical_json(program_to_json(*back)) == first);
}

RC_GTEST_PROP(RoundTripProperty, XmlToJsonToXmlIsIdentity, ()) {
  const Program p = *testing::gen_program();
  const std::string xml = program_to_mscclir_xml(p);
  auto doc = JsonDocument::parse(to_canonical_json(program_to_json(p)), "p.json");
  RC_ASSERT(doc.has_value());
  auto via_json = program_from_json(doc->root());
  RC_ASSERT(via_json.has_value());
  RC_ASSERT(program_to_mscclir_xml(*via_json) == xml);
}

} // namespace
} // namespace syncoll
