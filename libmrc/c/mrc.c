/*
 * libmrc's functions (include/mrc.h) over the Rust core.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mrc.h"

struct mrc_comp_channel {
  struct mrc_context *ctx;
  void *rs;
  int refs; /* CQs */
};

struct mrc_cq {
  struct mrc_context *ctx;
  void *rs;
  void *cq_context;
  struct mrc_comp_channel *channel;
  int refs;                 /* QPs whose send or receive CQ it is */
  unsigned events_taken;    /* by mrc_get_cq_event */
  unsigned events_acked;    /* by mrc_ack_cq_events */
};

struct mrc_qp_hint {
  struct mrc_context *ctx;
  struct mrc_qp_hint_attr attr;
  int refs; /* QPs that name it */
};

struct mrc_qp {
  struct mrc_context *ctx;
  void *rs;
  struct mrc_ibv_pd *pd;
  struct mrc_cq *send_cq, *recv_cq;
  struct mrc_qp_init_attr init; /* as created, for mrc_query_qp */
  /* What the transitions set, for mrc_query_qp. */
  struct ibv_qp_attr attr;
  struct mrc_qp_attr mrc;
  unsigned events_taken, events_acked; /* asynchronous events */
};

/* What the core's device offers (the driver's limits). */
enum {
  MRC_MAX_WIMM = 256,
  MRC_MAX_MPR_UNITS = 255, /* receive window, units of 128 PSNs */
  MRC_MPR_RESOLUTION_UNITS = 1,
  MRC_MAX_TIMEOUT_EXP = 24,
  MRC_MAX_RETRY_LINEAR = 7,
  MRC_MAX_RETRY_EXP = 25,
};

/* The QP capabilities this library knows (mrc_qp_attr.cap). */
#define MRC_QP_CAP_KNOWN                                                       \
  (MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED | MRC_QP_CAP_DYNAMIC_MPR |           \
   MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED)

/* -1 with errno, for the calls that report that way. */
static int fail(int err) {
  errno = err;
  return -1;
}

/* Our provider data is empty: any non-zero byte in a vendor_cfg is data
 * meant for another provider. */
static int vendor_cfg_empty(const uint8_t *cfg) {
  for (int i = 0; i < MRC_MAX_VENDOR_CFG_SIZE; i++)
    if (cfg[i])
      return 0;
  return 1;
}

static void fill_device_attr(struct mrc_device_attr *attr) {
  attr->mrc_protocol_version = MRC_PROTOCOL_VERSION_1;
  attr->wimm_attr.max_wimm = MRC_MAX_WIMM;
  attr->wimm_attr.max_wimm_dest = MRC_MAX_WIMM;
  attr->mpr_attr.max_mpr = MRC_MAX_MPR_UNITS;
  attr->mpr_attr.mpr_resolution = MRC_MPR_RESOLUTION_UNITS;
  attr->qp_attr.max_qp_hint = MRC_DEV_MAX_QP_HINT;
  attr->cap = MRC_DEVICE_CAP_TRIM_NACK | MRC_DEVICE_CAP_DYNAMIC_MPR |
              MRC_DEVICE_CAP_SVC_TIME;
}

int mrc_query_device(struct ibv_context *context, struct mrc_device_attr *attr,
                     int *supported) {
  if (!context || !attr || !supported)
    return fail(EINVAL);
  struct mrc_ibv_context *c = mrc_ours(context);
  *supported = c != NULL;
  memset(attr, 0, sizeof(*attr));
  if (c)
    fill_device_attr(attr);
  return 0;
}

int mrc_query_device_ex(struct ibv_context *context,
                        struct mrc_context *mcontext,
                        struct mrc_device_attr *attr, int *supported) {
  /* The MRC context, when given, must be one of this device's. */
  if (mcontext && context && mcontext->ibv != mrc_ours(context))
    return fail(EINVAL);
  return mrc_query_device(context, attr, supported);
}

void mrc_query_version(uint32_t *current_version,
                       uint32_t *last_supported_version,
                       uint32_t *vendor_version,
                       uint32_t *last_supported_vendor_version) {
  if (current_version)
    *current_version = MRC_API_CURRENT_VERSION;
  if (last_supported_version)
    *last_supported_version = MRC_API_LAST_SUPPORTED_VERSION;
  if (vendor_version)
    *vendor_version = MRC_VENDOR_API_CURRENT_VERSION;
  if (last_supported_vendor_version)
    *last_supported_vendor_version = MRC_VENDOR_API_LAST_SUPPORTED_VERSION;
}

