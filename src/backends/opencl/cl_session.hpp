// A session's native OpenCL objects (the server's side of remote OpenCL): a table from the ids the
// client picked to native handles (cl_objects.cpp), and the operations on them, a file per family
// as the ICD has them (src/shims/opencl): platforms and sub-devices (cl_platform.cpp), contexts and
// queues (cl_context.cpp), enqueued kernels and markers (cl_queue.cpp), buffers and their
// transfers (cl_memory.cpp; the direct path's in cl_memory_direct.cpp), images and samplers
// (cl_image.cpp), programs and kernels (cl_program.cpp), events and how a command's completion is
// reported (cl_events.cpp). cl_session.cpp runs an operation and ends the session.
//
// Every id, size and offset is checked against the table before the native platform sees it;
// commands are enqueued without blocking (their completion answers from the implementation's
// callback thread or the event waiter), so one session's thread keeps the device busy without
// waiting for its own commands.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/opencl/event_waiter.hpp"
#include "backends/opencl/native.hpp"
#include "backends/opencl/native_watch.hpp"
#include "backends/opencl/pinned_reads.hpp"
#include "backends/opencl/stage_trace.hpp"
#include "backends/opencl/write_gate.hpp"
#include "transport/buffer.hpp"
#include "wire/opencl.hpp"

namespace outboard::backends::opencl {

static_assert(sizeof(size_t) == sizeof(uint64_t), "origins and regions travel as 64-bit sizes");

using server::ClOutput;
using wire::ClId;

// A failed operation: the CL error the client sees, and why.
struct ClFail {
  cl_int code;
  std::string why;
  // The client is told why even where only the code answers the call (a refusal of a hung
  // platform's work: native_watch.hpp): a notice with no object goes first.
  bool tell = false;
};

inline void check(cl_int code, const char* what) {
  if (code != CL_SUCCESS) throw ClFail{code, std::string(what) + " failed: " + cl_error_name(code)};
}

enum class Kind : uint8_t { context, queue, mem, image, sampler, program, kernel, event, user_event, device, pipe };
const char* kind_name(Kind k);
cl_int invalid_code(Kind k);  // CL_INVALID_CONTEXT for a context ...

struct Object {
  Kind kind;
  void* handle;          // the native object (one reference held by the table)
  uint64_t bytes = 0;    // buffers: size; images: size of the whole image
  size_t pixel = 0;      // images: bytes per pixel
  ClId context = 0;
  bool user_status_set = false;  // user events
  bool view = false;             // a sub-buffer or an image of a buffer: its bytes are its parent's
  std::array<uint64_t, 3> extent{};  // images: the largest region, in pixels (OpenCL's region convention)
  ClId platform = 0;             // sub-devices, contexts and queues: their platform's id
  ClId backing = 0;              // a 1D buffer image: its buffer
  uint32_t images = 0;           // buffers: the 1D buffer images made of it and still held
  // Programs and kernels. The ICD's clSetKernelArg checks need every argument's kind and type, so
  // a program from source is built with -cl-kernel-arg-info added where the client left it out;
  // then the client's own options answer CL_PROGRAM_BUILD_OPTIONS, and its kernels' argument
  // info is answered only where the platform gives it without the option.
  bool from_source = false;
  bool from_il = false;  // only these take specialization constants
  bool arg_info_added = false;
  std::string client_options = {};  // as the client gave them, where arg_info_added
  std::string build_refusal = {};   // why its builds are refused (native_quirks.hpp), or empty
};

// What a native callback needs; kept until the session ends (a callback may come late).
struct Callback {
  std::shared_ptr<ClOutput> out;
  SharedCounters* counters = nullptr;
  uint64_t call_id = 0;     // answer this call when the command completes (0: none)
  ClId event = 0;           // report this event's status (0: none)
  std::shared_ptr<transport::Buffer> data;  // a read's result, or a write's source kept alive
  std::shared_ptr<void> held;  // a write's room in the session's WriteGate, given back with the callback
  uint64_t bytes = 0;
  bool read = false;
  bool pinned = false;  // a read into page-locked memory (pinned_reads.hpp): no host copy to wait for
  const char* op = "";  // the operation's name and stages, when traced (stage_trace.hpp)
  StageTimes stages;
  // Callbacks not yet run, of the session (its end waits for them); one-shot ones free themselves.
  std::shared_ptr<std::atomic<int64_t>> outstanding;
  bool one_shot = true;
};

// Adds without wrapping, or fails with CL_INVALID_VALUE.
inline uint64_t add(uint64_t a, uint64_t b) {
  if (a > std::numeric_limits<uint64_t>::max() - b) throw ClFail{CL_INVALID_VALUE, "offset overflows"};
  return a + b;
}
inline uint64_t mul(uint64_t a, uint64_t b) {
  if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b) throw ClFail{CL_INVALID_VALUE, "size overflows"};
  return a * b;
}

