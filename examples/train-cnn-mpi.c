/*
 * train-cnn-mpi: examples/train-cnn.c's network trained data-parallel over
 * MPI ranks (doc/distributed.md). Every rank holds a full copy of the model;
 * each step's global batch of G images is cut into equal slices, one per
 * rank; each rank computes the gradients of its slice's mean loss, and
 * MPI_Allreduce sums them, after which every rank scales the sum by 1 / ranks
 * (the gradient of the mean loss over the whole global batch) and takes the
 * same optimizer step. adnn never sees MPI: the gradients are one packed
 * device buffer, copied to the host with adnn_memcpy, reduced, and copied
 * back, so the program runs on any backend (on GPUs, NCCL replaces the host
 * round trip: doc/distributed.md).
 *
 * Batch norm keeps per-rank batch statistics (plain data parallelism, as
 * PyTorch's DistributedDataParallel without SyncBatchNorm), so with batch
 * norm the ranks do not compute exactly what one process over the global
 * batch would; the running statistics are averaged over the ranks before
 * each evaluation. --no-batchnorm trains the variant without batch norm,
 * whose data-parallel steps equal single-process steps over the global batch
 * up to float rounding: t/train-cnn-mpi.sh checks that with --steps and
 * --dump.
 *
 * usage: train-cnn-mpi [--epochs N | --steps N] [--global-batch G] [--no-batchnorm]
 *                      [--dump FILE] [--data FILE] [BACKEND]
 *   --steps N    train N steps instead of whole epochs, without evaluating
 *   --dump FILE  rank 0 writes the trained parameters to FILE, one per line
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include <adnn.h>

#include "digits-cnn.h"
#include "digits.h"

#define DEFAULT_GLOBAL_BATCH 32
#define DEFAULT_EPOCHS 10
#define LEARNING_RATE 0.05
#define MOMENTUM 0.9
#define WEIGHT_DECAY 5e-4
#define WEIGHT_SEED 7u
#define SHUFFLE_SEED 11u
#define MIN_ACCURACY 95.0

static int rank, ranks;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int usage(FILE *f, int status) {
  if (rank == 0)
    fprintf(f, "usage: train-cnn-mpi [--epochs N | --steps N] [--global-batch G] "
               "[--no-batchnorm] [--dump FILE] [--data FILE] [BACKEND]\n");
  MPI_Finalize();
  return status;
}

static void mpi_check(int rc, const char *call) {
  if (rc == MPI_SUCCESS) return;
  fprintf(stderr, "train-cnn-mpi: rank %d: %s failed (%d)\n", rank, call, rc);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
#define MPI_CHECK(call) mpi_check((call), #call)

/* Sums n floats of device memory over the ranks and scales them by `scale`,
 * through a host buffer: the MPI library reads host memory here on any
 * backend. */
static void allreduce_device(adnn_context *ctx, float *dev, float *host, size_t n, float scale) {
  DIGITS_CHECK(adnn_memcpy(ctx, host, dev, n * sizeof *host, ADNN_MEMCPY_DEVICE_TO_HOST));
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, host, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  for (size_t i = 0; i < n; i++) host[i] *= scale;
  DIGITS_CHECK(adnn_memcpy(ctx, dev, host, n * sizeof *host, ADNN_MEMCPY_HOST_TO_DEVICE));
}

static long parse_count(const char *s, long max) {
  char *end;
  long v = strtol(s, &end, 10);
  return (*end != '\0' || v < 1 || v > max) ? -1 : v;
}

