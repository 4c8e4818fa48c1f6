/* Host emulation of the CUDA plugin (see run.sh): the real cuda_plan.c / cuda_conv2d.c and
 * the kernels compiled for the host (emu.h), host memory as "device" memory. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_plan.h"

const adnn_plugin_host *cuda__host;

cudaError_t cudaSetDevice(int d) { (void)d; return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d) {
  (void)d; *v = a == cudaDevAttrMultiProcessorCount ? 3 : 2048; return cudaSuccess; }
cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e) { (void)e; return "cudaErrorEmu"; }
const char *cudaGetErrorString(cudaError_t e) { (void)e; return "emu"; }

adnn_status cuda__fail_runtime(cudaError_t err, const char *what) {
  return cuda__host->fail(ADNN_STATUS_EXECUTION_FAILED, "cuda(emu): %s failed: %d", what, (int)err); }
adnn_status cuda__fail_cudnn(cudnnStatus_t err, const char *what) {
  int c = (int)err / 1000;
  return cuda__host->fail(c == 2 ? ADNN_STATUS_BAD_PARAM : c == 3 ? ADNN_STATUS_NOT_SUPPORTED : ADNN_STATUS_EXECUTION_FAILED,
                          "cuda(emu): %s failed: %s (%d)", what, cudnnGetErrorString(err), (int)err); }
adnn_status cuda__context_enter(adnn_plugin_context *ctx) { (void)ctx; return ADNN_STATUS_SUCCESS; }
adnn_status cuda__context_cudnn(adnn_plugin_context *ctx, cudnnHandle_t *out) { (void)ctx; *out = (cudnnHandle_t)0x1; return ADNN_STATUS_SUCCESS; }

static adnn_status probe(adnn_plugin_report *r) { r->state = ADNN_BACKEND_READY; r->score = 1;
  adnn_plugin_report_reason(r, "host emulation"); adnn_plugin_report_device(r, 0, "emu"); r->device_count = 1; return ADNN_STATUS_SUCCESS; }
static adnn_status ctx_create(int dev, adnn_plugin_context **out) { (void)dev; *out = calloc(1, sizeof **out); return ADNN_STATUS_SUCCESS; }
static void ctx_destroy(adnn_plugin_context *c) { free(c); }
static adnn_status sync_(adnn_plugin_context *c) { (void)c; return ADNN_STATUS_SUCCESS; }
static adnn_status m_alloc(adnn_plugin_context *c, size_t b, void **p) { (void)c; *p = malloc(b); return ADNN_STATUS_SUCCESS; }
static adnn_status m_free(adnn_plugin_context *c, void *p) { (void)c; free(p); return ADNN_STATUS_SUCCESS; }
static adnn_status m_copy(adnn_plugin_context *c, void *d, const void *s, size_t b, adnn_memcpy_kind k) { (void)c, (void)k; memmove(d, s, b); return ADNN_STATUS_SUCCESS; }
static adnn_status m_set(adnn_plugin_context *c, void *p, int v, size_t b) { (void)c; memset(p, v, b); return ADNN_STATUS_SUCCESS; }

static const adnn_plugin table = {
  .abi_version = ADNN_PLUGIN_ABI_VERSION, .struct_size = sizeof(adnn_plugin), .name = "cuda", .version = "emu",
  .probe = probe, .context_create = ctx_create, .context_destroy = ctx_destroy, .synchronize = sync_,
  .mem_alloc = m_alloc, .mem_free = m_free, .mem_copy = m_copy, .mem_set = m_set,
  .plan_create = cuda__plan_create, .plan_execute = cuda__plan_execute, .plan_destroy = cuda__plan_destroy,
  .plan_describe = cuda__plan_describe };

__attribute__((visibility("default"))) const adnn_plugin *adnn_plugin_entry(uint32_t v, const adnn_plugin_host *h) {
  (void)v; cuda__host = h; return &table; }
