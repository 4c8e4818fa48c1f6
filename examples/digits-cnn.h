/*
 * The small CNN of the training examples (examples/train-cnn.c and
 * examples/train-cnn-mpi.c), written only against adnn's public API. Every
 * tensor lives in memory from adnn_malloc and moves with adnn_memcpy, so the
 * same code runs on any backend.
 *
 * Network (NCHW, F32; input [B, 1, 8, 8]):
 *   conv 3x3 1->16 (pad 1) -> batch norm (training statistics) -> relu -> max pool 2x2/2
 *   conv 3x3 16->32 (pad 1) -> batch norm -> relu -> max pool 2x2/2   -> [B, 32, 2, 2]
 *   classifier: conv 2x2 32->10 with bias (valid, so a fully connected
 *     layer over the 128 features) -> [B, 10, 1, 1], read as the logits [B, 10]
 *   softmax cross-entropy (mean over the batch), SGD with momentum.
 * Without batch norm (digits_cnn_options.batchnorm = 0) the two hidden convs
 * carry a bias instead; the MPI example checks data parallelism with that
 * variant (doc/distributed.md says why).
 *
 * The parameters, their gradients and the momentum buffers are each one
 * device allocation holding every parameter tensor at a fixed offset, so a
 * data-parallel program reduces all the gradients with one call.
 */
#ifndef ADNN_EXAMPLES_DIGITS_CNN_H
#define ADNN_EXAMPLES_DIGITS_CNN_H

#include <stddef.h>
#include <stdint.h>

#include <adnn.h>

typedef struct digits_cnn_options {
  int batch;      /* training images per step (per process) */
  int eval_batch; /* images per evaluation pass */
  int batchnorm;  /* 1: conv-bn-relu-pool; 0: conv(+bias)-relu-pool */
  int steps_per_epoch; /* capacity of the per-step loss buffer */
  double lr, momentum, weight_decay;
  uint64_t seed; /* initial weights */
} digits_cnn_options;

typedef struct digits_cnn digits_cnn;

/* Creates every plan and buffer and initializes the parameters from
 * o->seed. On failure prints what failed on stderr and exits with status 1:
 * these are example programs, and every failure here is fatal for them. */
digits_cnn *digits_cnn_create(adnn_context *ctx, const digits_cnn_options *o);
void digits_cnn_destroy(digits_cnn *m);

/* Copies one training batch (B images of 64 pixels, B labels) to the device. */
void digits_cnn_set_batch(digits_cnn *m, const float *pixels, const int32_t *labels);

/* Forward and backward pass over the current batch: the mean loss goes to
 * the device-side loss slot `slot` (0 .. steps_per_epoch - 1) and the
 * gradients of every parameter to digits_cnn_gradients(). Asynchronous. */
void digits_cnn_forward_backward(digits_cnn *m, int slot);

/* One optimizer step with learning rate lr; step counts from 1. */
void digits_cnn_step(digits_cnn *m, double lr, int64_t step);

/* The first `n` per-step losses, copied to the host (synchronizes). */
void digits_cnn_losses(digits_cnn *m, float *host, int n);

/* The number of images among idx[0..n-1] of (pixels, labels) that the
 * network, in inference mode (batch norm with the running statistics),
 * classifies correctly. */
int digits_cnn_evaluate(digits_cnn *m, const float *pixels, const int32_t *labels, const int *idx,
                        int n);

/* The device buffers a data-parallel program exchanges: the packed
 * gradients (digits_cnn_parameter_floats() floats, padding included, which
 * stays zero), the packed parameters, and the batch-norm running statistics
 * (digits_cnn_running_floats() floats; 0 without batch norm). */
float *digits_cnn_gradients(digits_cnn *m);
float *digits_cnn_parameters(digits_cnn *m);
size_t digits_cnn_parameter_floats(const digits_cnn *m);
float *digits_cnn_running(digits_cnn *m);
size_t digits_cnn_running_floats(const digits_cnn *m);

/* The parameter tensors: their count, and name, offset (in floats, into the
 * packed buffers) and size of tensor i. */
int digits_cnn_tensor_count(const digits_cnn *m);
const char *digits_cnn_tensor(const digits_cnn *m, int i, size_t *offset, int64_t *size);

/* The conv algorithms the plans chose, for the report ("a, b, c"). */
void digits_cnn_describe(const digits_cnn *m, char *buf, size_t size);

/* FNV-1a over the bytes of the parameters and running statistics (host
 * copies; synchronizes): equal hashes mean bitwise-equal models. */
uint64_t digits_cnn_hash(digits_cnn *m);

/* Prints "call: status: message" on stderr and exits 1 when st is not
 * ADNN_STATUS_SUCCESS. */
void digits_cnn_check(adnn_status st, const char *call);
#define DIGITS_CHECK(call) digits_cnn_check((call), #call)

#endif
