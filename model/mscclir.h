// MSCCL-IR XML (the executor dialect, docs/formats.md, "MSCCL-IR XML") and the same
// structure as JSON (docs/formats.md), for Program.
#pragma once

#include "model/program.h"

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace syncoll {

class JsonView; // model/json_document.h

/// Reads MSCCL-IR XML as the executor's parser does: what it rejects is an error located at the
/// element or attribute; the old runtime's dialect (reduce_scatter, custom, no minBytes, maxBytes
/// or outofplace) is accepted with a warning, because the executor would refuse the file.
[[nodiscard]] Expected<Warned<Program>> parse_mscclir_xml(std::string_view text,
                                                          const std::string &file_name);
/// Writes the executor dialect: every attribute, fixed attribute order, two-space indentation.
std::string program_to_mscclir_xml(const Program &program);

[[nodiscard]] Expected<Program> program_from_json(const JsonView &root);
nlohmann::ordered_json program_to_json(const Program &program);

/// The two forms of a program file.
enum class ProgramFormat { Xml, Json };
/// XML when the first non-blank character is '<', JSON when it is '{' (XML otherwise, so the
/// XML reader reports what is wrong).
ProgramFormat sniff_program_format(std::string_view text);
/// Whether a JSON document is a program (it has "gpus") rather than, say, an algorithm.
bool is_program_json(const JsonView &root);
/// A program in either form, told apart by its content: every command reads programs this way.
[[nodiscard]] Expected<Warned<Program>> parse_program(std::string_view text,
                                                      const std::string &file_name);
[[nodiscard]] Expected<Warned<Program>> read_program_file(const std::string &path);

} // namespace syncoll