class ClSession final : public server::ClSessionObjects {
 public:
  ClSession(const NativePlatforms& n, std::shared_ptr<ClOutput> out, const server::ClLimits& limits,
            std::shared_ptr<server::ClClientMemory> memory, SharedCounters& counters, NativeWatch& watch);
  ~ClSession() override;
  void run(const wire::ClRequest& r, transport::Buffer payload, uint64_t arrived_ns) override;
  uint64_t objects() const override { return objects_.size(); }
  bool commands_pending() const override { return outstanding_->load(std::memory_order_relaxed) > 0; }

 private:
  // ---- the table (cl_objects.cpp) ----
  Object& find(ClId id, std::initializer_list<Kind> kinds);
  void check_new(ClId id);
  void check_memory(uint64_t bytes);
  static bool holds_memory(const Object& o);
  void insert(ClId id, Object o);
  void release_native(Object& o);
  // A root device (the server's ids) or one of the session's sub-devices.
  cl_device_id device(ClId id);
  // The platform id of a device that device() accepted.
  ClId platform_of(ClId device_id);
  // The operation running now works on `platform`: marked for the watch (native_watch.hpp), and
  // refused (CL_OUT_OF_RESOURCES) while a native call on it has not returned. Returns `platform`.
  ClId enter_platform(ClId platform);
  std::vector<cl_device_id> devices(const wire::ClIds& ids);
  std::vector<cl_event> wait_list(const wire::ClIds& ids);
  void handle(const wire::ClRequest&, const wire::ClRelease& rel, transport::Buffer&, ClId& created, ClId&);
  template <class T>
  T handle_of(ClId id, Kind k) {
    return static_cast<T>(find(id, {k}).handle);
  }
  // ---- events, and how a command's completion is reported (cl_events.cpp) ----
  // A one-shot callback for a command's completion: it frees itself when it has run. Register it
  // with register_done (which counts it, so the session's end waits for it).
  Callback* callback(Callback c);
  // `watch`: the client waits for this command: the event waiter reports it too, sooner. Where
  // the waiter polls, it reports the command alone (a native callback would delay the event:
  // event_waiter.hpp), unless it copies into or out of host memory.
  void register_done(cl_event e, Callback* c, bool watch = false);
  // After a command is enqueued with `e`: its event joins the table (if the client named one) and
  // its completion is reported as `c` says.
  void track(cl_event e, const wire::ClCommand& cmd, Callback c);
  // The command's completion answers the request (if asked) and reports its event (if named).
  void answer_when_done(cl_event e, const wire::ClRequest& r, const wire::ClCommand& cmd);
  void handle(const wire::ClRequest&, const wire::ClCreateUserEvent& c, transport::Buffer&, ClId& created, ClId&);
  void handle(const wire::ClRequest&, const wire::ClSetUserEventStatus& s, transport::Buffer&, ClId& created, ClId&);
  // ---- enqueued kernels and markers, and what every command begins with (cl_queue.cpp) ----
  // A command's start: a failure from here on is reported on its event, else its queue; its
  // event id must be new. Returns its queue.
  cl_command_queue begin_command(const wire::ClCommand& cmd, ClId& event);
  // The event of the kernel last enqueued into q, where it has one (the client named it), while
  // nothing else has been since: in an in-order queue a finish waits for it instead of a barrier
  // of its own (a barrier behind a kernel's event cost the round trip 2-3 us more on the H200
  // host: stage_trace.hpp).
  void forget_last_kernel(cl_command_queue q);
  void forget_last_kernels();
  void handle(const wire::ClRequest& r, const wire::ClNDRange& k, transport::Buffer&, ClId&, ClId& event);
  void handle(const wire::ClRequest& r, const wire::ClMarker& m, transport::Buffer&, ClId&, ClId& event);
  // ---- platforms, sub-devices, timers (cl_platform.cpp) ----
  void handle(const wire::ClRequest& r, const wire::ClGetPlatforms&, transport::Buffer&, ClId&, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClCreateSubDevices& c, transport::Buffer&, ClId&, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClGetTimers& t, transport::Buffer&, ClId&, ClId&);
  // ---- contexts and queues (cl_context.cpp) ----
  void handle(const wire::ClRequest&, const wire::ClCreateContext& c, transport::Buffer&, ClId& created, ClId&);
  void handle(const wire::ClRequest&, const wire::ClCreateQueue& c, transport::Buffer&, ClId& created, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClFinish& f, transport::Buffer&, ClId&, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClFlush& f, transport::Buffer&, ClId&, ClId&);
  // ---- buffers, pipes and their transfers (cl_memory.cpp) ----
  void handle(const wire::ClRequest& r, const wire::ClCreateBuffer& c, transport::Buffer& payload, ClId& created,
              ClId&);
  void handle(const wire::ClRequest&, const wire::ClCreateSubBuffer& c, transport::Buffer&, ClId& created, ClId&);
  // The bytes a transfer of `at` touches, checked against a buffer of `size` bytes (with pitches)
  // or an image (pixels); returns the packed size on the client's side.
  uint64_t transfer_bytes(const Object& o, const wire::ClRegion& at);
  static bool is_linear(const wire::ClRegion& at);
  // Enqueues a buffer, rectangle or image transfer between `host` (packed) and `mem`, without
  // blocking; returns its native event.
  cl_event enqueue_transfer(bool write, cl_command_queue q, const wire::ClCommand& cmd, Object& o,
                            const wire::ClRegion& at, void* host);
  void handle(const wire::ClRequest& r, const wire::ClWrite& w, transport::Buffer& payload, ClId&, ClId& event);
  void handle(const wire::ClRequest& r, const wire::ClRead& rd, transport::Buffer&, ClId&, ClId& event);
  // Page-locked memory for a read of `bytes` on q's message path, when q's slots have room.
  std::optional<transport::Buffer> pinned_slot(cl_command_queue q, uint64_t bytes);
  // What the session made for the client's queue `q`: its transfers' queue, its read slots.
  void release_queue_helpers(cl_command_queue q);
  void handle(const wire::ClRequest& r, const wire::ClCopy& c, transport::Buffer&, ClId&, ClId& event);
  void handle(const wire::ClRequest& r, const wire::ClFill& f, transport::Buffer&, ClId&, ClId& event);
  void handle(const wire::ClRequest& r, const wire::ClMigrate& m, transport::Buffer&, ClId&, ClId& event);
  void handle(const wire::ClRequest&, const wire::ClCreatePipe& c, transport::Buffer&, ClId& created, ClId&);
  // ---- transfers on the direct path (direct_transfer.hpp) (cl_memory_direct.cpp) ----
  // Checks a direct transfer as a plain one, and the client's memory it names; starts it.
  template <class Op>
  void direct(const wire::ClRequest& r, const Op& d, bool write, ClId& event);
  // The queue of the server's own that moves the pieces of `q`'s direct transfers (made at the
  // first; released with `q`): on q's device, profiled if q is.
  cl_command_queue mover(cl_command_queue q);
  void handle(const wire::ClRequest& r, const wire::ClDirectRead& d, transport::Buffer&, ClId&, ClId& event);
  // A large buffer read whose result goes over the session's lanes (ClRequest::reply_over_lanes):
  // moved as a direct transfer whose pieces are sent as they come off the device (reply_pieces.hpp).
  static constexpr uint64_t kReadInPiecesBytes = 4 << 20;
  void read_in_pieces(const wire::ClRequest& r, const wire::ClRead& rd, cl_command_queue q, Object& o, uint64_t bytes);
  void handle(const wire::ClRequest& r, const wire::ClDirectWrite& d, transport::Buffer&, ClId&, ClId& event);
  // ---- images and samplers (cl_image.cpp) ----
  void handle(const wire::ClRequest& r, const wire::ClCreateImage& c, transport::Buffer& payload, ClId& created, ClId&);
  // The largest region of an image (pixels, rows or array layers, slices or layers), checked.
  static std::array<uint64_t, 3> image_extent(const wire::ClCreateImage& c);
  // Checks that an image region lies inside the image.
  static void check_image_region(const Object& o, const wire::ClSizes& origin, const wire::ClSizes& region);
  // Bytes per pixel of a format (0: not one OpenCL defines).
  static size_t pixel_bytes(const cl_image_format& f);
  void handle(const wire::ClRequest&, const wire::ClCreateSampler& c, transport::Buffer&, ClId& created, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClGetImageFormats& q, transport::Buffer&, ClId&, ClId&);
  // ---- programs and kernels (cl_program.cpp) ----
  void handle(const wire::ClRequest& r, const wire::ClGetInfo& q, transport::Buffer&, ClId&, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClCreateProgramSource& c, transport::Buffer& payload,
              ClId& created, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClCreateProgramBinary& c, transport::Buffer& payload,
              ClId& created, ClId&);
  void handle(const wire::ClRequest&, const wire::ClCreateProgramBuiltIn& c, transport::Buffer&, ClId& created, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClBuildProgram& b, transport::Buffer&, ClId& created, ClId&);
  // The kernels of a built program and their arguments, for the client's own checks.
  static wire::ClBuildResult kernels_of(cl_program p);
  // The options a build or compile of program `o` runs with (see Object::arg_info_added).
  static std::string build_options(Object& o, const std::string& client_options);
  // Whether the platform of `ctx` keeps argument info from programs built without
  // -cl-kernel-arg-info (PoCL does; asked once per platform, by a small build).
  static bool hides_arg_info(cl_context ctx);
  // native_quirks.hpp's build_refusal for a program of `source` made in `ctx`.
  static std::string build_refusal_for(cl_context ctx, std::string_view source);
  void handle(const wire::ClRequest& r, const wire::ClSetSpecConstant& s, transport::Buffer&, ClId&, ClId&);
  void handle(const wire::ClRequest&, const wire::ClCreateKernel& c, transport::Buffer&, ClId& created, ClId&);
  void handle(const wire::ClRequest&, const wire::ClCloneKernel& c, transport::Buffer&, ClId& created, ClId&);
  void handle(const wire::ClRequest& r, const wire::ClCreateProgramIL& c, transport::Buffer& payload, ClId& created,
              ClId&);
  void handle(const wire::ClRequest& r, const wire::ClGetSubGroupInfo& q, transport::Buffer&, ClId&, ClId&);
  static wire::ClBlob program_binaries(cl_program p);
  // ---- answers (cl_session.cpp) ----
  void reply_data(uint64_t call_id, const wire::ClBlob& value);
  void reply_payload(uint64_t call_id, const std::vector<std::byte>& bytes);
  static cl_uint n(const std::vector<cl_event>& w) { return static_cast<cl_uint>(w.size()); }
  static const cl_event* p(const std::vector<cl_event>& w) { return w.empty() ? nullptr : w.data(); }

