#include "backend/executor.h"

#include "backend/detail/run_data.h"
#include "model/collective_traits.h"

namespace syncoll::backend {
namespace {

struct DataTypeRow {
  DataType type;
  std::string_view name;
  int bytes;
};
constexpr DataTypeRow kDataTypes[] = {{DataType::I32, "i32", 4},
                                      {DataType::F32, "f32", 4},
                                      {DataType::F16, "f16", 2},
                                      {DataType::BF16, "bf16", 2}};

struct ReduceOpRow {
  ReduceOp op;
  std::string_view name;
};
constexpr ReduceOpRow kReduceOps[] = {{ReduceOp::Sum, "sum"},
                                      {ReduceOp::Prod, "prod"},
                                      {ReduceOp::Max, "max"},
                                      {ReduceOp::Min, "min"}};

} // namespace

std::optional<DataType> parse_data_type(std::string_view name) {
  for (const DataTypeRow &row : kDataTypes)
    if (row.name == name)
      return row.type;
  return std::nullopt;
}
std::string_view data_type_name(DataType type) {
  return kDataTypes[size_t(type)].name;
}
int data_type_bytes(DataType type) {
  return kDataTypes[size_t(type)].bytes;
}
std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (const ReduceOpRow &row : kReduceOps)
    if (row.name == name)
      return row.op;
  return std::nullopt;
}
std::string_view reduce_op_name(ReduceOp op) {
  return kReduceOps[size_t(op)].name;
}

Expected<int64_t> chunk_elements_for(const ExecutableProgram &program, const RunOptions &options) {
  const int element = data_type_bytes(options.type);
  const int chunks = nccl_tests_chunks(program.collective());
  if (options.size_bytes <= 0 || options.size_bytes % (int64_t(chunks) * element) != 0)
    return fail({}, fmt::format("size {} does not cut into {} chunks of whole {} elements",
                                options.size_bytes, chunks, data_type_name(options.type)));
  return options.size_bytes / chunks / element;
}

std::string detail::describe_wait(const ExecutableProgram &e, int block,
                                  const device::BlockStatus &s) {
  const device::Block &b = e.blocks()[size_t(block)];
  const device::Step &step = e.steps()[size_t(b.first_step + s.step)];
  auto connection = [&](int index) {
    const device::Connection &c = e.connections()[size_t(index)];
    return fmt::format("connection {}->{} channel {}", c.sender, c.receiver, c.channel);
  };
  switch (device::WaitKind(s.waiting)) {
  case device::kNotWaiting:
    return "running (not waiting)";
  case device::kWaitsFlag:
    return fmt::format("tb {}'s flag for step {}", e.blocks()[size_t(step.dependency_block)].tb,
                       step.dependency_step);
  case device::kWaitsMessage:
    return "a message on " + connection(b.recv_connection);
  case device::kWaitsRoom:
    return "room on " + connection(b.send_connection);
  }
  return "an unknown wait"; // a status the interpreter never writes
}

std::vector<BlockedBlock> detail::unfinished_blocks(const ExecutableProgram &e,
                                                    std::span<const device::BlockStatus> status,
                                                    std::optional<RankId> only) {
  std::vector<BlockedBlock> blocked;
  for (size_t b = 0; b < status.size(); ++b)
    if (!status[b].finished && (!only || only->value() == e.blocks()[b].rank))
      blocked.push_back({RankId(e.blocks()[b].rank), TbId(e.blocks()[b].tb), status[b].step,
                         status[b].iteration, describe_wait(e, int(b), status[b])});
  return blocked;
}

} // namespace syncoll::backend
