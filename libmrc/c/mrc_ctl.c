/*
 * libmrc's control API (include/mrc_ctl.h) over the Rust core
 * (libmrc/src/ctl.rs).
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "mrc_ctl.h"

/* The device's limits (libmrc/src/ctl.rs). */
enum {
  CTL_MAX_PROFILES = 256,
  CTL_EV_BITS = 16,
};

struct mrc_ctl_ev_cq {
  struct mrc_ibv_context *ctx;
};

int mrc_ctl_query_device(struct ibv_context *ctx,
                         struct mrc_ctl_device_attr *attr) {
  if (!mrc_ours(ctx) || !attr)
    return EINVAL;
  memset(attr, 0, sizeof(*attr));
  attr->max_ev_format_profiles = CTL_MAX_PROFILES;
  attr->max_ev_profiles = CTL_MAX_PROFILES;
  attr->max_cc_profiles = CTL_MAX_PROFILES;
  attr->max_evs_per_profile = MRC_DEV_MAX_EVS;
  attr->max_ev_fields = MRC_CTL_MAX_EV_FIELDS;
  attr->ev_bits = CTL_EV_BITS;
  attr->phys_port_cnt = 1;
  return 0;
}

int mrc_ctl_query_port(struct ibv_context *ctx, uint8_t port_num,
                       struct mrc_ctl_port_attr *attr) {
  if (!mrc_ours(ctx) || !attr || port_num != 1)
    return EINVAL;
  struct ibv_port_attr pa;
  int rc = ibv_query_port(ctx, port_num, &pa);
  if (rc)
    return rc;
  int up = mrcx_port_up(mrc_ours(ctx)->rs, (uint8_t)(port_num - 1));
  if (up < 0)
    return -up;
  memset(attr, 0, sizeof(*attr));
  attr->state = pa.state;
  attr->admin_up = (uint32_t)up;
  attr->active_mtu = pa.active_mtu;
  return 0;
}

/* A soft NIC's port goes down and up (docs/host.md, "Ports"); a card
 * refuses down with EOPNOTSUPP (up: 0, its port is always up). */
int mrc_ctl_set_port_admin_state(struct ibv_context *ctx, uint8_t port_num,
                                 int up) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || port_num != 1)
    return EINVAL;
  return mrcx_port_set_up(c->rs, (uint8_t)(port_num - 1), up);
}

int mrc_ctl_create_ev_format_profile(struct ibv_context *ctx,
                                     const struct mrc_ctl_ev_format_attr *attr,
                                     uint32_t *id) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || !attr || !id || attr->num_fields > MRC_CTL_MAX_EV_FIELDS)
    return EINVAL;
  return mrcx_ctl_create_ev_format(c->rs, attr->field_bits, attr->num_fields,
                                   id);
}

int mrc_ctl_destroy_ev_format_profile(struct ibv_context *ctx, uint32_t id) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  return c ? mrcx_ctl_destroy_ev_format(c->rs, id) : EINVAL;
}

int mrc_ctl_create_ev_profile(struct ibv_context *ctx,
                              const struct mrc_ctl_ev_profile_attr *attr,
                              uint32_t *id) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || !attr || !id)
    return EINVAL;
  int explicit_ = attr->type == MRC_CTL_EV_PROFILE_EXPLICIT;
  if (explicit_ && (!attr->evs || attr->ev_count == 0))
    return EINVAL;
  return mrcx_ctl_create_ev_profile(
      c->rs, (uint32_t)attr->type, attr->ev_format_id, attr->ev_count,
      attr->ev_min_active, attr->event_mask, explicit_ ? attr->evs : NULL,
      explicit_ ? attr->ev_count : 0, attr->ev_base, id);
}

int mrc_ctl_destroy_ev_profile(struct ibv_context *ctx, uint32_t id) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  return c ? mrcx_ctl_destroy_ev_profile(c->rs, id) : EINVAL;
}

int mrc_ctl_modify_ev_profile_state(struct ibv_context *ctx, uint32_t id,
                                    enum mrc_ctl_profile_state state) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  return c ? mrcx_ctl_profile_state(c->rs, 0, id, (uint32_t)state) : EINVAL;
}

