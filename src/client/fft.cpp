// Placeholder until the remote FFT path lands: every plan runs locally.
#include "client/fft.hpp"

namespace outboard::client {

RemoteFft* fft_plan(const FftGuru&) noexcept { return nullptr; }
bool fft_execute(RemoteFft*, const FftArrays&) noexcept { return false; }
void fft_destroy(RemoteFft*) noexcept {}
void fft_ran_locally(const FftGuru&) noexcept {}

}  // namespace outboard::client
