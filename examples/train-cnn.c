/*
 * train-cnn: trains a small CNN on the UCI 8x8 handwritten digits (1,797
 * images, examples/data/digits.txt; attribution in doc/datasets.md) with
 * adnn's training ops only: conv2d forward and backward (data, weights),
 * batch norm in training mode and its backward pass, relu and max pooling
 * and their backward passes, softmax cross-entropy and its gradient, and the
 * fused SGD-with-momentum step (examples/digits-cnn.c has the network).
 *
 * A fixed 80/20 split (seeded shuffle), a fixed seed for the weights and for
 * the order of each epoch's batches: two runs on the same backend with the
 * same thread count and the same algorithm choices print the same loss
 * curve and the same parameter hash, bit for bit (t/train-cnn.sh checks it
 * on the CPU; on CUDA, cuDNN's fastest backward algorithms may add in any
 * order: ADNN_DETERMINISTIC=1 keeps to reproducible ones, doc/numerics.md).
 * Every tensor is in memory from adnn_malloc, so it runs unchanged on any
 * backend: the optional argument, or ADNN_BACKEND, chooses it.
 *
 * It prints the mean training loss and the test accuracy after every epoch,
 * the final test accuracy, a hash of the trained parameters, and the time
 * per training step; it exits 1 when the final test accuracy is below 95 %
 * (or the --min-accuracy given).
 *
 * usage: train-cnn [--epochs N] [--min-accuracy PERCENT] [--data FILE] [BACKEND]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <adnn.h>

#include "digits-cnn.h"
#include "digits.h"

#define BATCH 32
#define DEFAULT_EPOCHS 10
#define LEARNING_RATE 0.05 /* the peak; cosine decay to 0 over the run */
#define MOMENTUM 0.9
#define WEIGHT_DECAY 5e-4
#define WEIGHT_SEED 7u
#define SHUFFLE_SEED 11u
#define MIN_ACCURACY 95.0

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int usage(FILE *f, int status) {
  fprintf(f, "usage: train-cnn [--epochs N] [--min-accuracy PERCENT] [--data FILE] [BACKEND]\n"
             "  trains a small CNN on the UCI 8x8 digits; BACKEND (or ADNN_BACKEND): auto, cpu,"
             " cuda, cuda:N\n");
  return status;
}