struct mrc_context *mrc_create_context(struct ibv_context *vcontext,
                                       struct mrc_context_attr *context_attr) {
  struct mrc_ibv_context *c = mrc_ours(vcontext);
  if (!c) {
    errno = ENODEV;
    return NULL;
  }
  /* 0 is "the newest"; anything up to this library's version is served
   * with the current semantics (nothing changed for a program between
   * the versions this library accepts). */
  if (context_attr &&
      (context_attr->mrc_api_version_used > MRC_API_CURRENT_VERSION ||
       context_attr->mrc_vendor_api_version_used >
           MRC_VENDOR_API_CURRENT_VERSION)) {
    errno = EPROTONOSUPPORT;
    return NULL;
  }
  struct mrc_context *m = calloc(1, sizeof(*m));
  if (!m) {
    errno = ENOMEM;
    return NULL;
  }
  m->ibv = c;
  mrc_ref(&c->refs);
  return m;
}

int mrc_destroy_context(struct mrc_context *mrc_ctx) {
  if (!mrc_ctx)
    return fail(EINVAL);
  if (mrc_refs(&mrc_ctx->refs))
    return fail(EBUSY);
  mrc_unref(&mrc_ctx->ibv->refs);
  free(mrc_ctx);
  return 0;
}

int mrc_create_comp_channel(struct mrc_context *mrc_ctx,
                            struct mrc_comp_channel **channel) {
  if (!mrc_ctx || !channel)
    return EINVAL;
  struct mrc_comp_channel *ch = calloc(1, sizeof(*ch));
  if (!ch)
    return ENOMEM;
  ch->rs = mrcx_channel_create();
  if (!ch->rs) {
    free(ch);
    return EMFILE;
  }
  ch->ctx = mrc_ctx;
  mrc_ref(&mrc_ctx->refs);
  *channel = ch;
  return 0;
}

int mrc_get_comp_channel_fd(struct mrc_comp_channel *channel, int *fd) {
  if (!channel || !fd)
    return fail(EINVAL);
  *fd = mrcx_channel_fd(channel->rs);
  return 0;
}

int mrc_destroy_comp_channel(struct mrc_comp_channel *channel) {
  if (!channel)
    return EINVAL;
  if (mrc_refs(&channel->refs))
    return EBUSY;
  mrc_unref(&channel->ctx->refs);
  mrcx_channel_destroy(channel->rs);
  free(channel);
  return 0;
}

struct mrc_cq *mrc_create_cq(struct mrc_context *mrc_ctx, int cqe,
                             void *cq_context,
                             struct mrc_comp_channel *channel,
                             int comp_vector) {
  if (!mrc_ctx || cqe <= 0 || comp_vector != 0 ||
      (channel && channel->ctx != mrc_ctx)) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_cq *cq = calloc(1, sizeof(*cq));
  if (!cq) {
    errno = ENOMEM;
    return NULL;
  }
  cq->channel = channel;
  cq->rs = mrcx_create_cq(mrc_ctx->ibv->rs, cqe, (uintptr_t)cq,
                          channel ? channel->rs : NULL);
  if (!cq->rs) {
    free(cq);
    errno = ENOMEM;
    return NULL;
  }
  cq->ctx = mrc_ctx;
  cq->cq_context = cq_context;
  mrc_ref(&mrc_ctx->refs);
  if (channel)
    mrc_ref(&channel->refs);
  return cq;
}

int mrc_destroy_cq(struct mrc_cq *cq) {
  if (!cq)
    return EINVAL;
  /* QPs still use it, or events taken from its channel are not acked. */
  if (mrc_refs(&cq->refs) ||
      __atomic_load_n(&cq->events_taken, __ATOMIC_ACQUIRE) !=
          __atomic_load_n(&cq->events_acked, __ATOMIC_ACQUIRE))
    return EBUSY;
  int rc = mrcx_destroy_cq(cq->ctx->ibv->rs, cq->rs);
  if (rc)
    return rc;
  if (cq->channel)
    mrc_unref(&cq->channel->refs);
  mrc_unref(&cq->ctx->refs);
  free(cq);
  return 0;
}

