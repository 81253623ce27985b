// `outboard status` for people: the server's status document (the StatusReply's JSON, which
// `--json` prints unchanged) as aligned sections: the server, its backends with their GPUs and
// their state, the services' counters, and the clients; sizes and times in human units. Keys a
// server of another version lacks are left out, never an error.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace outboard::tool {

std::string status_text(const nlohmann::json& doc);

// 0 B, 1023 B, 1.5 KiB, 12.0 MiB, 8.00 GiB (three significant digits from 1 KiB on).
std::string human_bytes(uint64_t bytes);
// 0.25 s, 42 s, 3 min 05 s, 2 h 10 min, 3 d 4 h.
std::string human_seconds(double seconds);

}  // namespace outboard::tool
