#include "model/mscclir.h"

#include "model/detail/xml_reader.h"
#include "model/invariant.h"
#include "model/json_document.h"

#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <pugixml.hpp>
#include <sstream>

namespace syncoll {
namespace {

using detail::XmlReader;

Expected<BufferRef> read_buffer_ref(const XmlReader &x, const pugi::xml_node &step,
                                    const char *buf_attr, const char *off_attr) {
  SYNCOLL_TRY(buf, x.string_attr(step, buf_attr));
  auto kind = parse_buffer_kind(buf);
  if (!kind)
    return fail(x.at(step, buf_attr),
                fmt::format("attribute '{}' must be i, o or s, found '{}'", buf_attr, buf));
  SYNCOLL_TRY(off, x.int_attr(step, off_attr, INT16_MIN, INT16_MAX));
  return BufferRef{*kind, static_cast<int>(off)};
}

// Reads one document element by element (header, gpu, tb, step), remembering every element in
// document order so Program::create's pointers resolve to text locations.
class MscclIrParser {
public:
  MscclIrParser(std::string_view text, const std::string &file) : x_(text, file) {}

  Expected<Warned<Program>> parse(const pugi::xml_node &algo) {
    ProgramDraft d;
    SYNCOLL_CHECK(read_header(algo, d));
    for (auto gpu : algo.children("gpu")) {
      SYNCOLL_TRY(rank, read_gpu(gpu));
      d.ranks.push_back(std::move(rank));
    }
    auto program = Program::create(std::move(d));
    if (!program) {
      Diagnostics diag = program.error();
      diag.resolve_pointers([&](const std::string &pointer) { return locate(algo, pointer); });
      return tl::unexpected(diag);
    }
    return Warned<Program>{*std::move(program), std::move(warnings_)};
  }

private:
  // <algo>: what the executor requires, and the old runtime's dialect with a warning.
  Expected<void> read_header(const pugi::xml_node &algo, ProgramDraft &d) {
    x_.warn_unknown_attributes(algo,
                               {"name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll",
                                "inplace", "outofplace", "minBytes", "maxBytes", "nthreads",
                                "redop"},
                               warnings_);
    SYNCOLL_CHECK(x_.only_children(algo, "gpu"));
    SYNCOLL_TRY(name, x_.string_attr(algo, "name"));
    d.name = name;
    SYNCOLL_TRY(proto, x_.string_attr(algo, "proto"));
    auto protocol = parse_protocol(proto);
    if (!protocol)
      return fail(x_.at(algo, "proto"),
                  fmt::format("unknown protocol '{}' (expected Simple, LL or LL128)", proto));
    d.protocol = *protocol;
    SYNCOLL_TRY(nchannels, x_.int_attr(algo, "nchannels", 1, 1 << 16));
    d.num_channels = static_cast<int>(nchannels);
    SYNCOLL_TRY(ncpl, x_.int_attr(algo, "nchunksperloop", 1, INT32_MAX));
    d.chunks_per_loop = static_cast<int>(ncpl);
    SYNCOLL_TRY(ngpus, x_.int_attr(algo, "ngpus", 1, kMaxRanks));
    d.num_ranks = static_cast<int>(ngpus);
    SYNCOLL_TRY(coll, x_.string_attr(algo, "coll"));
    auto coll_name = parse_ir_collective_name(coll);
    if (!coll_name)
      return fail(x_.at(algo, "coll"), fmt::format("unknown collective '{}'", coll));
    if (coll_name->old_runtime_spelling)
      warnings_.warning(x_.at(algo, "coll"),
                        coll == "custom"
                            ? std::string("collective 'custom' is the old runtime's; the executor "
                                          "does not accept it")
                            : fmt::format("collective '{}' is the old runtime's spelling; the "
                                          "executor spells it '{}'",
                                          coll, coll_name->canonical));
    d.collective = coll_name->canonical;
    SYNCOLL_TRY(inplace, x_.flag_attr(algo, "inplace"));
    d.in_place = inplace;
    if (algo.attribute("outofplace")) {
      SYNCOLL_TRY(oop, x_.flag_attr(algo, "outofplace"));
      d.out_of_place = oop;
    } else {
      d.out_of_place = !d.in_place;
      warnings_.warning(x_.at(algo),
                        fmt::format("<algo> has no 'outofplace' (old runtime dialect); taken as "
                                    "{}, and the executor rejects the file",
                                    d.out_of_place ? 1 : 0));
    }
    for (const char *attr : {"minBytes", "maxBytes"}) {
      if (!algo.attribute(attr)) {
        warnings_.warning(x_.at(algo), fmt::format("<algo> has no '{}' (old runtime dialect); "
                                                   "taken as 0, and the executor rejects the file",
                                                   attr));
        continue;
      }
      SYNCOLL_TRY(v, x_.int_attr(algo, attr, INT64_MIN, INT64_MAX));
      (std::string_view(attr) == "minBytes" ? d.min_bytes : d.max_bytes) = v;
    }
    if (algo.attribute("nthreads")) {
      SYNCOLL_TRY(nt, x_.int_attr(algo, "nthreads", INT32_MIN, INT32_MAX));
      d.num_threads = static_cast<int>(nt);
    }
    return {};
  }

