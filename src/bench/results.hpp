// Result documents of `outboard bench`: one JSON file per run (machine, software, options and
// every series), plus a NetPIPE-format text file per transfer series.
//
// {
//   "outboard_bench": 1, "mode": "memcpy|net|remote|gemm|fft", "command": "...",
//   "machine": {...}, "software": {...}, "options": {...},
//   "series": [
//     {"name": "...", "kind": "transfer", "pattern": "streaming|pingpong",
//      "points": [{"bytes", "repeats", "seconds", "mib_per_s", "mbps"}]},
//     {"name": "...", "kind": "gemm", "precision": "s|d|c|z", "where": "local-cpu|local-gpu|remote",
//      "points": [{"n", "seconds", "gflops", "compute_seconds", "gflops_compute"}]}
//   ],
//   "phases": [{"name": "...", "to_server", "to_gpu", "plan", "compute", "from_gpu", "from_server"}],
//   "validation": {...}
// }
// Times are seconds; "compute_seconds"/"gflops_compute" leave out the transfers.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/sweep.hpp"

namespace outboard::bench {

nlohmann::json describe_machine();
nlohmann::json describe_software();

nlohmann::json transfer_series(const std::string& name, const std::string& pattern, const std::vector<Point>& points);

// A fresh document with mode, command line, machine and software filled in.
nlohmann::json new_document(const std::string& mode, const std::string& command);

// Writes PREFIX.json and, for each transfer series, PREFIX-<series name as a slug>.np; returns the
// files written.
std::vector<std::string> write_results(const std::string& prefix, const nlohmann::json& doc);

}  // namespace outboard::bench