int mrc_ctl_query_ev_profile(struct ibv_context *ctx, uint32_t id,
                             struct mrc_ctl_ev_profile_attr *attr,
                             enum mrc_ctl_profile_state *state, uint32_t *evs,
                             uint32_t max_evs, uint32_t *num_evs) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || !attr || (max_evs && !evs))
    return EINVAL;
  uint32_t a[MRCX_QUERY_EV_ATTRS];
  uint32_t n = 0;
  int rc = mrcx_ctl_query_ev_profile(c->rs, id, a, evs, max_evs, &n);
  if (rc)
    return rc;
  memset(attr, 0, sizeof(*attr));
  attr->type = (enum mrc_ctl_ev_profile_type)a[0];
  attr->ev_format_id = a[1];
  attr->ev_count = a[2];
  attr->ev_min_active = a[3];
  attr->event_mask = a[4];
  attr->ev_base = a[5];
  if (state)
    *state = (enum mrc_ctl_profile_state)a[6];
  if (num_evs)
    *num_evs = n;
  return 0;
}

int mrc_ctl_replace_evs(struct ibv_context *ctx, uint32_t id,
                        const uint32_t *evs, uint32_t count) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || !evs || count == 0)
    return EINVAL;
  return mrcx_ctl_replace_evs(c->rs, id, evs, count);
}

int mrc_ctl_set_ev_state(struct ibv_context *ctx, uint32_t id, uint32_t ev,
                         enum mrc_ctl_ev_state state) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  return c ? mrcx_ctl_set_ev_state(c->rs, id, ev, (uint32_t)state) : EINVAL;
}

/* NSCC's parameters in the core's order (libmrc/src/ctl.rs). */
static void cc_params(const struct mrc_ctl_cc_profile_attr *a, uint32_t *p) {
  const uint32_t v[MRCX_NSCC_PARAMS] = {
      a->disable_qa, a->adjust_bytes_threshold, a->adjust_period_threshold,
      a->base_rtt,   a->eta,                    a->fi,
      a->fi_scale,   a->gamma,                  a->max_md_jump,
      a->max_cwnd,   a->qa_gate,                a->qa_threshold,
      a->target_delay};
  memcpy(p, v, sizeof(v));
}

int mrc_ctl_create_cc_profile(struct ibv_context *ctx,
                              const struct mrc_ctl_cc_profile_attr *attr,
                              uint32_t *id) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || !attr || !id ||
      !memchr(attr->algorithm, 0, sizeof(attr->algorithm)))
    return EINVAL;
  uint32_t p[MRCX_NSCC_PARAMS];
  cc_params(attr, p);
  return mrcx_ctl_create_cc_profile(c->rs, attr->algorithm, p, id);
}

int mrc_ctl_destroy_cc_profile(struct ibv_context *ctx, uint32_t id) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  return c ? mrcx_ctl_destroy_cc_profile(c->rs, id) : EINVAL;
}

int mrc_ctl_modify_cc_profile_state(struct ibv_context *ctx, uint32_t id,
                                    enum mrc_ctl_profile_state state) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  return c ? mrcx_ctl_profile_state(c->rs, 1, id, (uint32_t)state) : EINVAL;
}

int mrc_ctl_query_cc_profile(struct ibv_context *ctx, uint32_t id,
                             struct mrc_ctl_cc_profile_attr *attr,
                             enum mrc_ctl_profile_state *state) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || !attr)
    return EINVAL;
  uint32_t p[MRCX_NSCC_PARAMS];
  uint32_t s = 0;
  int rc = mrcx_ctl_query_cc_profile(c->rs, id, p, &s);
  if (rc)
    return rc;
  memset(attr, 0, sizeof(*attr));
  strcpy(attr->algorithm, MRC_CTL_CC_NSCC);
  uint32_t *f[MRCX_NSCC_PARAMS] = {
      &attr->disable_qa, &attr->adjust_bytes_threshold,
      &attr->adjust_period_threshold, &attr->base_rtt, &attr->eta, &attr->fi,
      &attr->fi_scale, &attr->gamma, &attr->max_md_jump, &attr->max_cwnd,
      &attr->qa_gate, &attr->qa_threshold, &attr->target_delay};
  for (int i = 0; i < MRCX_NSCC_PARAMS; i++)
    *f[i] = p[i];
  if (state)
    *state = (enum mrc_ctl_profile_state)s;
  return 0;
}

struct mrc_ctl_ev_cq *mrc_ctl_create_ev_cq(struct ibv_context *ctx, int cqe) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || cqe <= 0) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_ctl_ev_cq *cq = calloc(1, sizeof(*cq));
  if (!cq) {
    errno = ENOMEM;
    return NULL;
  }
  int rc = mrcx_ctl_open_ev_cq(c->rs);
  if (rc) {
    free(cq);
    errno = rc;
    return NULL;
  }
  cq->ctx = c;
  mrc_ref(&c->refs);
  return cq;
}