  const NativePlatforms& natives_;
  std::shared_ptr<ClOutput> out_;
  std::shared_ptr<server::ClClientMemory> memory_;  // the direct path to the client's memory
  std::shared_ptr<server::ClClientMemory> reply_pieces_;  // large reads' results over the lanes (reply_pieces.hpp)
  server::ClLimits limits_;
  SharedCounters& counters_;
  std::unordered_map<ClId, Object> objects_;
  uint64_t memory_bytes_ = 0;
  // Direct transfers: the pieces' queue per program queue, and the host memory they stage in.
  std::unordered_map<cl_command_queue, cl_command_queue> movers_;
  std::unordered_map<cl_command_queue, std::shared_ptr<PinnedReads>> pinned_;  // null: none to be had
  std::unordered_map<cl_command_queue, cl_event> last_kernel_;  // retained; forget_last_kernel
  StageTimes traced_;  // the operation running now, when traced
  const char* traced_op_ = "";
  std::shared_ptr<StagingBudget> staging_;
  std::shared_ptr<WriteGate> write_gate_;  // the session's writes the platform holds
  NativeWatch& watch_;
  std::shared_ptr<NativeWatch::Slot> watched_;  // what this session's thread runs, for watch_
  // Contexts' callbacks, freed with the session after every native object.
  std::vector<std::unique_ptr<Callback>> callbacks_;
  std::shared_ptr<std::atomic<int64_t>> outstanding_ = std::make_shared<std::atomic<int64_t>>(0);
  EventWaiter waiter_;  // last: its thread ends before the members it reports through go
};

}  // namespace outboard::backends::opencl