  Expected<RankProgram> read_gpu(const pugi::xml_node &gpu) {
    x_.warn_unknown_attributes(gpu, {"id", "i_chunks", "o_chunks", "s_chunks"}, warnings_);
    SYNCOLL_CHECK(x_.only_children(gpu, "tb"));
    RankProgram rp;
    SYNCOLL_TRY(id, x_.int_attr(gpu, "id", INT32_MIN, INT32_MAX));
    rp.rank = RankId(static_cast<int32_t>(id));
    SYNCOLL_TRY(ic, x_.int_attr(gpu, "i_chunks", INT32_MIN, INT32_MAX));
    SYNCOLL_TRY(oc, x_.int_attr(gpu, "o_chunks", INT32_MIN, INT32_MAX));
    SYNCOLL_TRY(sc, x_.int_attr(gpu, "s_chunks", INT32_MIN, INT32_MAX));
    rp.input_chunks = static_cast<int>(ic);
    rp.output_chunks = static_cast<int>(oc);
    rp.scratch_chunks = static_cast<int>(sc);
    gpu_nodes_.push_back(gpu);
    tb_nodes_.emplace_back();
    step_nodes_.emplace_back();
    for (auto tbn : gpu.children("tb")) {
      SYNCOLL_TRY(tb, read_thread_block(tbn));
      rp.thread_blocks.push_back(std::move(tb));
    }
    return rp;
  }

  Expected<ThreadBlock> read_thread_block(const pugi::xml_node &tbn) {
    x_.warn_unknown_attributes(tbn, {"id", "send", "recv", "chan"}, warnings_);
    SYNCOLL_CHECK(x_.only_children(tbn, "step"));
    ThreadBlock tb;
    SYNCOLL_TRY(tid, x_.int_attr(tbn, "id", INT32_MIN, INT32_MAX));
    tb.id = TbId(static_cast<int32_t>(tid));
    SYNCOLL_TRY(send, x_.int_attr(tbn, "send", -1, INT32_MAX));
    SYNCOLL_TRY(recv, x_.int_attr(tbn, "recv", -1, INT32_MAX));
    if (send >= 0)
      tb.send_peer = RankId(static_cast<int32_t>(send));
    if (recv >= 0)
      tb.recv_peer = RankId(static_cast<int32_t>(recv));
    SYNCOLL_TRY(chan, x_.int_attr(tbn, "chan", INT32_MIN, INT32_MAX));
    tb.channel = ChannelId(static_cast<int32_t>(chan));
    tb_nodes_.back().push_back(tbn);
    step_nodes_.back().emplace_back();
    for (auto sn : tbn.children("step")) {
      SYNCOLL_TRY(in, read_step(sn));
      tb.steps.push_back(in);
      step_nodes_.back().back().push_back(sn);
    }
    return tb;
  }

