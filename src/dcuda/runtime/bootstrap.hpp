// dcuda host proxy and bootstrap, part 2: how a run's processes find each other.
//
// Once per run, through the launcher the cluster already has: each process learns its index and
// the number of processes from the environment, then publishes a record (its rank count, its
// proxy's address and key) in a rendezvous directory all of them can reach, and reads everyone
// else's.
//
//   index / count      DCUDA_RANK / DCUDA_SIZE (outboard dcuda run), OMPI_COMM_WORLD_RANK /
//                      _SIZE (Open MPI's mpirun), PMI_RANK / PMI_SIZE (MPICH's Hydra),
//                      SLURM_PROCID / SLURM_NTASKS (srun); none: a run of one process
//   local index (GPU)  DCUDA_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
//   directory          DCUDA_BOOTSTRAP_DIR, else /tmp/outboard-dcuda-<uid>/<job> with the job from
//                      DCUDA_JOB, OMPI_MCA_ess_base_jobid (Open MPI 4), PMIX_NAMESPACE, or
//                      SLURM_JOB_ID.SLURM_STEP_ID; across hosts it must be on a shared file system
//   timeout            DCUDA_BOOTSTRAP_TIMEOUT seconds (default 60)
//
// Directories are made 0700 (an existing one must be ours and private: the records carry the
// proxies' keys). A record is written to a temporary name and renamed, so a reader sees all of
// it or nothing; readers check every field. After reading, each process leaves a "done" mark;
// the one that sees every mark removes the directory.
#pragma once
#include <cstdint>
#include <string>

#include "dcuda/runtime/world.hpp"

namespace dcuda::runtime {

struct Launch {
  uint32_t process = 0;     // this process's index
  uint32_t processes = 1;   // how many
  uint32_t local = 0;       // index among the run's processes on this host (which GPU)
  std::string job;          // the launcher's job id, if it has one
  std::string launcher;     // which environment it came from, for messages
};

// From the environment; a run of one process when no launcher is found. Throws Error on
// malformed or contradictory values.
Launch launch_from_env();
// The rendezvous directory (see above). Throws Error when a run of several processes has none.
std::string bootstrap_dir(const Launch& launch);
// DCUDA_BOOTSTRAP_TIMEOUT, or 60.
double bootstrap_timeout();

// Publishes this process's record and returns the run once every process's is read. A run of
// one process touches no files. Throws Error naming the processes that did not appear within
// `timeout_s`, or the record that is malformed.
// `shared`: this process's ranks' state as other processes of this host can map it (hex), or
// empty; every record also says which host it comes from (host_identity()).
World bootstrap(const Launch& launch, uint32_t ranks, const std::string& address, const std::string& key,
                const std::string& dir, double timeout_s, const std::string& shared = "");
// This host: its name and its boot id (two hosts may share a name, two boots of one host may not
// share memory handles).
std::string host_identity();

}  // namespace dcuda::runtime
