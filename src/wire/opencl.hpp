// Remote OpenCL as it travels: the operations a client's ICD (shims/opencl) streams to a server's
// `opencl` service, one struct per operation. This file is the operations' one table: each struct
// lists its fields once (OB_FIELDS), and the encoding, decoding and bounds checks of every
// operation come from that list (opencl.cpp); its place in the ClOp variant is its code.
//
// Objects are named by ids. The server assigns its platforms' and devices' ids (below
// kFirstClientId, in GetPlatforms' answer); every other object's id is picked by the client when it
// makes the object (at or above kFirstClientId, never reused within a session), so creating an
// object never waits for an answer. Ids are scoped to the session: one session can never name
// another's objects. An operation naming an id the session does not hold, or one of the wrong
// kind, fails with CL_INVALID_* and touches nothing.
//
// Which operations are answered (ClRequest::call_id != 0) is the client's choice; the server
// answers those with a ClReply, and reports a failure of an unanswered one as a ClNotice.
// Completion of commands that name an event is reported as ClNotice{event_status}.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace outboard::wire {

class Reader;
class Writer;

using ClId = uint64_t;
inline constexpr ClId kFirstClientId = ClId(1) << 32;

// Bounds every decoded operation obeys (a peer's message is untrusted input).
inline constexpr size_t kMaxClList = 4096;        // ids in a list (devices, wait lists, properties)
inline constexpr size_t kMaxClBlob = 64 * 1024;   // an inline byte string (argument values, patterns, info)
inline constexpr size_t kMaxClText = 64 * 1024;   // build options, kernel names
inline constexpr uint64_t kMaxClPayload = uint64_t(1) << 40;

// Declares the fields of an operation, in encoding order.
#define OB_FIELDS(...)                                     \
  auto fields() { return std::tie(__VA_ARGS__); }         \
  auto fields() const { return std::tie(__VA_ARGS__); }

using ClBlob = std::vector<std::byte>;
using ClIds = std::vector<ClId>;
using ClWords = std::vector<uint64_t>;
using ClSizes = std::array<uint64_t, 3>;

// ---- platforms and devices ----
struct ClGetPlatforms {  // answered: ClReply payload = encode_snapshot()
  OB_FIELDS()
};
// Answered: one info value. `what` selects the family (the client answers platform, device,
// context, queue, memory, sampler and event questions itself; these need the server).
enum class ClInfo : uint8_t { program, program_build, kernel, kernel_work_group, kernel_arg, count_ };
struct ClGetInfo {
  uint8_t what = 0;
  ClId object = 0;
  ClId device = 0;   // program_build, kernel_work_group
  uint32_t param = 0;
  uint32_t index = 0;  // kernel_arg
  OB_FIELDS(what, object, device, param, index)
};

// ---- contexts, queues, memory, samplers ----
struct ClCreateContext {
  ClId id = 0;
  ClIds devices;
  ClWords properties;  // name/value pairs without the 0; CL_CONTEXT_PLATFORM's value is a platform id
  OB_FIELDS(id, devices, properties)
};
struct ClCreateQueue {
  ClId id = 0, context = 0, device = 0;
  ClWords properties;  // clCreateCommandQueueWithProperties' name/value pairs, without the 0
  OB_FIELDS(id, context, device, properties)
};
// Payload: the initial contents (flags with CL_MEM_COPY_HOST_PTR or CL_MEM_USE_HOST_PTR, which the
// server turns into a copy: the client keeps the host memory in step itself).
struct ClCreateBuffer {
  ClId id = 0, context = 0;
  uint64_t flags = 0, size = 0;
  OB_FIELDS(id, context, flags, size)
};
struct ClCreateSubBuffer {
  ClId id = 0, parent = 0;
  uint64_t flags = 0, origin = 0, size = 0;
  OB_FIELDS(id, parent, flags, origin, size)
};
struct ClCreateImage {  // payload: the initial contents, packed (row pitch = width * element size)
  ClId id = 0, context = 0;
  uint64_t flags = 0;
  uint32_t channel_order = 0, channel_type = 0, type = 0;
  uint64_t width = 0, height = 0, depth = 0, array_size = 0;
  ClId buffer = 0;  // CL_MEM_OBJECT_IMAGE1D_BUFFER
  OB_FIELDS(id, context, flags, channel_order, channel_type, type, width, height, depth, array_size, buffer)
};
struct ClCreateSampler {
  ClId id = 0, context = 0;
  ClWords properties;  // clCreateSamplerWithProperties' pairs, without the 0
  OB_FIELDS(id, context, properties)
};
// Answered with the image formats as (order, type) pairs of u32 in the reply's data.
struct ClGetImageFormats {
  ClId context = 0;
  uint64_t flags = 0;
  uint32_t type = 0;
  OB_FIELDS(context, flags, type)
};