  Expected<Instruction> read_step(const pugi::xml_node &sn) {
    x_.warn_unknown_attributes(
        sn, {"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep"},
        warnings_);
    Instruction in;
    SYNCOLL_TRY(s, x_.int_attr(sn, "s", INT32_MIN, INT32_MAX));
    in.declared_index = static_cast<int>(s);
    SYNCOLL_TRY(type, x_.string_attr(sn, "type"));
    auto op = parse_op_type(type);
    if (!op)
      return fail(x_.at(sn, "type"),
                  fmt::format("unknown step type '{}' (expected s, r, rcs, rrs, rrc, rrcs, cpy, "
                              "re or nop)",
                              type));
    in.op = *op;
    SYNCOLL_TRY(src, read_buffer_ref(x_, sn, "srcbuf", "srcoff"));
    SYNCOLL_TRY(dst, read_buffer_ref(x_, sn, "dstbuf", "dstoff"));
    in.src = src;
    in.dst = dst;
    SYNCOLL_TRY(cnt, x_.int_attr(sn, "cnt", INT32_MIN, INT32_MAX));
    in.count = static_cast<int>(cnt);
    SYNCOLL_TRY(depid, x_.int_attr(sn, "depid", INT32_MIN, INT32_MAX));
    SYNCOLL_TRY(deps, x_.int_attr(sn, "deps", INT32_MIN, INT32_MAX));
    if (depid < -1)
      return fail(x_.at(sn, "depid"), fmt::format("depid {} must be at least -1", depid));
    if (depid >= 0)
      in.dependency =
          Dependency{TbId(static_cast<int32_t>(depid)), StepIndex(static_cast<int32_t>(deps))};
    else if (deps != -1)
      warnings_.warning(x_.at(sn, "deps"),
                        fmt::format("deps {} is ignored because depid is -1", deps));
    SYNCOLL_TRY(hasdep, x_.flag_attr(sn, "hasdep"));
    in.has_dep = hasdep;
    return in;
  }

  // A Program::create pointer: /attr | /gpus | /gpus/G[/attr | /tbs/T[/attr | /steps/K[/attr]]].
  SourceLocation locate(const pugi::xml_node &algo, const std::string &pointer) const {
    std::vector<std::string> parts;
    std::stringstream ss(pointer.substr(1));
    for (std::string part; std::getline(ss, part, '/');)
      parts.push_back(part);
    pugi::xml_node node = algo;
    size_t g = 0, t = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      bool last = i + 1 == parts.size();
      auto index = [&] { return i + 1 < parts.size() ? std::stoul(parts[i + 1]) : 0; };
      if (parts[i] == "gpus" && !last) {
        g = index(), node = gpu_nodes_.at(g), ++i;
      } else if (parts[i] == "tbs" && !last) {
        t = index(), node = tb_nodes_.at(g).at(t), ++i;
      } else if (parts[i] == "steps" && !last) {
        node = step_nodes_.at(g).at(t).at(index()), ++i;
      } else if (last && parts[i] != "gpus") {
        return x_.at(node, parts[i]);
      }
    }
    return x_.at(node);
  }

  XmlReader x_;
  Diagnostics warnings_;
  std::vector<pugi::xml_node> gpu_nodes_;
  std::vector<std::vector<pugi::xml_node>> tb_nodes_;
  std::vector<std::vector<std::vector<pugi::xml_node>>> step_nodes_;
};

} // namespace

Expected<Warned<Program>> parse_mscclir_xml(std::string_view text, const std::string &file) {
  pugi::xml_document doc;
  SYNCOLL_CHECK(detail::parse_xml(doc, text, file));
  pugi::xml_node algo = doc.document_element();
  if (!algo)
    return fail({file, 1, 1}, "no <algo> element");
  MscclIrParser parser(text, file);
  if (std::string_view(algo.name()) != "algo")
    return fail(XmlReader(text, file).at(algo),
                fmt::format("root element is <{}>, expected <algo>", algo.name()));
  return parser.parse(algo);
}

