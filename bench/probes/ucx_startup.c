/* Where a fresh process's UCX start-up goes (issue 37 item 4: a program's first OpenCL call
 * through Outboard in under 5 ms): ucp_config_read, ucp_init and ucp_worker_create with the
 * features and thread mode Outboard's workers ask for, in milliseconds. UCX's environment
 * (UCX_TLS, UCX_MM_RX_BUFS_GROW, ...) applies as to any program; run it in fresh processes:
 *   for i in 1 2 3; do UCX_MM_RX_BUFS_GROW=128 ucx_startup; done
 * Output: "config MS init MS worker MS total MS". */
#include <stdio.h>
#include <time.h>
#include <ucp/api/ucp.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(void) {
  const double t0 = now_ms();
  ucp_config_t* config;
  if (ucp_config_read(NULL, NULL, &config) != UCS_OK) return fprintf(stderr, "ucx_startup: no UCX configuration\n"), 1;
  const double t1 = now_ms();
  ucp_params_t params = {0};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  ucp_context_h context;
  if (ucp_init(&params, config, &context) != UCS_OK) return fprintf(stderr, "ucx_startup: ucp_init failed\n"), 1;
  ucp_config_release(config);
  const double t2 = now_ms();
  ucp_worker_params_t wp = {0};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h worker;
  if (ucp_worker_create(context, &wp, &worker) != UCS_OK) return fprintf(stderr, "ucx_startup: no worker\n"), 1;
  const double t3 = now_ms();
  printf("config %.2f init %.2f worker %.2f total %.2f\n", t1 - t0, t2 - t1, t3 - t2, t3 - t0);
  ucp_worker_destroy(worker);
  ucp_cleanup(context);
  return 0;
}