// ---- programs and kernels ----
struct ClCreateProgramSource {  // payload: the source text
  ClId id = 0, context = 0;
  OB_FIELDS(id, context)
};
// Payload: the binaries one after another, `sizes` long. Answered: per-device binary status
// (int32 each) in the reply's data.
struct ClCreateProgramBinary {
  ClId id = 0, context = 0;
  ClIds devices;
  ClWords sizes;
  OB_FIELDS(id, context, devices, sizes)
};
struct ClCreateProgramBuiltIn {
  ClId id = 0, context = 0;
  ClIds devices;
  std::string names;
  OB_FIELDS(id, context, devices, names)
};
// Build, compile and link are answered (when done) with the program's kernels (encode_kernels).
enum class ClBuildStep : uint8_t { build, compile, link, count_ };
struct ClBuildProgram {
  uint8_t step = 0;
  ClId program = 0;     // build, compile: the program; link: the new program's id
  ClId context = 0;     // link
  ClIds devices;
  std::string options;
  ClIds inputs;         // compile: header programs; link: the programs linked
  std::vector<std::string> header_names;  // compile: one per header program
  OB_FIELDS(step, program, context, devices, options, inputs, header_names)
};
struct ClCreateKernel {
  ClId id = 0, program = 0;
  std::string name;
  OB_FIELDS(id, program, name)
};
struct ClCloneKernel {
  ClId id = 0, source = 0;
  OB_FIELDS(id, source)
};

// ---- events ----
struct ClCreateUserEvent {
  ClId id = 0, context = 0;
  OB_FIELDS(id, context)
};
struct ClSetUserEventStatus {
  ClId event = 0;
  int32_t status = 0;
  OB_FIELDS(event, status)
};
// The client's last reference to an object is gone.
struct ClRelease {
  ClId id = 0;
  OB_FIELDS(id)
};

// ---- commands (every one: its queue, the events it waits for, and its event id or 0) ----
struct ClCommand {
  ClId queue = 0;
  ClIds wait;
  ClId event = 0;
  OB_FIELDS(queue, wait, event)
};
// Buffer and image transfers. A rectangle is given by origins and a region in bytes (buffers) or
// pixels (images) and pitches; a plain buffer transfer is a 1-D region. Write: payload = the data
// packed. Read: answered with the data packed as the reply's payload.
struct ClRegion {
  ClSizes origin{}, region{};
  uint64_t row_pitch = 0, slice_pitch = 0;
  OB_FIELDS(origin, region, row_pitch, slice_pitch)
};
struct ClWrite {
  ClCommand cmd;
  ClId mem = 0;
  ClRegion at;
  OB_FIELDS(cmd, mem, at)
};
struct ClRead {
  ClCommand cmd;
  ClId mem = 0;
  ClRegion at;
  OB_FIELDS(cmd, mem, at)
};
struct ClCopy {  // buffer/image to buffer/image
  ClCommand cmd;
  ClId src = 0, dst = 0;
  ClRegion from, to;
  OB_FIELDS(cmd, src, dst, from, to)
};
struct ClFill {
  ClCommand cmd;
  ClId mem = 0;
  ClBlob pattern;  // a buffer's pattern, or an image's fill colour (16 bytes)
  ClRegion at;
  OB_FIELDS(cmd, mem, pattern, at)
};
struct ClMigrate {
  ClCommand cmd;
  ClIds mems;
  uint64_t flags = 0;
  OB_FIELDS(cmd, mems, flags)
};
// A kernel argument as set when the command was enqueued.
enum class ClArgKind : uint8_t { value, mem, local, sampler, none, count_ };
struct ClArg {
  uint32_t index = 0;
  uint8_t kind = 0;
  ClId object = 0;      // mem, sampler (0 with kind mem: a NULL buffer)
  uint64_t local_bytes = 0;
  ClBlob value;
  OB_FIELDS(index, kind, object, local_bytes, value)
};
struct ClNDRange {
  ClCommand cmd;
  ClId kernel = 0;
  uint32_t dims = 0;
  ClSizes offset{}, global{}, local{};
  bool local_given = false;
  std::vector<ClArg> args;  // every argument (the kernel's state travels with each launch)
  OB_FIELDS(cmd, kernel, dims, offset, global, local, local_given, args)
};
struct ClMarker {  // marker (wait list or all before), or barrier
  ClCommand cmd;
  bool barrier = false;
  OB_FIELDS(cmd, barrier)
};
// Answered once every command enqueued before it on the queue has completed.
struct ClFinish {
  ClId queue = 0;
  OB_FIELDS(queue)
};
struct ClFlush {
  ClId queue = 0;
  OB_FIELDS(queue)
};