int mrc_ctl_destroy_ev_cq(struct mrc_ctl_ev_cq *cq) {
  if (!cq)
    return EINVAL;
  int rc = mrcx_ctl_close_ev_cq(cq->ctx->rs);
  if (rc)
    return rc;
  mrc_unref(&cq->ctx->refs);
  free(cq);
  return 0;
}

int mrc_ctl_poll_ev_cq(struct mrc_ctl_ev_cq *cq, int num_entries,
                       struct mrc_ctl_ev_event *events) {
  if (!cq || num_entries < 0 || (num_entries > 0 && !events))
    return -EINVAL;
  enum { BATCH = 32 };
  struct mrcx_ev_event got[BATCH];
  int want = num_entries < BATCH ? num_entries : BATCH;
  int n = mrcx_ctl_poll_ev_cq(cq->ctx->rs, want, got);
  for (int i = 0; i < n; i++) {
    memset(&events[i], 0, sizeof(events[i]));
    events[i].ev_profile_id = got[i].ev_profile_id;
    events[i].ev = got[i].ev;
    events[i].qp_num = got[i].qp_num;
    events[i].port = 1;
    events[i].new_state = (uint8_t)got[i].new_state;
    events[i].reason = (uint8_t)got[i].reason;
    events[i].time_ns = got[i].time_ns;
  }
  return n;
}

/* How long mrc_ctl_post_endpoint_ops waits without any answer or
 * progress before it gives up on what is left: above the device's own
 * timeout, after which each unanswered request reports ETIMEDOUT. */
enum { ENDPOINT_STALL_MS = 5000, ENDPOINT_POLL_US = 20 };

static long ms_since(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int mrc_ctl_post_endpoint_ops(struct ibv_context *ctx,
                              struct mrc_ctl_endpoint_op *ops, int count) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || !ops || count <= 0)
    return EINVAL;
  for (int i = 0; i < count; i++)
    if (ops[i].type != MRC_CTL_ENDPOINT_EV_PROBE &&
        ops[i].type != MRC_CTL_ENDPOINT_PORT_STATUS_UPDATE)
      return EINVAL;
  uint32_t *ids = calloc((size_t)count, sizeof(*ids));
  char *waiting = calloc((size_t)count, 1);
  if (!ids || !waiting) {
    free(ids);
    free(waiting);
    return ENOMEM;
  }
  for (int i = 0; i < count; i++) {
    ops[i].rtt_ns = ops[i].service_time_ns = ops[i].peer_ports_up = 0;
    ops[i].status = EAGAIN; /* until sent */
  }
  /* Post as many as the device takes (it holds a bounded number awaiting
   * answers), claim the answers of ours, post more, until every op is
   * answered or nothing moves for ENDPOINT_STALL_MS. */
  int next = 0, outstanding = 0;
  struct timespec last;
  clock_gettime(CLOCK_MONOTONIC, &last);
  while (next < count || outstanding > 0) {
    int moved = 0;
    while (next < count) {
      int st = mrcx_ctl_endpoint_post(c->rs, (uint32_t)ops[next].type,
                                      ops[next].peer.raw, ops[next].ev,
                                      ops[next].port, &ids[next]);
      if (st == EOPNOTSUPP) {
        free(ids);
        free(waiting);
        return EOPNOTSUPP;
      }
      if (st == EAGAIN)
        break; /* full: post the rest as answers come */
      ops[next].status = st;
      waiting[next] = st == 0;
      outstanding += waiting[next];
      next++;
      moved = 1;
    }
    for (int i = 0; i < next; i++) {
      if (!waiting[i])
        continue;
      uint32_t rtt = 0, svc = 0, up = 0;
      int st = 0;
      int got = mrcx_ctl_endpoint_take(c->rs, ids[i], &st, &rtt, &svc, &up);
      if (got == 1) {
        waiting[i] = 0;
        outstanding--;
        ops[i].status = st;
        ops[i].rtt_ns = rtt;
        ops[i].service_time_ns = svc;
        ops[i].peer_ports_up = up;
        moved = 1;
      }
    }
    if (moved) {
      clock_gettime(CLOCK_MONOTONIC, &last);
      continue;
    }
    if (ms_since(&last) > ENDPOINT_STALL_MS)
      break;
    struct timespec nap = {0, ENDPOINT_POLL_US * 1000};
    nanosleep(&nap, NULL);
  }
  for (int i = 0; i < next; i++)
    if (waiting[i])
      ops[i].status = ETIMEDOUT;
  free(ids);
  free(waiting);
  return 0;
}