int mrc_req_notify_cq(struct mrc_cq *cq, int solicited_only) {
  (void)solicited_only; /* every completion notifies (see mrc.h) */
  if (!cq)
    return EINVAL;
  return mrcx_req_notify(cq->rs);
}

int mrc_get_cq_event(struct mrc_comp_channel *channel, struct mrc_cq **cq,
                     void **cq_context) {
  if (!channel || !cq || !cq_context)
    return fail(EINVAL);
  uintptr_t h = 0;
  int rc = mrcx_channel_get_event(channel->rs, &h);
  if (rc)
    return fail(rc);
  struct mrc_cq *c = (struct mrc_cq *)h;
  __atomic_fetch_add(&c->events_taken, 1, __ATOMIC_ACQ_REL);
  *cq = c;
  *cq_context = c->cq_context;
  return 0;
}

void mrc_ack_cq_events(struct mrc_cq *cq, unsigned int nevents) {
  if (cq)
    __atomic_fetch_add(&cq->events_acked, nevents, __ATOMIC_ACQ_REL);
}

int mrc_get_async_event(struct mrc_context *mrc_ctx,
                        struct mrc_async_event *event) {
  if (!mrc_ctx || !event)
    return fail(EINVAL);
  struct mrcx_async_event e;
  int rc = mrcx_get_async_event(mrc_ctx->ibv->rs, &e);
  if (rc)
    return fail(rc);
  memset(event, 0, sizeof(*event));
  event->event_type = (enum ibv_event_type)e.event_type;
  if (e.event_type == IBV_EVENT_CQ_ERR) {
    event->element.cq = (struct mrc_cq *)e.handle;
  } else {
    event->element.qp = (struct mrc_qp *)e.handle;
    __atomic_fetch_add(&event->element.qp->events_taken, 1, __ATOMIC_ACQ_REL);
  }
  return 0;
}

void mrc_ack_async_event(struct mrc_async_event *event) {
  if (event && event->event_type != IBV_EVENT_CQ_ERR && event->element.qp)
    __atomic_fetch_add(&event->element.qp->events_acked, 1, __ATOMIC_ACQ_REL);
}

/* QP hints. Our devices size nothing by them: a hint is validated,
 * stored, reported and counted against the QPs that name it. */
#define MRC_QP_HINT_COUNTS                                                     \
  (MRC_QP_HINT_NUM_QPS_PER_PEER | MRC_QP_HINT_NUM_SEND_PEERS |                \
   MRC_QP_HINT_NUM_REMOTE_RECV_PEERS)
#define MRC_QP_HINT_KNOWN (MRC_QP_HINT_COUNTS | MRC_QP_HINT_VENDOR_CFG)

/* Whether the fields mask names hold values a hint may take. */
static int hint_attr_valid(const struct mrc_qp_hint_attr *a, int mask) {
  if ((unsigned)mask & ~(unsigned)MRC_QP_HINT_KNOWN)
    return 0;
  if ((mask & MRC_QP_HINT_NUM_QPS_PER_PEER && a->num_qps_per_peer < 0) ||
      (mask & MRC_QP_HINT_NUM_SEND_PEERS && a->num_send_peers < 0) ||
      (mask & MRC_QP_HINT_NUM_REMOTE_RECV_PEERS &&
       a->num_remote_recv_peers < 0))
    return 0;
  return !(mask & MRC_QP_HINT_VENDOR_CFG) || vendor_cfg_empty(a->vendor_cfg);
}

static void hint_copy(struct mrc_qp_hint_attr *to,
                      const struct mrc_qp_hint_attr *from, int mask) {
  if (mask & MRC_QP_HINT_NUM_QPS_PER_PEER)
    to->num_qps_per_peer = from->num_qps_per_peer;
  if (mask & MRC_QP_HINT_NUM_SEND_PEERS)
    to->num_send_peers = from->num_send_peers;
  if (mask & MRC_QP_HINT_NUM_REMOTE_RECV_PEERS)
    to->num_remote_recv_peers = from->num_remote_recv_peers;
  if (mask & MRC_QP_HINT_VENDOR_CFG)
    memcpy(to->vendor_cfg, from->vendor_cfg, sizeof(to->vendor_cfg));
}