std::string program_to_mscclir_xml(const Program &program) {
  const ProgramDraft &d = program.draft();
  pugi::xml_document doc;
  pugi::xml_node algo = doc.append_child("algo");
  algo.append_attribute("name") = d.name.c_str();
  algo.append_attribute("proto") = std::string(protocol_name(d.protocol)).c_str();
  algo.append_attribute("nchannels") = d.num_channels;
  algo.append_attribute("nchunksperloop") = d.chunks_per_loop;
  algo.append_attribute("ngpus") = d.num_ranks;
  algo.append_attribute("coll") = d.collective.c_str();
  algo.append_attribute("inplace") = d.in_place ? 1 : 0;
  algo.append_attribute("outofplace") = d.out_of_place ? 1 : 0;
  algo.append_attribute("minBytes") = static_cast<long long>(d.min_bytes);
  algo.append_attribute("maxBytes") = static_cast<long long>(d.max_bytes);
  if (d.num_threads)
    algo.append_attribute("nthreads") = *d.num_threads;
  for (const RankProgram &rp : d.ranks) {
    pugi::xml_node gpu = algo.append_child("gpu");
    gpu.append_attribute("id") = rp.rank.value();
    gpu.append_attribute("i_chunks") = rp.input_chunks;
    gpu.append_attribute("o_chunks") = rp.output_chunks;
    gpu.append_attribute("s_chunks") = rp.scratch_chunks;
    for (const ThreadBlock &tb : rp.thread_blocks) {
      pugi::xml_node tbn = gpu.append_child("tb");
      tbn.append_attribute("id") = tb.id.value();
      tbn.append_attribute("send") = tb.send_peer ? tb.send_peer->value() : -1;
      tbn.append_attribute("recv") = tb.recv_peer ? tb.recv_peer->value() : -1;
      tbn.append_attribute("chan") = tb.channel.value();
      for (const Instruction &in : tb.steps) {
        pugi::xml_node sn = tbn.append_child("step");
        sn.append_attribute("s") = in.declared_index;
        sn.append_attribute("type") = std::string(op_type_name(in.op)).c_str();
        sn.append_attribute("srcbuf") = std::string(buffer_kind_name(in.src.buffer)).c_str();
        sn.append_attribute("srcoff") = in.src.offset;
        sn.append_attribute("dstbuf") = std::string(buffer_kind_name(in.dst.buffer)).c_str();
        sn.append_attribute("dstoff") = in.dst.offset;
        sn.append_attribute("cnt") = in.count;
        sn.append_attribute("depid") = in.dependency ? in.dependency->tb.value() : -1;
        sn.append_attribute("deps") = in.dependency ? in.dependency->step.value() : -1;
        sn.append_attribute("hasdep") = in.has_dep ? 1 : 0;
      }
    }
  }
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent | pugi::format_no_declaration, pugi::encoding_utf8);
  return out.str();
}

