#include "server/services/blas3.hpp"
#include "server/services/fft.hpp"
#include "server/services/lapack.hpp"
#include "server/services/opencl.hpp"
#include "server/services/service.hpp"

namespace outboard::server {

std::vector<std::unique_ptr<Service>> make_services(Core& core) {
  std::vector<std::unique_ptr<Service>> services;
  services.push_back(make_blas3_service(core));
  services.push_back(make_lapack_service(core));
  services.push_back(make_fft_service(core));
  if (auto opencl = make_opencl_service(core)) services.push_back(std::move(opencl));
  return services;
}

}  // namespace outboard::server