struct mrc_qp_hint *mrc_create_qp_hint(struct mrc_context *mrc_ctx,
                                       struct mrc_qp_hint_init_attr *init_attr) {
  if (!mrc_ctx || !init_attr ||
      !hint_attr_valid(&init_attr->attr, MRC_QP_HINT_KNOWN)) {
    errno = EINVAL;
    return NULL;
  }
  if (__atomic_add_fetch(&mrc_ctx->hints, 1, __ATOMIC_ACQ_REL) >
      MRC_DEV_MAX_QP_HINT) {
    __atomic_sub_fetch(&mrc_ctx->hints, 1, __ATOMIC_ACQ_REL);
    errno = ENOMEM;
    return NULL;
  }
  struct mrc_qp_hint *h = calloc(1, sizeof(*h));
  if (!h) {
    __atomic_sub_fetch(&mrc_ctx->hints, 1, __ATOMIC_ACQ_REL);
    errno = ENOMEM;
    return NULL;
  }
  h->ctx = mrc_ctx;
  h->attr = init_attr->attr;
  mrc_ref(&mrc_ctx->refs);
  return h;
}

int mrc_destroy_qp_hint(struct mrc_qp_hint *qp_hint) {
  if (!qp_hint)
    return fail(EINVAL);
  if (mrc_refs(&qp_hint->refs))
    return fail(EBUSY);
  __atomic_sub_fetch(&qp_hint->ctx->hints, 1, __ATOMIC_ACQ_REL);
  mrc_unref(&qp_hint->ctx->refs);
  free(qp_hint);
  return 0;
}

int mrc_query_qp_hint(struct mrc_qp_hint *qp_hint,
                      struct mrc_qp_hint_attr *qp_hint_attr,
                      int qp_hint_attr_mask) {
  if (!qp_hint || !qp_hint_attr ||
      ((unsigned)qp_hint_attr_mask & ~(unsigned)MRC_QP_HINT_KNOWN))
    return fail(EINVAL);
  hint_copy(qp_hint_attr, &qp_hint->attr, qp_hint_attr_mask);
  return 0;
}

int mrc_modify_qp_hint(struct mrc_qp_hint *qp_hint,
                       struct mrc_qp_hint_attr *qp_hint_attr,
                       int qp_hint_attr_mask) {
  if (!qp_hint || !qp_hint_attr ||
      !hint_attr_valid(qp_hint_attr, qp_hint_attr_mask))
    return fail(EINVAL);
  hint_copy(&qp_hint->attr, qp_hint_attr, qp_hint_attr_mask);
  return 0;
}

static enum ibv_wc_status wc_status(uint32_t s) {
  switch (s) {
  case 0: /* Success */
    return IBV_WC_SUCCESS;
  case 1: /* BadOpcode */
  case 2: /* BadFlags */
    return IBV_WC_LOC_QP_OP_ERR;
  case 3: /* BadLength */
    return IBV_WC_LOC_LEN_ERR;
  case 4: /* BadDoorbell */
    return IBV_WC_LOC_QP_OP_ERR;
  case 5: /* Flushed */
    return IBV_WC_WR_FLUSH_ERR;
  case 6: /* RetryExceeded */
    return IBV_WC_RETRY_EXC_ERR;
  case 7: /* RemoteAccess */
    return IBV_WC_REM_ACCESS_ERR;
  default:
    return IBV_WC_GENERAL_ERR;
  }
}

int mrc_poll_cq(struct mrc_cq *cq, int num_entries, struct ibv_wc *wc) {
  if (!cq || num_entries < 0 || (num_entries > 0 && !wc))
    return fail(EINVAL);
  struct mrcx_wc got[64];
  int want = num_entries < 64 ? num_entries : 64;
  int n = mrcx_poll(cq->ctx->ibv->rs, cq->rs, want, got);
  for (int i = 0; i < n; i++) {
    memset(&wc[i], 0, sizeof(wc[i]));
    wc[i].wr_id = got[i].wr_id;
    wc[i].status = wc_status(got[i].status);
    wc[i].opcode = got[i].opcode == 2 ? IBV_WC_RECV_RDMA_WITH_IMM
                                      : IBV_WC_RDMA_WRITE;
    wc[i].byte_len = got[i].byte_len;
    wc[i].qp_num = got[i].qp_num;
    if (got[i].has_imm) {
      wc[i].imm_data = htonl(got[i].imm);
      wc[i].wc_flags = IBV_WC_WITH_IMM;
    }
  }
  return n;
}

/* The send operations a QP may be created for: WRITE and
 * WRITE-with-immediate. */
