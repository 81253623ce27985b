// Who is in a dcuda run: one process per GPU, each with a block of consecutive world ranks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dcuda::runtime {

struct ProcessInfo {
  uint32_t first_rank = 0;  // world rank of its block 0
  uint32_t ranks = 0;       // its blocks
  std::string address;      // its proxy's "host:port"
  std::string key;          // what peers present to its proxy (published only through the bootstrap)
  std::string host;         // which host it runs on (name and boot id): same-host peers may map its memory
  std::string shared;       // its ranks' state as memory other processes of its host can map (hex), or empty
};

struct World {
  uint32_t self = 0;                  // this process's index
  std::vector<ProcessInfo> processes; // by index
  uint32_t world_size() const { return processes.empty() ? 0 : processes.back().first_rank + processes.back().ranks; }
  // The process holding world rank r, or processes.size() when there is none.
  uint32_t process_of(uint32_t r) const {
    for (uint32_t i = 0; i < processes.size(); ++i)
      if (r >= processes[i].first_rank && r - processes[i].first_rank < processes[i].ranks) return i;
    return static_cast<uint32_t>(processes.size());
  }
};

}  // namespace dcuda::runtime