Expected<Program> program_from_json(const JsonView &root) {
  SYNCOLL_CHECK(
      root.only_keys({"format", "name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll",
                      "inplace", "outofplace", "minBytes", "maxBytes", "nthreads", "gpus"}));
  if (auto format = root.optional_member("format")) {
    SYNCOLL_TRY(f, format->as_string());
    if (f != "syncoll-program")
      return format->error(fmt::format("expected format 'syncoll-program', found '{}'", f));
  }
  auto int_member = [](const JsonView &v, const char *key, int64_t min,
                       int64_t max) -> Expected<int64_t> {
    SYNCOLL_TRY(m, v.member(key));
    return m.as_int(min, max);
  };
  ProgramDraft d;
  SYNCOLL_TRY(name_v, root.member("name"));
  SYNCOLL_TRY(name, name_v.as_string());
  d.name = name;
  SYNCOLL_TRY(proto_v, root.member("proto"));
  SYNCOLL_TRY(proto, proto_v.as_string());
  auto protocol = parse_protocol(proto);
  if (!protocol)
    return proto_v.error(
        fmt::format("unknown protocol '{}' (expected Simple, LL or LL128)", proto));
  d.protocol = *protocol;
  SYNCOLL_TRY(nch, int_member(root, "nchannels", 1, 1 << 16));
  d.num_channels = static_cast<int>(nch);
  SYNCOLL_TRY(ncpl, int_member(root, "nchunksperloop", 1, INT32_MAX));
  d.chunks_per_loop = static_cast<int>(ncpl);
  SYNCOLL_TRY(ngpus, int_member(root, "ngpus", 1, kMaxRanks));
  d.num_ranks = static_cast<int>(ngpus);
  SYNCOLL_TRY(coll_v, root.member("coll"));
  SYNCOLL_TRY(coll, coll_v.as_string());
  d.collective = coll;
  SYNCOLL_TRY(ip_v, root.member("inplace"));
  SYNCOLL_TRY(ip, ip_v.as_bool());
  d.in_place = ip;
  SYNCOLL_TRY(oop_v, root.member("outofplace"));
  SYNCOLL_TRY(oop, oop_v.as_bool());
  d.out_of_place = oop;
  SYNCOLL_TRY(minb, int_member(root, "minBytes", INT64_MIN, INT64_MAX));
  d.min_bytes = minb;
  SYNCOLL_TRY(maxb, int_member(root, "maxBytes", INT64_MIN, INT64_MAX));
  d.max_bytes = maxb;
  if (auto nt = root.optional_member("nthreads")) {
    SYNCOLL_TRY(v, nt->as_int(INT32_MIN, INT32_MAX));
    d.num_threads = static_cast<int>(v);
  }
  SYNCOLL_TRY(gpus_v, root.member("gpus"));
  SYNCOLL_TRY(gpus, gpus_v.elements());
  for (const auto &gv : gpus) {
    SYNCOLL_CHECK(gv.only_keys({"id", "i_chunks", "o_chunks", "s_chunks", "tbs"}));
    RankProgram rp;
    SYNCOLL_TRY(id, int_member(gv, "id", INT32_MIN, INT32_MAX));
    rp.rank = RankId(static_cast<int32_t>(id));
    SYNCOLL_TRY(ic, int_member(gv, "i_chunks", INT32_MIN, INT32_MAX));
    SYNCOLL_TRY(oc, int_member(gv, "o_chunks", INT32_MIN, INT32_MAX));
    SYNCOLL_TRY(sc, int_member(gv, "s_chunks", INT32_MIN, INT32_MAX));
    rp.input_chunks = static_cast<int>(ic);
    rp.output_chunks = static_cast<int>(oc);
    rp.scratch_chunks = static_cast<int>(sc);
    SYNCOLL_TRY(tbs_v, gv.member("tbs"));
    SYNCOLL_TRY(tbs, tbs_v.elements());
    for (const auto &tv : tbs) {
      SYNCOLL_CHECK(tv.only_keys({"id", "send", "recv", "chan", "steps"}));
      ThreadBlock tb;
      SYNCOLL_TRY(tid, int_member(tv, "id", INT32_MIN, INT32_MAX));
      tb.id = TbId(static_cast<int32_t>(tid));
      SYNCOLL_TRY(send, int_member(tv, "send", -1, INT32_MAX));
      SYNCOLL_TRY(recv, int_member(tv, "recv", -1, INT32_MAX));
      if (send >= 0)
        tb.send_peer = RankId(static_cast<int32_t>(send));
      if (recv >= 0)
        tb.recv_peer = RankId(static_cast<int32_t>(recv));
      SYNCOLL_TRY(chan, int_member(tv, "chan", INT32_MIN, INT32_MAX));
      tb.channel = ChannelId(static_cast<int32_t>(chan));
      SYNCOLL_TRY(steps_v, tv.member("steps"));
      SYNCOLL_TRY(steps, steps_v.elements());
      for (const auto &sv : steps) {
        SYNCOLL_CHECK(sv.only_keys({"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt",
                                    "depid", "deps", "hasdep"}));
        Instruction in;
        SYNCOLL_TRY(s, int_member(sv, "s", INT32_MIN, INT32_MAX));
        in.declared_index = static_cast<int>(s);
        SYNCOLL_TRY(type_v, sv.member("type"));
        SYNCOLL_TRY(type, type_v.as_string());
        auto op = parse_op_type(type);
        if (!op)
          return type_v.error(fmt::format("unknown step type '{}'", type));
        in.op = *op;
        for (auto [ref, buf_key, off_key] :
             {std::tuple{&in.src, "srcbuf", "srcoff"}, std::tuple{&in.dst, "dstbuf", "dstoff"}}) {
          SYNCOLL_TRY(buf_v, sv.member(buf_key));
          SYNCOLL_TRY(buf, buf_v.as_string());
          auto kind = parse_buffer_kind(buf);
          if (!kind)
            return buf_v.error(fmt::format("'{}' must be i, o or s, found '{}'", buf_key, buf));
          SYNCOLL_TRY(off, int_member(sv, off_key, INT16_MIN, INT16_MAX));
          *ref = BufferRef{*kind, static_cast<int>(off)};
        }
        SYNCOLL_TRY(cnt, int_member(sv, "cnt", INT32_MIN, INT32_MAX));
        in.count = static_cast<int>(cnt);
        SYNCOLL_TRY(depid, int_member(sv, "depid", -1, INT32_MAX));
        SYNCOLL_TRY(deps, int_member(sv, "deps", INT32_MIN, INT32_MAX));
        if (depid >= 0)
          in.dependency =
              Dependency{TbId(static_cast<int32_t>(depid)), StepIndex(static_cast<int32_t>(deps))};
        SYNCOLL_TRY(hd_v, sv.member("hasdep"));
        SYNCOLL_TRY(hd, hd_v.as_bool());
        in.has_dep = hd;
        tb.steps.push_back(in);
      }
      rp.thread_blocks.push_back(std::move(tb));
    }
    d.ranks.push_back(std::move(rp));
  }
  auto program = Program::create(std::move(d));
  if (!program) {
    Diagnostics diag = program.error();
    diag.resolve_pointers([&](const std::string &p) { return root.location_of(p); });
    return tl::unexpected(diag);
  }
  return program;
}

