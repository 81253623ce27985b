// Runs a group of processes as one job: started together, waited for together, and ended
// together when one of them fails.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace outboard::tool {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// Starts `argv` once per entry of `envs` (each with those variables added to this process's
// environment); the children share this process's stdout and stderr. Waits for all. When one
// fails (exits nonzero or dies of a signal), the others get `grace_s` seconds to end on their
// own, then SIGTERM, then SIGKILL a second later. SIGINT/SIGTERM to this process are passed on.
// Returns the status of the first that failed (its exit code, or 128 + its signal), else 0.
// Throws Error when a process cannot be started (those already started are killed).
int run_group(const std::vector<std::string>& argv, const std::vector<EnvVars>& envs, double grace_s);

}  // namespace outboard::tool
