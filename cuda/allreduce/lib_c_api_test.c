/* libsightline_allreduce's C API where no GPU and no launcher is needed (ctest
 * allreduce_lib_c_api): the header compiles as C99, the defaults, the names, and the errors a
 * runtime gets for bad arguments or a missing launcher. Run without OMPI_COMM_WORLD_RANK, PMI_RANK,
 * SLURM_PROCID, RANK. Exit code 0 when every check passed, 1 when one failed. */
#include <stdio.h>
#include <string.h>

#include "sightline/allreduce.h"

static int checks = 0, failed = 0;

static void expect(int ok, const char* what) {
  ++checks;
  if (!ok) {
    ++failed;
    fprintf(stderr, "FAIL: %s (last error: \"%s\")\n", what, sightline_ar_last_error());
  }
}

int main(void) {
  sightline_ar_config cfg;
  sightline_ar_config_init(&cfg);
  expect(cfg.max_bytes == (size_t)64 << 20, "default max_bytes is 64 MiB");
  expect(cfg.lamport_max_bytes == (size_t)1 << 20, "default lamport_max_bytes is 1 MiB");
  expect(cfg.lamport_dtype == SIGHTLINE_AR_BF16 && cfg.timeout_s == 60, "default dtype, timeout");

  sightline_ar_strategy s = SIGHTLINE_AR_STRATEGY_NCCL;
  expect(sightline_ar_parse_strategy("TwoShot", &s) == 0 && s == SIGHTLINE_AR_STRATEGY_TWOSHOT,
         "parse TwoShot");
  expect(sightline_ar_parse_strategy("auto", &s) == 0 && s == SIGHTLINE_AR_STRATEGY_AUTO,
         "parse auto");
  expect(sightline_ar_parse_strategy("two-shot", &s) == -1, "two-shot is not a name");
  expect(sightline_ar_parse_strategy(NULL, &s) == -1, "NULL is not a name");
  expect(strcmp(sightline_ar_strategy_name(SIGHTLINE_AR_STRATEGY_LAMPORT), "lamport") == 0,
         "strategy name");
  expect(strcmp(sightline_ar_fusion_name(SIGHTLINE_AR_FUSION_RESIDUAL_RMSNORM_NVFP4),
                "residual_rmsnorm_nvfp4") == 0,
         "fusion name");
  expect(strcmp(sightline_ar_status_name(SIGHTLINE_AR_ERROR_UNSUPPORTED), "unsupported") == 0,
         "status name");

  sightline_ar_comm* comm = (sightline_ar_comm*)&cfg; /* must be overwritten with NULL */
  expect(sightline_ar_comm_init_env(NULL, &comm) == SIGHTLINE_AR_ERROR_BOOTSTRAP && comm == NULL,
         "init_env without a launcher: bootstrap error, no communicator");
  expect(strstr(sightline_ar_last_error(), "no launcher environment") != NULL,
         "init_env without a launcher: the message says so");
  cfg.max_bytes = 0;
  expect(sightline_ar_comm_init_env(&cfg, &comm) == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT &&
             strstr(sightline_ar_last_error(), "max_bytes") != NULL,
         "max_bytes 0 is refused");
  sightline_ar_config_init(&cfg);
  cfg.lamport_max_bytes = (size_t)1 << 30;
  expect(sightline_ar_comm_init_env(&cfg, &comm) == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
         "lamport_max_bytes 1 GiB is refused");
  expect(sightline_ar_comm_init_nccl(NULL, NULL, &comm) == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
         "init_nccl(NULL) is refused");

  int x = 0;
  expect(sightline_ar_allreduce(NULL, &x, &x, 1, SIGHTLINE_AR_BF16, 0, SIGHTLINE_AR_STRATEGY_AUTO,
                                NULL) == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT &&
             strcmp(sightline_ar_last_error(), "comm is NULL") == 0,
         "allreduce on a NULL communicator");
  expect(sightline_ar_allreduce_fused(NULL, NULL, SIGHTLINE_AR_BF16, SIGHTLINE_AR_STRATEGY_AUTO,
                                      NULL) == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
         "fused call on a NULL communicator");
  expect(sightline_ar_check_device(NULL) == SIGHTLINE_AR_ERROR_INVALID_ARGUMENT,
         "check_device(NULL)");
  expect(sightline_ar_comm_rank(NULL) == -1 && sightline_ar_comm_world_size(NULL) == -1,
         "rank and size of NULL");
  sightline_ar_comm_destroy(NULL);

  if (failed == 0) printf("c api: all %d checks passed\n", checks);
  return failed == 0 ? 0 : 1;
}
