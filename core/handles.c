/*
 * The process-wide registry of live handles. Every public function that takes
 * a context or a plan looks it up here before reading through it, so that a
 * destroyed, foreign or garbage handle is refused with a message instead of
 * crashing. The registry keeps the addresses only (two sorted arrays, the
 * same structure as a context's allocation map): a lookup is a binary search
 * under a read lock, shared by all threads.
 *
 * An address freed by a destroy and reused by a later create of the same type
 * is a live handle again; the registry cannot tell the old handle from the
 * new one (doc/context.md says so).
 *
 * Plans are linked into their context's list (adnn__plan_link). Destroying a
 * context releases the plugin state of its plans under the write lock and
 * leaves them as orphans: still registered, so that adnn_plan_execute can say
 * the context was destroyed and adnn_plan_destroy can free the shell.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>

#include "core/internal.h"

static pthread_rwlock_t registry_lock = PTHREAD_RWLOCK_INITIALIZER;
static adnn__alloc_map live_contexts; /* regions of size 1 at each handle */
static adnn__alloc_map live_plans;

static int is_live(const adnn__alloc_map *set, const void *p) {
  return adnn__alloc_map_at(set, (uintptr_t)p) != NULL;
}

int adnn__handle_add_context(adnn_context *ctx) {
  pthread_rwlock_wrlock(&registry_lock);
  int ok = adnn__alloc_map_insert(&live_contexts, (uintptr_t)ctx, 1, ADNN__REGION_MALLOC, NULL);
  pthread_rwlock_unlock(&registry_lock);
  return ok == 1;
}

int adnn__handle_add_plan(struct adnn_plan *plan, adnn_context *ctx) {
  adnn__plan_link *link = (adnn__plan_link *)plan;
  pthread_rwlock_wrlock(&registry_lock);
  int ok = adnn__alloc_map_insert(&live_plans, (uintptr_t)plan, 1, ADNN__REGION_MALLOC, NULL);
  if (ok == 1) {
    link->ctx = ctx;
    link->prev = NULL;
    link->next = ctx->plans;
    if (ctx->plans != NULL) ((adnn__plan_link *)ctx->plans)->prev = plan;
    ctx->plans = plan;
  }
  pthread_rwlock_unlock(&registry_lock);
  return ok == 1;
}

static adnn_status dead_context(const char *func, const adnn_context *ctx) {
  return adnn__fail(ADNN_STATUS_BAD_PARAM_HANDLE,
                    "%s: ctx %p is not a live context: it was destroyed, or it was never "
                    "returned by adnn_context_create", func, (const void *)ctx);
}

static adnn_status dead_plan(const char *func, const struct adnn_plan *plan) {
  return adnn__fail(ADNN_STATUS_BAD_PARAM_HANDLE,
                    "%s: plan %p is not a live plan: it was destroyed, or it was never "
                    "returned by an adnn_plan_create_* function", func, (const void *)plan);
}

adnn_status adnn__check_context(const char *func, const adnn_context *ctx) {
  if (ctx == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: ctx is NULL", func);
  pthread_rwlock_rdlock(&registry_lock);
  int live = is_live(&live_contexts, ctx);
  pthread_rwlock_unlock(&registry_lock);
  return live ? ADNN_STATUS_SUCCESS : dead_context(func, ctx);
}

adnn_status adnn__check_plan(const char *func, const struct adnn_plan *plan, adnn_context **ctx) {
  if (plan == NULL) return adnn__fail(ADNN_STATUS_BAD_PARAM_NULL, "%s: plan is NULL", func);
  pthread_rwlock_rdlock(&registry_lock);
  int live = is_live(&live_plans, plan);
  if (live) *ctx = ((const adnn__plan_link *)plan)->ctx;
  pthread_rwlock_unlock(&registry_lock);
  return live ? ADNN_STATUS_SUCCESS : dead_plan(func, plan);
}

adnn_status adnn__handle_remove_context(const char *func, adnn_context *ctx) {
  pthread_rwlock_wrlock(&registry_lock);
  if (!adnn__alloc_map_remove(&live_contexts, (uintptr_t)ctx)) {
    pthread_rwlock_unlock(&registry_lock);
    return dead_context(func, ctx);
  }
  struct adnn_plan *plan = ctx->plans;
  while (plan != NULL) {
    adnn__plan_link *link = (adnn__plan_link *)plan;
    struct adnn_plan *next = link->next;
    adnn__plan_orphan(plan, ctx);
    link->ctx = NULL;
    link->prev = link->next = NULL;
    plan = next;
  }
  ctx->plans = NULL;
  if (live_contexts.count == 0) adnn__alloc_map_free(&live_contexts);
  pthread_rwlock_unlock(&registry_lock);
  return ADNN_STATUS_SUCCESS;
}

adnn_status adnn__handle_remove_plan(const char *func, struct adnn_plan *plan, adnn_context **ctx) {
  adnn__plan_link *link = (adnn__plan_link *)plan;
  pthread_rwlock_wrlock(&registry_lock);
  if (!adnn__alloc_map_remove(&live_plans, (uintptr_t)plan)) {
    pthread_rwlock_unlock(&registry_lock);
    return dead_plan(func, plan);
  }
  *ctx = link->ctx;
  if (link->ctx != NULL) {
    if (link->prev != NULL)
      ((adnn__plan_link *)link->prev)->next = link->next;
    else
      link->ctx->plans = link->next;
    if (link->next != NULL) ((adnn__plan_link *)link->next)->prev = link->prev;
  }
  /* Release the arrays with the last handle, so that a program that destroys
   * everything leaves nothing for leak checkers to report. */
  if (live_plans.count == 0) adnn__alloc_map_free(&live_plans);
  pthread_rwlock_unlock(&registry_lock);
  return ADNN_STATUS_SUCCESS;
}