// ---- added after the first version (new codes at the end) ----
// Partitions a device (a root device or a sub-device of the session). The client reserves
// max_count ids from first_id; the sub-devices made take them in order. Answered: their
// descriptions (encode_cl(ClDeviceList)), CL_DEVICE_PARENT_DEVICE holding the parent's id.
struct ClCreateSubDevices {
  ClId first_id = 0;
  uint32_t max_count = 0;
  ClId device = 0;
  ClWords properties;  // the partition properties without the final 0
  OB_FIELDS(first_id, max_count, device, properties)
};
struct ClCreatePipe {
  ClId id = 0, context = 0;
  uint64_t flags = 0;
  uint32_t packet_size = 0, max_packets = 0;
  OB_FIELDS(id, context, flags, packet_size, max_packets)
};
struct ClCreateProgramIL {  // payload: the intermediate language (SPIR-V)
  ClId id = 0, context = 0;
  OB_FIELDS(id, context)
};
// Answered: one clGetKernelSubGroupInfo value; `input` is the query's input (sizes or a count).
struct ClGetSubGroupInfo {
  ClId kernel = 0, device = 0;
  uint32_t param = 0;
  ClWords input;
  OB_FIELDS(kernel, device, param, input)
};
// Answered: the device's timer and its host's, two u64 in the reply's data (host_only: the host's).
struct ClGetTimers {
  ClId device = 0;
  bool host_only = false;
  OB_FIELDS(device, host_only)
};
// Answered: clSetProgramSpecializationConstant's status, the platform's own. `value`: the
// constant's `size` bytes, where the caller gave a value (`given`).
struct ClSetSpecConstant {
  ClId program = 0;
  uint32_t spec_id = 0;
  uint64_t size = 0;
  bool given = false;
  ClBlob value;
  OB_FIELDS(program, spec_id, size, given, value)
};

// Large buffer transfers on the direct path (server/direct.hpp): the server's copy lanes move the
// data straight between its staging memory and the client's memory [address, address + size),
// which the client registered for this transfer (`key`: the packed remote key, 1 ..
// kMaxClKeyBytes), in pieces that overlap the device's copies. Only for a client whose
// LanesRequest the server answered with lanes. Both are answered (call_id != 0), without payload:
// a read once all of its data is in the client's memory, a write once the lanes have taken all of
// it (the command itself completes later, as its event says). `offset` and `size` are the
// buffer's bytes, as clEnqueueReadBuffer's.
inline constexpr size_t kMaxClKeyBytes = 4096;
struct ClDirectRead {
  ClCommand cmd;
  ClId mem = 0;
  uint64_t offset = 0, size = 0;
  ClBlob key;
  uint64_t address = 0;
  OB_FIELDS(cmd, mem, offset, size, key, address)
};
struct ClDirectWrite {
  ClCommand cmd;
  ClId mem = 0;
  uint64_t offset = 0, size = 0;
  ClBlob key;
  uint64_t address = 0;
  OB_FIELDS(cmd, mem, offset, size, key, address)
};

// The operations; the index of each alternative is its code on the wire (append only).
using ClOp = std::variant<ClGetPlatforms, ClGetInfo, ClCreateContext, ClCreateQueue, ClCreateBuffer,
                          ClCreateSubBuffer, ClCreateImage, ClCreateSampler, ClGetImageFormats,
                          ClCreateProgramSource, ClCreateProgramBinary, ClCreateProgramBuiltIn, ClBuildProgram,
                          ClCreateKernel, ClCloneKernel, ClCreateUserEvent, ClSetUserEventStatus, ClRelease,
                          ClWrite, ClRead, ClCopy, ClFill, ClMigrate, ClNDRange, ClMarker, ClFinish, ClFlush,
                          ClCreateSubDevices, ClCreatePipe, ClCreateProgramIL, ClGetSubGroupInfo, ClGetTimers,
                          ClDirectRead, ClDirectWrite, ClSetSpecConstant>;
const char* op_name(const ClOp& op);

