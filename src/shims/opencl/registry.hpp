// The ICD's bookkeeping of its handles and ids (common.cpp).
#pragma once
#include <typeinfo>

#include "shims/opencl/objects.hpp"

namespace outboard::opencl {

// Handles the ICD handed out and that are still alive, with their type (valid() looks here: a
// handle of one type passed where another is expected is not valid).
void registry_add_typed(const void* handle, const std::type_info& type);
void registry_remove(const void* handle);
template <class T>
void registry_add(T* handle) {
  registry_add_typed(handle, typeid(T));
}
// A new object id, unique in the process (so ids of several servers' sessions never meet).
ClId new_id();
// `count` consecutive new ids; returns the first.
ClId new_ids(uint32_t count);
// A failure the server reported for `id` (an object, a queue or an event) with nobody waiting.
void note_failure(ClId id, cl_int code);
// The channel's connection failed: every event still pending on it fails.
void channel_failed(Channel* channel, const std::string& why);
// Registers an event for the server's notices about it (removed when it completes).
void watch_event(Channel* channel, const std::shared_ptr<EventState>& s);
// The events of queue `queue` still pending now; wait_final: until each has its final status.
// After a clFinish the queue's events are complete, but their notices may come after the
// finish's answer (the server reports each command as the implementation does, in any order).
std::vector<std::shared_ptr<EventState>> pending_events_of(ClId queue);
void wait_final(const std::vector<std::shared_ptr<EventState>>& events);

// The server reported an error in context `id` (its pfn_notify, if any, runs on the callback thread).
void report_context_error(ClId id, const std::string& message);

}  // namespace outboard::opencl