int main(int argc, char **argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks));

  const char *backend = "auto", *data_path = digits_default_path(), *dump = NULL;
  long epochs = DEFAULT_EPOCHS, steps = 0, global_batch = DEFAULT_GLOBAL_BATCH;
  int batchnorm = 1, have_backend = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return usage(stdout, 0);
    if (strcmp(a, "--epochs") == 0 && i + 1 < argc) {
      if ((epochs = parse_count(argv[++i], 1000)) < 0) return usage(stderr, 2);
    } else if (strcmp(a, "--steps") == 0 && i + 1 < argc) {
      if ((steps = parse_count(argv[++i], 1000000)) < 0) return usage(stderr, 2);
    } else if (strcmp(a, "--global-batch") == 0 && i + 1 < argc) {
      if ((global_batch = parse_count(argv[++i], 1024)) < 0) return usage(stderr, 2);
    } else if (strcmp(a, "--no-batchnorm") == 0) {
      batchnorm = 0;
    } else if (strcmp(a, "--dump") == 0 && i + 1 < argc) {
      dump = argv[++i];
    } else if (strcmp(a, "--data") == 0 && i + 1 < argc) {
      data_path = argv[++i];
    } else if (a[0] != '-' && !have_backend) {
      backend = a;
      have_backend = 1;
    } else {
      return usage(stderr, 2);
    }
  }
  if (global_batch % ranks != 0) {
    if (rank == 0)
      fprintf(stderr, "train-cnn-mpi: the global batch %ld is not a multiple of %d ranks\n",
              global_batch, ranks);
    MPI_Finalize();
    return 2;
  }
  const int batch = (int)(global_batch / ranks);

  char err[512];
  digits_data data;
  if (digits_load(data_path, &data, err, sizeof err) != 0) {
    fprintf(stderr, "train-cnn-mpi: rank %d: %s\n", rank, err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int *train, *test, n_train, n_test;
  if (digits_split(&data, &train, &n_train, &test, &n_test) != 0) {
    fprintf(stderr, "train-cnn-mpi: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int steps_per_epoch = n_train / (int)global_batch;
  const int64_t total_steps = steps > 0 ? steps : epochs * steps_per_epoch;
  if (steps > 0) epochs = (steps + steps_per_epoch - 1) / steps_per_epoch;

  adnn_context *ctx;
  DIGITS_CHECK(adnn_context_create(backend, &ctx));
  digits_cnn_options o = {.batch = batch,
                          .eval_batch = 128,
                          .batchnorm = batchnorm,
                          .steps_per_epoch = steps_per_epoch,
                          .lr = LEARNING_RATE,
                          .momentum = MOMENTUM,
                          .weight_decay = WEIGHT_DECAY,
                          .seed = WEIGHT_SEED};
  digits_cnn *m = digits_cnn_create(ctx, &o);
  const size_t n_params = digits_cnn_parameter_floats(m), n_running = digits_cnn_running_floats(m);
  float *host = malloc((n_params > n_running ? n_params : n_running) * sizeof *host);
  float *batch_x = malloc((size_t)batch * DIGITS_PIXELS * sizeof *batch_x);
  int32_t *batch_y = malloc((size_t)batch * sizeof *batch_y);
  float *losses = malloc((size_t)steps_per_epoch * sizeof *losses);
  if (host == NULL || batch_x == NULL || batch_y == NULL || losses == NULL) {
    fprintf(stderr, "train-cnn-mpi: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* Every rank starts from rank 0's parameters (they are equal already,
   * from the same seed; the broadcast makes that a property of the program,
   * as frameworks do, rather than of the generator). */
  float *params = digits_cnn_parameters(m);
  DIGITS_CHECK(adnn_memcpy(ctx, host, params, n_params * sizeof *host, ADNN_MEMCPY_DEVICE_TO_HOST));
  MPI_CHECK(MPI_Bcast(host, (int)n_params, MPI_FLOAT, 0, MPI_COMM_WORLD));
  DIGITS_CHECK(adnn_memcpy(ctx, params, host, n_params * sizeof *host, ADNN_MEMCPY_HOST_TO_DEVICE));

  if (rank == 0) {
    char algos[512];
    digits_cnn_describe(m, algos, sizeof algos);
    printf("adnn %s: train-cnn-mpi on backend %s: %d ranks, global batch %ld (%d per rank), "
           "%s, %lld steps\n",
           adnn_version_string(), adnn_context_get_backend(ctx), ranks, global_batch, batch,
           batchnorm ? "batch norm with per-rank statistics" : "no batch norm",
           (long long)total_steps);
    printf("conv algorithms: %s\n", algos);
  }

  digits_rng shuffle = {SHUFFLE_SEED};
  int64_t step = 0;
  double train_seconds = 0.0;
  int correct = 0;
  for (int epoch = 1; epoch <= epochs && step < total_steps; epoch++) {
    digits_shuffle(&shuffle, train, n_train);
    int s = 0;
    double t0 = now_seconds();
    for (; s < steps_per_epoch && step < total_steps; s++) {
      /* This rank's slice of the step's global batch. */
      const int *slice = train + (size_t)s * (size_t)global_batch + (size_t)rank * (size_t)batch;
      for (int i = 0; i < batch; i++) {
        memcpy(batch_x + (size_t)i * DIGITS_PIXELS,
               data.pixels + (size_t)slice[i] * DIGITS_PIXELS, DIGITS_PIXELS * sizeof *batch_x);
        batch_y[i] = data.labels[slice[i]];
      }
      digits_cnn_set_batch(m, batch_x, batch_y);
      digits_cnn_forward_backward(m, s);
      /* Sum then scale: the mean of the ranks' mean-loss gradients is the
       * gradient of the mean loss over the global batch. */
      allreduce_device(ctx, digits_cnn_gradients(m), host, n_params, 1.0f / (float)ranks);
      double lr =
          LEARNING_RATE * 0.5 * (1.0 + cos(3.14159265358979323846 * (double)step / (double)total_steps));
      digits_cnn_step(m, lr, ++step);
    }
    DIGITS_CHECK(adnn_context_synchronize(ctx));
    train_seconds += now_seconds() - t0;
    digits_cnn_losses(m, losses, s);
    double sum = 0.0;
    for (int i = 0; i < s; i++) sum += losses[i];
    double mean_loss = sum / s;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &mean_loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    mean_loss /= ranks;
    if (steps > 0) { /* a fixed number of steps: no evaluation */
      if (rank == 0) printf("epoch %2d  loss %.7f  (%d steps)\n", epoch, mean_loss, s);
      continue;
    }
    /* Each rank's running statistics saw only its slices: evaluate with
     * their mean over the ranks (and keep training from that mean). */
    if (n_running > 0)
      allreduce_device(ctx, digits_cnn_running(m), host, n_running, 1.0f / (float)ranks);
    correct = digits_cnn_evaluate(m, data.pixels, data.labels, test, n_test);
    if (rank == 0)
      printf("epoch %2d  loss %.7f  test accuracy %6.2f%%\n", epoch, mean_loss,
             100.0 * correct / n_test);
  }

  int status = 0;
  if (steps == 0 && rank == 0) {
    double accuracy = 100.0 * correct / n_test;
    printf("test accuracy: %.2f%% (%d of %d)\n", accuracy, correct, n_test);
    if (accuracy < MIN_ACCURACY) {
      fprintf(stderr, "train-cnn-mpi: test accuracy %.2f%% is below %.0f%%\n", accuracy,
              MIN_ACCURACY);
      status = 1;
    }
  }
  if (rank == 0)
    printf("time: %.3f ms per training step (with the gradient allreduce), %d ranks\n",
           train_seconds * 1e3 / (double)step, ranks);
  if (dump != NULL && rank == 0) {
    DIGITS_CHECK(adnn_memcpy(ctx, host, params, n_params * sizeof *host,
                             ADNN_MEMCPY_DEVICE_TO_HOST));
    FILE *f = fopen(dump, "w");
    if (f == NULL) {
      fprintf(stderr, "train-cnn-mpi: cannot write %s\n", dump);
      status = 1;
    } else {
      /* One value per line, 9 significant digits: enough to give the float back. */
      for (int t = 0; t < digits_cnn_tensor_count(m); t++) {
        size_t offset;
        int64_t size;
        const char *name = digits_cnn_tensor(m, t, &offset, &size);
        for (int64_t j = 0; j < size; j++)
          fprintf(f, "%s[%lld] %.9g\n", name, (long long)j, (double)host[offset + (size_t)j]);
      }
      if (fclose(f) != 0) status = 1;
    }
  }

  digits_cnn_destroy(m);
  adnn_context_destroy(ctx);
  free(host);
  free(batch_x);
  free(batch_y);
  free(losses);
  free(train);
  free(test);
  digits_free(&data);
  MPI_Finalize();
  return status;
}