#define MRC_SEND_OPS                                                           \
  ((uint64_t)IBV_QP_EX_WITH_RDMA_WRITE |                                       \
   (uint64_t)IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)

struct mrc_qp *mrc_create_qp(struct mrc_context *mrc_ctx,
                             struct mrc_qp_init_attr *mrc_qp_attr) {
  struct mrc_qp_init_attr *a = mrc_qp_attr;
  if (!mrc_ctx || !a || !a->send_cq || !a->recv_cq || !a->pd ||
      a->send_cq->ctx != mrc_ctx || a->recv_cq->ctx != mrc_ctx ||
      a->pd->context != &mrc_ctx->ibv->ctx || a->cap.max_send_sge > 1 ||
      a->cap.max_recv_sge > 1 || a->cap.max_send_wr > MRC_DEV_MAX_QP_WR ||
      (a->send_ops_flags & ~MRC_SEND_OPS) ||
      (a->protocol_version != MRC_PROTOCOL_VERSION_0 &&
       a->protocol_version != MRC_PROTOCOL_VERSION_1)) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_qp *qp = calloc(1, sizeof(*qp));
  if (!qp) {
    errno = ENOMEM;
    return NULL;
  }
  struct mrc_ibv_pd *pd = (struct mrc_ibv_pd *)a->pd;
  uint32_t wr = a->cap.max_send_wr ? a->cap.max_send_wr : 1;
  qp->rs = mrcx_create_qp(mrc_ctx->ibv->rs, pd->rs, a->send_cq->rs,
                          a->recv_cq->rs, wr, (uintptr_t)qp);
  if (!qp->rs) {
    free(qp);
    errno = ENOMEM;
    return NULL;
  }
  qp->ctx = mrc_ctx;
  qp->pd = pd;
  qp->send_cq = a->send_cq;
  qp->recv_cq = a->recv_cq;
  qp->init = *a;
  qp->init.cap.max_send_wr = wr;
  if (qp->init.protocol_version == MRC_PROTOCOL_VERSION_0)
    qp->init.protocol_version = MRC_PROTOCOL_VERSION_1;
  qp->attr.qp_state = IBV_QPS_RESET;
  mrc_ref(&mrc_ctx->refs);
  mrc_ref(&pd->refs);
  mrc_ref(&qp->send_cq->refs);
  mrc_ref(&qp->recv_cq->refs);
  return qp;
}

/* The QP lets go of its hint (at RST and when destroyed). */
static void release_hint(struct mrc_qp *qp) {
  if (qp->mrc.qp_hint) {
    mrc_unref(&qp->mrc.qp_hint->refs);
    qp->mrc.qp_hint = NULL;
  }
}

int mrc_destroy_qp(struct mrc_qp *qp) {
  if (!qp)
    return EINVAL;
  if (__atomic_load_n(&qp->events_taken, __ATOMIC_ACQUIRE) !=
      __atomic_load_n(&qp->events_acked, __ATOMIC_ACQUIRE))
    return EBUSY;
  int rc = mrcx_destroy_qp(qp->rs);
  if (rc)
    return rc;
  release_hint(qp);
  mrc_unref(&qp->recv_cq->refs);
  mrc_unref(&qp->send_cq->refs);
  mrc_unref(&qp->pd->refs);
  mrc_unref(&qp->ctx->refs);
  free(qp);
  return 0;
}

int mrc_get_qpn(struct mrc_qp *qp, uint32_t *qpn) {
  if (!qp || !qpn)
    return fail(EINVAL);
  *qpn = mrcx_qpn(qp->rs);
  return 0;
}

/* The QP's state as the core holds it (an error completion moves it to
 * ERR without a modify). */
static enum ibv_qp_state qp_state(struct mrc_qp *qp) {
  static const enum ibv_qp_state states[] = {IBV_QPS_RESET, IBV_QPS_INIT,
                                             IBV_QPS_RTR, IBV_QPS_RTS,
                                             IBV_QPS_ERR};
  int s = mrcx_qp_state(qp->rs);
  return (s >= 0 && s <= 4) ? states[s] : IBV_QPS_UNKNOWN;
}

/* The verbs attributes each transition needs, and those refused (MRC
 * has no alternate path). */
enum {
  RTR_NEEDS = IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_PATH_MTU,
  RTS_NEEDS = IBV_QP_SQ_PSN,
  REFUSED = IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE,
};