// ---- messages (wire/messages.hpp lists them in its Message variant) ----
// Across a link a session's large data travels over its lanes (wire::JoinSession), several
// connections at once, instead of in queue order on its own connection:
// - a write's data as ClChunks of a transfer the ClRequest names (lane_transfer, lane_bytes); the
//   server holds the command, and every later one of its session, until all of them have arrived;
// - a read's result, where the ClRequest asks (reply_over_lanes), as ReplyChunks (call_id = the
//   request's) beside a ClReply whose lane_bytes counts them.
// Transfer ids increase with each ClRequest that names one (never reused within a session).
struct ClRequest {  // client -> server
  uint64_t call_id = 0;  // 0: not answered
  ClOp op;
  uint64_t payload_bytes = 0;
  uint64_t lane_transfer = 0;     // nonzero: the op's data comes in this transfer's ClChunks, not as payload
  uint64_t lane_bytes = 0;        // ... that many bytes (nonzero exactly when lane_transfer is)
  bool reply_over_lanes = false;  // the result's payload may come as ReplyChunks (answered ops only)
};
struct ClReply {  // server -> client
  uint64_t call_id = 0;
  int32_t status = 0;  // CL_SUCCESS or the CL error code
  ClBlob data;         // small results
  uint64_t payload_bytes = 0;  // large results (read data, build results, binaries)
  uint64_t lane_bytes = 0;     // or as ReplyChunks over the lanes (asked by reply_over_lanes), that many
};
// One piece of a write's data over a lane: bytes [chunk_index * chunk_bytes, + chunk_length) of
// transfer `transfer`'s payload_bytes.
struct ClChunk {  // client -> server
  uint64_t transfer = 0;
  uint64_t payload_bytes = 0;  // of the whole transfer (its ClRequest's lane_bytes)
  uint64_t chunk_bytes = 0;    // at least kMinChunkBytes
  uint64_t chunk_index = 0;    // below chunk_count(payload_bytes, chunk_bytes)
};
enum class ClNoticeKind : uint8_t { event_status, failed, context_error, count_ };
struct ClNotice {  // server -> client, unasked
  uint8_t kind = 0;
  ClId object = 0;         // the event; the object or queue whose command failed; the context
  int32_t status = 0;      // CL_COMPLETE or the (negative) error
  std::array<uint64_t, 4> profile{};  // queued, submitted, start, end (ns; zero when not profiled)
  std::string message;     // failed, context_error: what happened
};

void encode_body(Writer& w, const ClRequest& m);
void encode_body(Writer& w, const ClReply& m);
void encode_body(Writer& w, const ClNotice& m);
void encode_body(Writer& w, const ClChunk& m);
ClRequest decode_cl_request(Reader& r);
ClReply decode_cl_reply(Reader& r);
ClNotice decode_cl_notice(Reader& r);
ClChunk decode_cl_chunk(Reader& r);

// ---- bulk results (payloads) ----
// The server's platforms and devices: every info value the client answers from, by param name.
// Values naming platforms or devices (CL_DEVICE_PLATFORM, CL_DEVICE_PARENT_DEVICE) hold ids.
struct ClInfoValue {
  uint32_t param = 0;
  ClBlob value;
  OB_FIELDS(param, value)
};
struct ClDeviceEntry {
  ClId id = 0;
  std::vector<ClInfoValue> info;
  OB_FIELDS(id, info)
};
struct ClPlatformEntry {
  ClId id = 0;
  std::vector<ClInfoValue> info;
  std::vector<ClDeviceEntry> devices;
  OB_FIELDS(id, info, devices)
};
struct ClSnapshot {
  std::vector<ClPlatformEntry> platforms;
  OB_FIELDS(platforms)
};
struct ClDeviceList {  // ClCreateSubDevices' answer
  std::vector<ClDeviceEntry> devices;
  OB_FIELDS(devices)
};
// A built program's kernels, for the client's own checks of clCreateKernel and clSetKernelArg.
struct ClKernelArgInfo {
  uint32_t address = 0;   // CL_KERNEL_ARG_ADDRESS_QUALIFIER (0 when unknown)
  uint32_t access = 0;
  uint64_t type_qualifier = 0;
  std::string type_name, name;  // empty when unknown
  OB_FIELDS(address, access, type_qualifier, type_name, name)
};
struct ClKernelEntry {
  std::string name;
  std::vector<ClKernelArgInfo> args;
  OB_FIELDS(name, args)
};
struct ClBuildResult {
  std::vector<ClKernelEntry> kernels;
  OB_FIELDS(kernels)
};
std::vector<std::byte> encode_cl(const ClSnapshot& s);
std::vector<std::byte> encode_cl(const ClBuildResult& b);
std::vector<std::byte> encode_cl(const ClDeviceList& d);
// Throw ProtocolError on anything but exactly one well-formed value within the bounds above.
ClSnapshot decode_cl_snapshot(std::span<const std::byte> bytes);
ClBuildResult decode_cl_build_result(std::span<const std::byte> bytes);
ClDeviceList decode_cl_device_list(std::span<const std::byte> bytes);

}  // namespace outboard::wire
