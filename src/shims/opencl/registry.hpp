// The ICD's bookkeeping of its handles and ids (common.cpp).
#pragma once
#include "shims/opencl/objects.hpp"

namespace outboard::opencl {

// Handles the ICD handed out and that are still alive (valid() looks here).
void registry_add(const void* handle);
void registry_remove(const void* handle);
// A new object id, unique in the process (so ids of several servers' sessions never meet).
ClId new_id();
// A failure the server reported for `id` (an object, a queue or an event) with nobody waiting.
void note_failure(ClId id, cl_int code);
// The channel's connection failed: every event still pending on it fails.
void channel_failed(Channel* channel, const std::string& why);
// Registers an event for the server's notices about it (removed when it completes).
void watch_event(Channel* channel, const std::shared_ptr<EventState>& s);

// The server reported an error in context `id` (its pfn_notify, if any, runs on the callback thread).
void report_context_error(ClId id, const std::string& message);

}  // namespace outboard::opencl
