// A study file (docs/study.md): the machines, collectives, sizes and algorithms a what-if study
// compares, written by hand in JSON and read with every error located (file:line:col).
#pragma once

#include "compose/factorize.h"
#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/program.h"
#include "nccl/tuning.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace syncoll {
class JsonView; // model/json_document.h
}

namespace syncoll::study {

/// One machine of the study: a system preset and what the study changes about it, or a family
/// of the topology library with its parameters. Zero (or empty) means the preset's or the
/// library's own value.
struct Machine {
  std::string system;   ///< a system preset; empty for a topology family
  std::string topology; ///< a library family (ring, torus2d, fat_tree, ...); empty for a system
  int nodes = 1;
  int gpus = 0;
  int nics = 0;            ///< NICs per node
  double nic_gbps = 0;     ///< one NIC's line rate
  double nvlink_scale = 1; ///< systems: NVLink line rate (and NCCL's view of it) times this
  // Topology families only.
  int ranks = 0;               ///< line, ring, fully_connected, star, hub_and_spoke
  int dims = 0;                ///< hypercube
  std::string shape;           ///< mesh2d, torus2d (WxH), torus3d, mesh3d (XxYxZ)
  std::string intra;           ///< multinode, fat_tree: the node's topology
  double oversubscription = 0; ///< fat_tree: leaf down/up bandwidth
  double link_gbps = 0;        ///< every link inside a node, per unit of its capacity
  double link_alpha_us = -1;   ///< every link inside a node; -1: the library's
  int link_multiplicity = 1;   ///< parallel links per link inside a node

  friend bool operator==(const Machine &, const Machine &) = default;
};

/// How one variant runs a collective.
enum class VariantKind {
  Nccl,     ///< NCCL as NCCL runs it: its own choice, or a forced algorithm and protocol
  Composed, ///< a hierarchical composition: the plan search, or one fixed plan
  Program,  ///< an MSCCL-IR program from a file, verified, then run as the MSCCL executor would
  Dsl,      ///< one of syncoll's DSL example programs, built for the machine, lowered, verified
  Synth,    ///< SCCL's Pareto frontier synthesized on the machine, each point lowered and verified
};

struct Variant {
  std::string name;   ///< unique: the written name, with " [protocol]" when the axis expanded it
  std::string family; ///< the name as written in the file
  VariantKind kind = VariantKind::Nccl;
  std::optional<nccl::NcclAlgorithm> algorithm; ///< Nccl: forced (NCCL_ALGO)
  /// Nccl: in-network reduction enabled (NCCL_COLLNET_ENABLE=1); a forced CollNet sets it.
  bool collnet = false;
  /// Nccl: forced (NCCL_PROTO); any other kind: its programs run in this protocol instead of
  /// their own.
  std::optional<Protocol> protocol;
  /// Composed: stripes, ring nodes and pipeline of one plan (factors: nodes x GPUs); none runs
  /// the plan search.
  std::optional<compose::Hierarchy> plan;
  std::string program_path; ///< Program: resolved against the study file's folder
  std::string program_text; ///< Program: the file's content (part of every point's identity)
  std::string example;      ///< Dsl: the example's name (syncoll lower --list)
  int instances = 1;        ///< Dsl: copies of the program on parallel channels
  double time_limit_s = 0;  ///< Synth: per solver call (0: none)
};

/// The heat map of the report: one metric of one variant over two machine axes.
struct Heatmap {
  std::string x, y; ///< machine axes: nodes, gpus, nics, nic_gbps, nvlink_scale
  std::string variant;
  CollectiveKind collective = CollectiveKind::Allreduce;
  int64_t size = 0;
  std::string metric; ///< busbw_gbps, time_us or speedup
};

struct Study {
  std::string name;
  std::string question;
  std::vector<Machine> machines; ///< every machine list entry expanded (its axes' product)
  std::vector<CollectiveKind> collectives;
  std::vector<int64_t> sizes;
  /// Every written variant without a protocol of its own, once per value of the file's
  /// "protocols" axis; with its own, once.
  std::vector<Variant> variants;
  std::string baseline; ///< the variant (family) speedups are over, at the point's protocol
  std::optional<Heatmap> heatmap;
};

/// Reads a study. With `quick`, the file's "quick" section replaces its machines and sizes (the
/// small run examples are tested with). Bad input comes back located.
[[nodiscard]] Expected<Study> read_study(const std::string &path, bool quick = false);
/// The same from a parsed study file (its document locates the diagnostics); files the study
/// names (programs, algorithms, compositions) are found relative to `folder`.
[[nodiscard]] Expected<Study>
study_from_json(const JsonView &root, const std::filesystem::path &folder, bool quick = false);

/// The machine axes a heat map may use: nodes, gpus, nics, nic_gbps, nvlink_scale, ranks,
/// oversubscription, link_gbps, link_alpha_us, link_multiplicity.
[[nodiscard]] std::optional<double> machine_axis(const Machine &machine, const std::string &axis);

} // namespace syncoll::study
