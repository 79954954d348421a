// A topology dump's NICs as NCCL's paths class them: how near each NIC's GPUs are (PIX, PXB, PHB,
// P2C, SYS), whether NCCL sends through it with GPUDirect RDMA, and what the widest of them
// leaves NCCL's protocols across nodes.
#include "nccl/run.h"
#include "nccl/topo_xml.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <string>

namespace syncoll::nccl {
namespace {

XmlMachine read_example(const std::string &name) {
  auto m = read_nccl_topology_file(std::string(SYNCOLL_SOURCE_DIR) + "/examples/nccl_topo/" + name);
  EXPECT_TRUE(m) << m.error().to_string();
  return m ? *std::move(m) : XmlMachine{};
}

XmlMachine read_text(const std::string &xml) {
  auto m = read_nccl_topology_xml(xml, "node.xml", "node");
  EXPECT_TRUE(m) << m.error().to_string() << "\n" << xml;
  return m ? *std::move(m) : XmlMachine{};
}

// A PCIe switch's bridge: Broadcom's PEX Gen5 (vendor 0x1000 device 0xc030 subsystem 0x1000),
// which NCCL fuses with its sub-switches, or another vendor's (0x10b5, PLX's), which it does not.
std::string bridge(const std::string &busid, bool broadcom) {
  return fmt::format(R"(<pci busid="{}" class="0x060400" vendor="{}" device="{}" )"
                     R"(subsystem_vendor="{}" subsystem_device="0x0000" )"
                     R"(link_speed="32.0 GT/s PCIe" link_width="16">)",
                     busid, broadcom ? "0x1000" : "0x10b5", broadcom ? "0xc030" : "0x8796",
                     broadcom ? "0x1000" : "0x10b5");
}

std::string gpu_function(int dev) {
  return fmt::format(
      R"(<pci busid="0000:{:02x}:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" )"
      R"(link_width="16"><gpu dev="{}" sm="90" rank="{}" gdr="1">)"
      R"(<nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu></pci>)",
      0x18 + dev, dev, dev);
}

std::string nic_function(int dev, int gdr = 1) {
  return fmt::format(
      R"(<pci busid="0000:{:02x}:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" )"
      R"(link_width="16"><nic><net name="mlx5_{}" dev="{}" speed="400000" port="1" )"
      R"(gdr="{}"/></nic></pci>)",
      0x80 + dev, dev, dev, gdr);
}

std::string cpu(int numa, const std::string &inside) {
  return fmt::format(R"(<cpu numaid="{}" arch="x86_64" vendor="GenuineIntel" familyid="6" )"
                     R"(modelid="143">{}</cpu>)",
                     numa, inside);
}

std::string system(const std::string &inside) {
  return R"(<system version="1">)" + inside + "</system>";
}

// One GPU and one NIC, each under its own sub-switch of one switch.
std::string two_level_switch(bool broadcom) {
  return system(cpu(0, bridge("0000:10:00.0", broadcom) + bridge("0000:11:00.0", broadcom) +
                           gpu_function(0) + "</pci>" + bridge("0000:12:00.0", broadcom) +
                           nic_function(0) + "</pci></pci>"));
}

TEST(NcclNicPathTest, ANicsPathIsNcclsTypeOfTheRouteFromItsNearestGpus) {
  // Under one switch: PIX, with GPUDirect RDMA.
  const XmlMachine h100 = read_example("dgx_h100.xml");
  for (const XmlNic &n : h100.nics) {
    EXPECT_EQ(n.path, NcclPathType::Pix) << n.name;
    EXPECT_TRUE(n.gpu_direct) << n.name;
  }
  EXPECT_EQ(nccl_nic_path(h100), NcclPathType::Pix);
  // Broadcom's two levels are one switch to NCCL; another vendor's are two (PXB), still near
  // enough for GPUDirect RDMA.
  const XmlMachine broadcom = read_text(two_level_switch(true));
  ASSERT_EQ(broadcom.nics.size(), 1u);
  EXPECT_EQ(broadcom.nics[0].path, NcclPathType::Pix);
  const XmlMachine plx = read_text(two_level_switch(false));
  ASSERT_EQ(plx.nics.size(), 1u);
  EXPECT_EQ(plx.nics[0].path, NcclPathType::Pxb);
  EXPECT_TRUE(plx.nics[0].gpu_direct);
  // Through the CPU's root complex: PHB, too far for GPUDirect RDMA by NCCL_NET_GDR_LEVEL's
  // default, whatever both flags say; from another socket SYS.
  const XmlMachine root_ports = read_text(system(cpu(0, gpu_function(0) + nic_function(0))));
  ASSERT_EQ(root_ports.nics.size(), 1u);
  EXPECT_EQ(root_ports.nics[0].path, NcclPathType::Phb);
  EXPECT_FALSE(root_ports.nics[0].gpu_direct);
  const XmlMachine two_sockets =
      read_text(system(cpu(0, gpu_function(0)) + cpu(1, nic_function(0))));
  ASSERT_EQ(two_sockets.nics.size(), 1u);
  EXPECT_EQ(two_sockets.nics[0].path, NcclPathType::Sys);
  EXPECT_EQ(two_sockets.nics[0].nearest_ranks, std::vector<int>{0});
  EXPECT_EQ(nccl_nic_path(two_sockets), NcclPathType::Sys);
  // A Grace GPU reaches the NICs on its CPU over C2C: P2C, with GPUDirect RDMA.
  const XmlMachine tray = read_example("gb200_tray.xml");
  ASSERT_FALSE(tray.nics.empty());
  for (const XmlNic &n : tray.nics) {
    EXPECT_EQ(n.path, NcclPathType::P2c) << n.name;
    EXPECT_TRUE(n.gpu_direct) << n.name;
  }
  // A NIC whose own flag says no has none, however near.
  const XmlMachine no_flag = read_text(system(
      cpu(0, bridge("0000:10:00.0", true) + gpu_function(0) + nic_function(0, 0) + "</pci>")));
  ASSERT_EQ(no_flag.nics.size(), 1u);
  EXPECT_EQ(no_flag.nics[0].path, NcclPathType::Pix);
  EXPECT_FALSE(no_flag.nics[0].gpu_direct);
}

// NCCL takes a NIC without a speed, or with 0 or -1 (a VM's virtual function reports it), at
// 10 Gb/s; a speed below -1 is no NIC's and an error at the attribute.
TEST(NcclNicPathTest, ANicWithoutASpeedRunsAtNcclsTenGigabits) {
  for (const char *speed : {R"( speed="-1")", R"( speed="0")", ""}) {
    const std::string xml =
        system(cpu(0, gpu_function(0) +
                          R"(<pci busid="0000:90:00.0" class="0x020000"><nic><net name="eth0" )"
                          R"(dev="0")" +
                          std::string(speed) + R"( gdr="0"/></nic></pci>)"));
    const XmlMachine m = read_text(xml);
    ASSERT_EQ(m.nics.size(), 1u) << speed;
    EXPECT_DOUBLE_EQ(m.nics[0].gbps, 1.25) << speed;
  }
  const std::string bad = system(cpu(0, gpu_function(0) + R"(<pci busid="0000:90:00.0" )"
                                                          R"(class="0x020000"><nic><net dev="0" )"
                                                          R"(speed="-2"/></nic></pci>)"));
  auto m = read_nccl_topology_xml(bad, "node.xml", "node");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().to_string().find("node.xml:1:"), std::string::npos) << m.error().to_string();
  EXPECT_NE(m.error().to_string().find("'speed'"), std::string::npos) << m.error().to_string();
}

// Eight H100 behind NVSwitch (the library's dgx_h100 node), each with a 400 Gb/s NIC: in its own
// PCIe switch as on the metal, or, as a cloud VM's dump shows them where the hypervisor hides
// the switches, every GPU and NIC on the CPU's root ports.
std::string hgx_h100(bool switches) {
  std::string inside;
  for (int g = 0; g < 8; ++g) {
    const std::string pair = gpu_function(g) + nic_function(g);
    inside +=
        switches ? bridge(fmt::format("0000:{:02x}:00.0", 0x40 + g), true) + pair + "</pci>" : pair;
  }
  return system(cpu(0, inside));
}

std::optional<Protocol> nccl_protocol_at_1mib_on_two_nodes(const XmlMachine &machine) {
  auto dumped = system_of_dump(machine, "node.xml");
  if (!dumped) {
    ADD_FAILURE() << dumped.error().to_string();
    return std::nullopt;
  }
  EXPECT_EQ(dumped->preset.node_topology, "dgx_h100");
  auto two = nccl_system(dumped->preset, 2);
  if (!two) {
    ADD_FAILURE() << two.error().to_string();
    return std::nullopt;
  }
  auto run = simulate_nccl(CollectiveKind::Allreduce, 1 << 20, two->system, two->nccl, {});
  if (!run) {
    ADD_FAILURE() << run.error().to_string();
    return std::nullopt;
  }
  return run->choice.protocol;
}

// NCCL leaves LL128 off across nodes where its GPUs reach their NICs no nearer than PHB (from
// Hopper on it allows up to PXN): the same node dumped as a VM shows it runs a 1 MiB AllReduce
// across two nodes without LL128, where the metal's dump runs LL128.
TEST(NcclNicPathTest, NicsOnTheRootComplexLeaveLl128OffAcrossNodes) {
  const XmlMachine metal = read_text(hgx_h100(true));
  const XmlMachine vm = read_text(hgx_h100(false));
  EXPECT_EQ(nccl_nic_path(metal), NcclPathType::Pix);
  EXPECT_EQ(nccl_nic_path(vm), NcclPathType::Phb);
  auto vm_system = system_of_dump(vm, "vm.xml");
  ASSERT_TRUE(vm_system) << vm_system.error().to_string();
  EXPECT_EQ(vm_system->preset.nic_path, NcclPathType::Phb);
  EXPECT_EQ(nccl_protocol_at_1mib_on_two_nodes(metal), Protocol::LL128);
  const std::optional<Protocol> on_vm = nccl_protocol_at_1mib_on_two_nodes(vm);
  ASSERT_TRUE(on_vm);
  EXPECT_NE(*on_vm, Protocol::LL128);
  // One node has no NIC path: the VM's dump runs as the metal's.
  auto one = nccl_system(vm_system->preset, 1);
  ASSERT_TRUE(one) << one.error().to_string();
  EXPECT_EQ(one->nccl.ring.type_inter, NcclPathType::Pix);
}

} // namespace
} // namespace syncoll::nccl