int main(int argc, char **argv) {
  const char *backend = "auto", *data_path = digits_default_path();
  int epochs = DEFAULT_EPOCHS, have_backend = 0;
  double min_accuracy = MIN_ACCURACY;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return usage(stdout, 0);
    if (strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 1 || v > 1000) return usage(stderr, 2);
      epochs = (int)v;
    } else if (strcmp(argv[i], "--min-accuracy") == 0 && i + 1 < argc) {
      char *end;
      min_accuracy = strtod(argv[++i], &end);
      if (*end != '\0' || end == argv[i] || !(min_accuracy >= 0.0 && min_accuracy <= 100.0))
        return usage(stderr, 2);
    } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
      data_path = argv[++i];
    } else if (argv[i][0] != '-' && !have_backend) {
      backend = argv[i];
      have_backend = 1;
    } else {
      return usage(stderr, 2);
    }
  }

  char err[512];
  digits_data data;
  if (digits_load(data_path, &data, err, sizeof err) != 0) {
    fprintf(stderr, "train-cnn: %s\n", err);
    return 1;
  }
  int *train, *test, n_train, n_test;
  if (digits_split(&data, &train, &n_train, &test, &n_test) != 0) {
    fprintf(stderr, "train-cnn: out of memory\n");
    return 1;
  }

  adnn_context *ctx;
  DIGITS_CHECK(adnn_context_create(backend, &ctx));
  const int steps_per_epoch = n_train / BATCH; /* the remainder of each shuffle is dropped */
  digits_cnn_options o = {.batch = BATCH,
                          .eval_batch = 128,
                          .batchnorm = 1,
                          .steps_per_epoch = steps_per_epoch,
                          .lr = LEARNING_RATE,
                          .momentum = MOMENTUM,
                          .weight_decay = WEIGHT_DECAY,
                          .seed = WEIGHT_SEED};
  double t_start = now_seconds();
  digits_cnn *m = digits_cnn_create(ctx, &o);
  double t_created = now_seconds();
  char algos[512];
  digits_cnn_describe(m, algos, sizeof algos);
  printf("adnn %s: train-cnn on backend %s: UCI digits, %d training and %d test images (fixed "
         "80/20 split), batch %d, %d steps per epoch, SGD momentum %.1f, lr %g cosine\n",
         adnn_version_string(), adnn_context_get_backend(ctx), n_train, n_test, BATCH,
         steps_per_epoch, MOMENTUM, LEARNING_RATE);
  printf("conv algorithms: %s\n", algos);

  float *batch_x = malloc((size_t)BATCH * DIGITS_PIXELS * sizeof *batch_x);
  int32_t *batch_y = malloc((size_t)BATCH * sizeof *batch_y);
  float *losses = malloc((size_t)steps_per_epoch * sizeof *losses);
  double *epoch_ms = malloc((size_t)epochs * sizeof *epoch_ms);
  if (batch_x == NULL || batch_y == NULL || losses == NULL || epoch_ms == NULL) {
    fprintf(stderr, "train-cnn: out of memory\n");
    return 1;
  }
  digits_rng shuffle = {SHUFFLE_SEED};
  const int64_t total_steps = (int64_t)epochs * steps_per_epoch;
  int64_t step = 0;
  int correct = 0;
  for (int epoch = 1; epoch <= epochs; epoch++) {
    digits_shuffle(&shuffle, train, n_train);
    double t0 = now_seconds();
    for (int s = 0; s < steps_per_epoch; s++) {
      for (int i = 0; i < BATCH; i++) {
        int img = train[s * BATCH + i];
        memcpy(batch_x + (size_t)i * DIGITS_PIXELS, data.pixels + (size_t)img * DIGITS_PIXELS,
               DIGITS_PIXELS * sizeof *batch_x);
        batch_y[i] = data.labels[img];
      }
      digits_cnn_set_batch(m, batch_x, batch_y);
      digits_cnn_forward_backward(m, s);
      double lr = LEARNING_RATE * 0.5 * (1.0 + cos(3.14159265358979323846 * (double)step / (double)total_steps));
      digits_cnn_step(m, lr, ++step);
    }
    DIGITS_CHECK(adnn_context_synchronize(ctx));
    epoch_ms[epoch - 1] = (now_seconds() - t0) * 1e3;
    digits_cnn_losses(m, losses, steps_per_epoch);
    double sum = 0.0;
    for (int s = 0; s < steps_per_epoch; s++) sum += losses[s];
    correct = digits_cnn_evaluate(m, data.pixels, data.labels, test, n_test);
    printf("epoch %2d  loss %.7f  test accuracy %6.2f%%\n", epoch, sum / steps_per_epoch,
           100.0 * correct / n_test);
  }
  double accuracy = 100.0 * correct / n_test;
  double t_end = now_seconds();
  printf("test accuracy: %.2f%% (%d of %d)\n", accuracy, correct, n_test);
  printf("parameters: fnv1a %016llx\n", (unsigned long long)digits_cnn_hash(m));
  qsort(epoch_ms, (size_t)epochs, sizeof *epoch_ms, compare_doubles);
  printf("time: %.3f ms per training step (median epoch: set batch, forward, backward, "
         "optimizer), %.2f s for %d epochs with evaluation, %.2f s to create the plans\n",
         epoch_ms[epochs / 2] / steps_per_epoch, t_end - t_created, epochs, t_created - t_start);

  digits_cnn_destroy(m);
  adnn_context_destroy(ctx);
  free(batch_x);
  free(batch_y);
  free(losses);
  free(epoch_ms);
  free(train);
  free(test);
  digits_free(&data);
  if (accuracy < min_accuracy) {
    fprintf(stderr, "train-cnn: test accuracy %.2f%% is below %g%%\n", accuracy, min_accuracy);
    return 1;
  }
  return 0;
}