/* The MRC attributes of each transition (mrc.h, enum mrc_qp_attr_mask). */
enum {
  INIT_MRC = MRC_QP_HINT | MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID,
  RTR_MRC = MRC_QP_MAX_WIMM_DEST | MRC_QP_MPR_DEST | MRC_QP_CAP,
  RTS_MRC = MRC_QP_MAX_WIMM | MRC_QP_MPR | MRC_QP_RETRY_CNT | MRC_QP_TIMEOUT,
};

/* Whether the MRC attributes mask names are for transition `to` and
 * within the device's limits. */
static int mrc_attr_valid(struct mrc_qp *qp, enum ibv_qp_state to,
                          const struct mrc_qp_attr *m, int mask) {
  unsigned u = (unsigned)mask;
  unsigned mine = to == IBV_QPS_INIT  ? INIT_MRC
                  : to == IBV_QPS_RTR ? RTR_MRC
                  : to == IBV_QPS_RTS ? RTS_MRC
                                      : 0;
  mine |= (unsigned)MRC_QP_VENDOR_CFG; /* any transition */
  if (u & ~mine)
    return 0;
  if (!m) /* no attributes named (mrc_modify_qp refuses a mask without) */
    return 1;
  if ((u & MRC_QP_MAX_WIMM && m->wimm.max_wimm > MRC_MAX_WIMM) ||
      (u & MRC_QP_MAX_WIMM_DEST && m->wimm.max_wimm_dest > MRC_MAX_WIMM) ||
      (u & MRC_QP_MPR && m->mpr.mpr > MRC_MAX_MPR_UNITS) ||
      (u & MRC_QP_MPR_DEST && m->mpr.mpr_dest > MRC_MAX_MPR_UNITS) ||
      (u & MRC_QP_TIMEOUT && m->timeout > MRC_MAX_TIMEOUT_EXP) ||
      (u & MRC_QP_RETRY_CNT && (m->retry.linear_cnt > MRC_MAX_RETRY_LINEAR ||
                                m->retry.exp_cnt > MRC_MAX_RETRY_EXP)) ||
      (u & MRC_QP_CAP && (m->cap & ~(uint32_t)MRC_QP_CAP_KNOWN)) ||
      (u & MRC_QP_HINT && m->qp_hint && m->qp_hint->ctx != qp->ctx) ||
      (u & MRC_QP_VENDOR_CFG && !vendor_cfg_empty(m->vendor_cfg)))
    return 0;
  return 1;
}