ProgramFormat sniff_program_format(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{' ? ProgramFormat::Json
                                                               : ProgramFormat::Xml;
}

bool is_program_json(const JsonView &root) {
  return root.optional_member("gpus").has_value();
}

Expected<Warned<Program>> parse_program(std::string_view text, const std::string &file) {
  switch (sniff_program_format(text)) {
  case ProgramFormat::Xml:
    return parse_mscclir_xml(text, file);
  case ProgramFormat::Json: {
    SYNCOLL_TRY(doc, JsonDocument::parse(std::string(text), file));
    SYNCOLL_TRY(program, program_from_json(doc.root()));
    return Warned<Program>{std::move(program), {}};
  }
  }
  SYNCOLL_UNREACHABLE("unknown program format");
}

Expected<Warned<Program>> read_program_file(const std::string &path) {
  SYNCOLL_TRY(text, read_text_file(path));
  return parse_program(text, path);
}

nlohmann::ordered_json program_to_json(const Program &program) {
  const ProgramDraft &d = program.draft();
  nlohmann::ordered_json j;
  j["format"] = "syncoll-program";
  j["name"] = d.name;
  j["proto"] = std::string(protocol_name(d.protocol));
  j["nchannels"] = d.num_channels;
  j["nchunksperloop"] = d.chunks_per_loop;
  j["ngpus"] = d.num_ranks;
  j["coll"] = d.collective;
  j["inplace"] = d.in_place;
  j["outofplace"] = d.out_of_place;
  j["minBytes"] = d.min_bytes;
  j["maxBytes"] = d.max_bytes;
  if (d.num_threads)
    j["nthreads"] = *d.num_threads;
  auto gpus = nlohmann::ordered_json::array();
  for (const RankProgram &rp : d.ranks) {
    nlohmann::ordered_json g;
    g["id"] = rp.rank.value();
    g["i_chunks"] = rp.input_chunks;
    g["o_chunks"] = rp.output_chunks;
    g["s_chunks"] = rp.scratch_chunks;
    auto tbs = nlohmann::ordered_json::array();
    for (const ThreadBlock &tb : rp.thread_blocks) {
      nlohmann::ordered_json t;
      t["id"] = tb.id.value();
      t["send"] = tb.send_peer ? tb.send_peer->value() : -1;
      t["recv"] = tb.recv_peer ? tb.recv_peer->value() : -1;
      t["chan"] = tb.channel.value();
      auto steps = nlohmann::ordered_json::array();
      for (const Instruction &in : tb.steps) {
        nlohmann::ordered_json s;
        s["s"] = in.declared_index;
        s["type"] = std::string(op_type_name(in.op));
        s["srcbuf"] = std::string(buffer_kind_name(in.src.buffer));
        s["srcoff"] = in.src.offset;
        s["dstbuf"] = std::string(buffer_kind_name(in.dst.buffer));
        s["dstoff"] = in.dst.offset;
        s["cnt"] = in.count;
        s["depid"] = in.dependency ? in.dependency->tb.value() : -1;
        s["deps"] = in.dependency ? in.dependency->step.value() : -1;
        s["hasdep"] = in.has_dep;
        steps.push_back(std::move(s));
      }
      t["steps"] = std::move(steps);
      tbs.push_back(std::move(t));
    }
    g["tbs"] = std::move(tbs);
    gpus.push_back(std::move(g));
  }
  j["gpus"] = std::move(gpus);
  return j;
}

} // namespace syncoll
