// The FFT service: per-session plans (wire::FftPlan, FftRelease; opaque ids the client picks,
// which die with the session), made ready ahead of the data on the executor that will run them
// (cuFFT on a GPU for what cuFFT expresses, FFTW on the host for the rest); executions whole
// (wire::FftExecute), pipelined (wire::FftChunk), or on the direct path (wire::DirectFft: the
// server copies the arrays over its copy lanes). An execution naming a plan its session does not
// have is answered with an error and nothing runs.
#pragma once
#include <memory>

#include "server/services/service.hpp"

namespace outboard::server {

std::unique_ptr<Service> make_fft_service(Core& core);

}  // namespace outboard::server