int mrc_modify_qp(struct mrc_qp *qp, struct ibv_qp_attr *vattr, int vattr_mask,
                  struct mrc_qp_attr *mrc_attr, int mrc_attr_mask) {
  if (!qp || !vattr || !(vattr_mask & IBV_QP_STATE) ||
      (mrc_attr_mask && !mrc_attr))
    return EINVAL;
  if (vattr_mask & REFUSED)
    return EINVAL;
  enum ibv_qp_state cur = qp_state(qp);
  if ((vattr_mask & IBV_QP_CUR_STATE) && vattr->cur_qp_state != cur)
    return EINVAL;
  if (!mrc_attr_valid(qp, vattr->qp_state, mrc_attr, mrc_attr_mask))
    return EINVAL;
  const struct mrc_qp_attr *m = mrc_attr;
  unsigned mm = (unsigned)mrc_attr_mask;
  int rc;
  switch (vattr->qp_state) {
  case IBV_QPS_RESET:
  case IBV_QPS_ERR:
    rc = mrcx_to_err_or_reset(qp->rs, vattr->qp_state == IBV_QPS_RESET);
    if (rc == 0 && vattr->qp_state == IBV_QPS_RESET) {
      release_hint(qp);
      memset(&qp->attr, 0, sizeof(qp->attr));
      memset(&qp->mrc, 0, sizeof(qp->mrc));
    }
    break;
  case IBV_QPS_INIT: {
    if (cur != IBV_QPS_RESET)
      return EINVAL;
    /* The profiles (mrc_ctl.h) must exist and be ONLINE: bind first, and
     * let go again if the transition fails. Profile ids are 32 bits
     * here. */
    uint64_t ev = (mm & MRC_QP_EV_PROFILE_ID) ? m->profile.ev_profile_id : 0;
    uint64_t cc = (mm & MRC_QP_CC_PROFILE_ID) ? m->profile.cc_profile_id : 0;
    if ((mm & MRC_QP_EV_PROFILE_ID && (ev == 0 || ev > UINT32_MAX)) ||
        (mm & MRC_QP_CC_PROFILE_ID && (cc == 0 || cc > UINT32_MAX)))
      return EINVAL;
    rc = mrcx_bind_profiles(qp->rs, (uint32_t)ev, (uint32_t)cc);
    if (rc)
      return rc;
    rc = mrcx_to_init(qp->rs);
    if (rc) {
      mrcx_bind_profiles(qp->rs, 0, 0);
      break;
    }
    if (mm & MRC_QP_HINT && m->qp_hint) {
      mrc_ref(&m->qp_hint->refs);
      qp->mrc.qp_hint = m->qp_hint;
    }
    break;
  }
  case IBV_QPS_RTR:
    if (cur != IBV_QPS_INIT || (vattr_mask & RTR_NEEDS) != RTR_NEEDS ||
        !vattr->ah_attr.is_global || vattr->path_mtu < IBV_MTU_256 ||
        vattr->path_mtu > IBV_MTU_4096)
      return EINVAL;
    /* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5: log2 = enum + 7. */
    rc = mrcx_to_rtr(qp->rs, vattr->dest_qp_num, vattr->rq_psn,
                     vattr->ah_attr.grh.dgid.raw,
                     (uint8_t)(vattr->path_mtu + 7),
                     (mm & MRC_QP_MAX_WIMM_DEST) ? m->wimm.max_wimm_dest : 0);
    break;
  case IBV_QPS_RTS: {
    if (cur != IBV_QPS_RTR || (vattr_mask & RTS_NEEDS) != RTS_NEEDS)
      return EINVAL;
    /* MRC's timeout and retries, else the verbs ones (a verbs retry count
     * beyond the 7 linear retries is the number of backoff retries: the
     * OCP benchmark asks for 14), else the defaults. */
    uint8_t timeout = (mm & MRC_QP_TIMEOUT)            ? m->timeout
                      : (vattr_mask & IBV_QP_TIMEOUT) ? vattr->timeout
                                                      : 0;
    uint8_t linear = MRC_MAX_RETRY_LINEAR, exp = 0;
    if (mm & MRC_QP_RETRY_CNT) {
      linear = m->retry.linear_cnt;
      exp = m->retry.exp_cnt;
    } else if (vattr_mask & IBV_QP_RETRY_CNT) {
      unsigned r = vattr->retry_cnt;
      linear = r > MRC_MAX_RETRY_LINEAR ? MRC_MAX_RETRY_LINEAR : (uint8_t)r;
      r -= linear;
      exp = r > MRC_MAX_RETRY_EXP ? MRC_MAX_RETRY_EXP : (uint8_t)r;
    }
    rc = mrcx_to_rts(qp->rs, vattr->sq_psn, timeout, linear, exp,
                     (mm & MRC_QP_MPR) ? m->mpr.mpr : 0,
                     (mm & MRC_QP_MAX_WIMM) ? m->wimm.max_wimm : 0);
    if (rc == 0 && !(mm & MRC_QP_RETRY_CNT)) {
      qp->mrc.retry.linear_cnt = linear;
      qp->mrc.retry.exp_cnt = exp;
    }
    break;
  }
  default:
    return EINVAL;
  }
  if (rc)
    return rc;
  /* Remember what was set, for mrc_query_qp. */
  if (vattr_mask & IBV_QP_PKEY_INDEX)
    qp->attr.pkey_index = vattr->pkey_index;
  if (vattr_mask & IBV_QP_PORT)
    qp->attr.port_num = vattr->port_num;
  if (vattr_mask & IBV_QP_ACCESS_FLAGS)
    qp->attr.qp_access_flags = vattr->qp_access_flags;
  if (vattr_mask & IBV_QP_AV)
    qp->attr.ah_attr = vattr->ah_attr;
  if (vattr_mask & IBV_QP_PATH_MTU)
    qp->attr.path_mtu = vattr->path_mtu;
  if (vattr_mask & IBV_QP_DEST_QPN)
    qp->attr.dest_qp_num = vattr->dest_qp_num;
  if (vattr_mask & IBV_QP_RQ_PSN)
    qp->attr.rq_psn = vattr->rq_psn & 0xFFFFFF;
  if (vattr_mask & IBV_QP_SQ_PSN)
    qp->attr.sq_psn = vattr->sq_psn & 0xFFFFFF;
  if (vattr_mask & IBV_QP_TIMEOUT)
    qp->attr.timeout = vattr->timeout;
  if (vattr_mask & IBV_QP_RETRY_CNT)
    qp->attr.retry_cnt = vattr->retry_cnt;
  if (vattr->qp_state == IBV_QPS_RTS && !(mm & MRC_QP_TIMEOUT))
    qp->mrc.timeout = (vattr_mask & IBV_QP_TIMEOUT) ? vattr->timeout : 0;
  if (mm & MRC_QP_EV_PROFILE_ID)
    qp->mrc.profile.ev_profile_id = m->profile.ev_profile_id;
  if (mm & MRC_QP_CC_PROFILE_ID)
    qp->mrc.profile.cc_profile_id = m->profile.cc_profile_id;
  if (mm & MRC_QP_MAX_WIMM_DEST)
    qp->mrc.wimm.max_wimm_dest = m->wimm.max_wimm_dest;
  if (mm & MRC_QP_MPR_DEST)
    qp->mrc.mpr.mpr_dest = m->mpr.mpr_dest;
  if (mm & MRC_QP_MAX_WIMM)
    qp->mrc.wimm.max_wimm = m->wimm.max_wimm;
  if (mm & MRC_QP_MPR)
    qp->mrc.mpr.mpr = m->mpr.mpr;
  if (mm & MRC_QP_TIMEOUT)
    qp->mrc.timeout = m->timeout;
  if (mm & MRC_QP_RETRY_CNT)
    qp->mrc.retry = m->retry;
  if (mm & MRC_QP_CAP)
    qp->mrc.cap = m->cap;
  return 0;
}

int mrc_query_qp(struct mrc_qp *qp, struct ibv_qp_attr *vattr, int vattr_mask,
                 struct mrc_qp_attr *mrc_attr, int mrc_attr_mask,
                 struct mrc_qp_init_attr *init_attr) {
  /* Every attribute is returned whatever the masks name, as verbs
   * providers do. */
  (void)vattr_mask;
  (void)mrc_attr_mask;
  if (!qp || !vattr)
    return EINVAL;
  *vattr = qp->attr;
  vattr->qp_state = qp_state(qp);
  vattr->cur_qp_state = vattr->qp_state;
  vattr->cap = qp->init.cap;
  if (init_attr)
    *init_attr = qp->init;
  if (mrc_attr)
    *mrc_attr = qp->mrc;
  return 0;
}

int mrc_post_send(struct mrc_qp *qp, struct ibv_send_wr *wr,
                  struct ibv_send_wr **bad_wr) {
  if (!qp || !wr) {
    if (bad_wr)
      *bad_wr = wr;
    return EINVAL;
  }
  for (; wr; wr = wr->next) {
    int rc;
    int imm = wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    if ((wr->opcode != IBV_WR_RDMA_WRITE && !imm) || wr->num_sge < 0 ||
        wr->num_sge > 1 || (wr->num_sge == 1 && !wr->sg_list)) {
      rc = EINVAL;
    } else {
      uint64_t addr = wr->num_sge ? wr->sg_list[0].addr : 0;
      uint32_t len = wr->num_sge ? wr->sg_list[0].length : 0;
      uint32_t lkey = wr->num_sge ? wr->sg_list[0].lkey : 0;
      int signaled =
          qp->init.sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED) != 0;
      rc = mrcx_post_write(qp->rs, wr->wr_id, addr, len, lkey,
                           wr->wr.rdma.remote_addr, wr->wr.rdma.rkey, signaled,
                           imm,
                           imm ? ntohl(wr->imm_data) : 0);
    }
    if (rc) {
      if (bad_wr)
        *bad_wr = wr;
      return rc;
    }
  }
  return 0;
}

int mrc_post_recv(struct mrc_qp *qp, struct ibv_recv_wr *wr,
                  struct ibv_recv_wr **bad_wr) {
  if (!qp || !wr) {
    if (bad_wr)
      *bad_wr = wr;
    return EINVAL;
  }
  for (; wr; wr = wr->next) {
    int rc = mrcx_post_recv(qp->rs, wr->wr_id);
    if (rc) {
      if (bad_wr)
        *bad_wr = wr;
      return rc;
    }
  }
  return 0;
}
