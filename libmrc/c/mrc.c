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

struct mrc_context {
  struct mrc_ibv_context *ibv;
  int refs; /* CQs, QPs */
};

struct mrc_cq {
  struct mrc_context *ctx;
  void *rs;
  void *cq_context;
  struct mrc_ibv_comp_channel *channel;
  int refs;                 /* QPs whose send or receive CQ it is */
  unsigned events_taken;    /* by mrc_get_cq_event */
  unsigned events_acked;    /* by mrc_ack_cq_events */
};

struct mrc_qp {
  struct mrc_context *ctx;
  void *rs;
  struct mrc_ibv_pd *pd;
  struct mrc_cq *send_cq, *recv_cq;
  void *qp_context;
  struct ibv_qp_cap cap;
  /* What the transitions set, for mrc_query_qp. */
  struct ibv_qp_attr attr;
  struct mrc_qp_attr mrc;
  unsigned events_taken, events_acked; /* asynchronous events */
};

/* What the core's device offers (the driver's limits). */
enum {
  MRC_MAX_WIMM = 256,
  MRC_MPR_RESOLUTION = 128,
  MRC_MAX_MPR = 255 * MRC_MPR_RESOLUTION,
};

int mrc_query_device(struct ibv_context *ctx, struct mrc_device_attr *attr,
                     int *supported) {
  if (!ctx || !attr || !supported)
    return EINVAL;
  struct mrc_ibv_context *c = mrc_ours(ctx);
  *supported = c != NULL;
  memset(attr, 0, sizeof(*attr));
  if (!c)
    return 0;
  attr->protocol_versions = 1u << (MRC_PROTOCOL_VERSION_1 - 1);
  attr->max_qp = MRC_DEV_MAX_QP;
  attr->max_cq = MRC_DEV_MAX_CQ;
  attr->max_qp_wr = MRC_DEV_MAX_QP_WR;
  attr->max_wimm = MRC_MAX_WIMM;
  attr->max_mpr = MRC_MAX_MPR;
  attr->mpr_resolution = MRC_MPR_RESOLUTION;
  attr->max_evs = MRC_DEV_MAX_EVS;
  attr->capabilities = MRC_DEVICE_CAP_TRIM_NACK | MRC_DEVICE_CAP_DYNAMIC_MPR |
                       MRC_DEVICE_CAP_SVC_TIME;
  return 0;
}

struct mrc_context *mrc_create_context(struct ibv_context *ctx,
                                       struct mrc_context_attr *attr) {
  struct mrc_ibv_context *c = mrc_ours(ctx);
  if (!c || (attr && attr->mrc_api_version_used != MRC_PROTOCOL_VERSION_1)) {
    errno = c ? EPROTONOSUPPORT : ENODEV;
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

int mrc_destroy_context(struct mrc_context *mctx) {
  if (!mctx)
    return EINVAL;
  if (mrc_refs(&mctx->refs))
    return EBUSY;
  mrc_unref(&mctx->ibv->refs);
  free(mctx);
  return 0;
}

struct mrc_cq *mrc_create_cq(struct mrc_context *mctx, int cqe,
                             void *cq_context,
                             struct ibv_comp_channel *channel,
                             int comp_vector) {
  if (!mctx || cqe <= 0 || comp_vector != 0 ||
      (channel && channel->context != &mctx->ibv->ctx)) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_cq *cq = calloc(1, sizeof(*cq));
  if (!cq) {
    errno = ENOMEM;
    return NULL;
  }
  cq->channel = (struct mrc_ibv_comp_channel *)channel;
  cq->rs = mrcx_create_cq(mctx->ibv->rs, cqe, (uintptr_t)cq,
                          cq->channel ? cq->channel->rs : NULL);
  if (!cq->rs) {
    free(cq);
    errno = ENOMEM;
    return NULL;
  }
  cq->ctx = mctx;
  cq->cq_context = cq_context;
  mrc_ref(&mctx->refs);
  if (cq->channel)
    mrc_ref(&cq->channel->refs);
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

int mrc_get_cq_event(struct ibv_comp_channel *channel, struct mrc_cq **cq,
                     void **cq_context) {
  if (!channel || !cq || !cq_context) {
    errno = EINVAL;
    return -1;
  }
  struct mrc_ibv_comp_channel *ch = (struct mrc_ibv_comp_channel *)channel;
  uintptr_t h = 0;
  int rc = mrcx_channel_get_event(ch->rs, &h);
  if (rc) {
    errno = rc;
    return -1;
  }
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

int mrc_get_async_event(struct mrc_context *mctx,
                        struct mrc_async_event *event) {
  if (!mctx || !event) {
    errno = EINVAL;
    return -1;
  }
  struct mrcx_async_event e;
  int rc = mrcx_get_async_event(mctx->ibv->rs, &e);
  if (rc) {
    errno = rc;
    return -1;
  }
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
    return -EINVAL;
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

struct mrc_qp *mrc_create_qp(struct mrc_context *mctx,
                             struct mrc_qp_init_attr *attr) {
  if (!mctx || !attr || !attr->send_cq || !attr->recv_cq || !attr->pd ||
      attr->send_cq->ctx != mctx || attr->recv_cq->ctx != mctx ||
      attr->pd->context != &mctx->ibv->ctx || attr->cap.max_send_sge > 1 ||
      attr->cap.max_recv_sge > 1 || attr->cap.max_send_wr > MRC_DEV_MAX_QP_WR ||
      (attr->protocol_version != 0 &&
       attr->protocol_version != MRC_PROTOCOL_VERSION_1)) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_qp *qp = calloc(1, sizeof(*qp));
  if (!qp) {
    errno = ENOMEM;
    return NULL;
  }
  struct mrc_ibv_pd *pd = (struct mrc_ibv_pd *)attr->pd;
  uint32_t wr = attr->cap.max_send_wr ? attr->cap.max_send_wr : 1;
  qp->rs = mrcx_create_qp(mctx->ibv->rs, pd->rs, attr->send_cq->rs,
                          attr->recv_cq->rs, wr, (uintptr_t)qp);
  if (!qp->rs) {
    free(qp);
    errno = ENOMEM;
    return NULL;
  }
  qp->ctx = mctx;
  qp->pd = pd;
  qp->send_cq = attr->send_cq;
  qp->recv_cq = attr->recv_cq;
  qp->qp_context = attr->qp_context;
  qp->cap = attr->cap;
  qp->cap.max_send_wr = wr;
  qp->attr.qp_state = IBV_QPS_RESET;
  mrc_ref(&mctx->refs);
  mrc_ref(&pd->refs);
  mrc_ref(&qp->send_cq->refs);
  mrc_ref(&qp->recv_cq->refs);
  return qp;
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
  mrc_unref(&qp->recv_cq->refs);
  mrc_unref(&qp->send_cq->refs);
  mrc_unref(&qp->pd->refs);
  mrc_unref(&qp->ctx->refs);
  free(qp);
  return 0;
}

int mrc_get_qpn(struct mrc_qp *qp, uint32_t *qpn) {
  if (!qp || !qpn)
    return EINVAL;
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

/* The attributes each transition needs and may take (the RC rules, less
 * what MRC has not: alternate paths, RNR, atomics' read depth is
 * accepted and ignored). */
enum {
  RTR_NEEDS = IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_PATH_MTU,
  RTS_NEEDS = IBV_QP_SQ_PSN,
  REFUSED = IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE,
};

int mrc_modify_qp(struct mrc_qp *qp, struct ibv_qp_attr *attr, int ibv_mask,
                  struct mrc_qp_attr *mrc_attr, int mrc_mask) {
  if (!qp || !attr || !(ibv_mask & IBV_QP_STATE) || (mrc_mask && !mrc_attr))
    return EINVAL;
  if (ibv_mask & REFUSED)
    return EINVAL;
  enum ibv_qp_state cur = qp_state(qp);
  if ((ibv_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur)
    return EINVAL;
  /* Each MRC attribute belongs to one transition. */
  int init_mrc = MRC_QP_EV_PROFILE | MRC_QP_CC_PROFILE;
  int rtr_mrc = MRC_QP_MAX_WIMM_DEST | MRC_QP_MPR_DEST;
  int rts_mrc = MRC_QP_MAX_WIMM | MRC_QP_MPR;
  if ((mrc_mask & init_mrc && attr->qp_state != IBV_QPS_INIT) ||
      (mrc_mask & rtr_mrc && attr->qp_state != IBV_QPS_RTR) ||
      (mrc_mask & rts_mrc && attr->qp_state != IBV_QPS_RTS) ||
      (mrc_mask & ~(init_mrc | rtr_mrc | rts_mrc)))
    return EINVAL;
  int rc;
  switch (attr->qp_state) {
  case IBV_QPS_RESET:
  case IBV_QPS_ERR:
    rc = mrcx_to_err_or_reset(qp->rs, attr->qp_state == IBV_QPS_RESET);
    if (rc == 0 && attr->qp_state == IBV_QPS_RESET) {
      memset(&qp->attr, 0, sizeof(qp->attr));
      memset(&qp->mrc, 0, sizeof(qp->mrc));
    }
    break;
  case IBV_QPS_INIT: {
    if (cur != IBV_QPS_RESET)
      return EINVAL;
    /* The profiles (mrc_ctl.h) must exist and be ONLINE: bind first, and
     * let go again if the transition fails. */
    uint32_t ev = (mrc_mask & MRC_QP_EV_PROFILE) ? mrc_attr->ev_profile_id : 0;
    uint32_t cc = (mrc_mask & MRC_QP_CC_PROFILE) ? mrc_attr->cc_profile_id : 0;
    if ((mrc_mask & MRC_QP_EV_PROFILE && ev == 0) ||
        (mrc_mask & MRC_QP_CC_PROFILE && cc == 0))
      return EINVAL;
    rc = mrcx_bind_profiles(qp->rs, ev, cc);
    if (rc)
      return rc;
    rc = mrcx_to_init(qp->rs);
    if (rc)
      mrcx_bind_profiles(qp->rs, 0, 0);
    break;
  }
  case IBV_QPS_RTR:
    if (cur != IBV_QPS_INIT || (ibv_mask & RTR_NEEDS) != RTR_NEEDS ||
        !attr->ah_attr.is_global || attr->path_mtu < IBV_MTU_256 ||
        attr->path_mtu > IBV_MTU_4096)
      return EINVAL;
    /* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5: log2 = enum + 7. */
    rc = mrcx_to_rtr(qp->rs, attr->dest_qp_num, attr->rq_psn,
                     attr->ah_attr.grh.dgid.raw,
                     (uint8_t)(attr->path_mtu + 7));
    break;
  case IBV_QPS_RTS:
    if (cur != IBV_QPS_RTR || (ibv_mask & RTS_NEEDS) != RTS_NEEDS)
      return EINVAL;
    rc = mrcx_to_rts(qp->rs, attr->sq_psn,
                     (ibv_mask & IBV_QP_TIMEOUT) ? attr->timeout : 0,
                     (ibv_mask & IBV_QP_RETRY_CNT) ? attr->retry_cnt : 7);
    break;
  default:
    return EINVAL;
  }
  if (rc)
    return rc;
  /* Remember what was set, for mrc_query_qp. */
  if (ibv_mask & IBV_QP_PKEY_INDEX)
    qp->attr.pkey_index = attr->pkey_index;
  if (ibv_mask & IBV_QP_PORT)
    qp->attr.port_num = attr->port_num;
  if (ibv_mask & IBV_QP_ACCESS_FLAGS)
    qp->attr.qp_access_flags = attr->qp_access_flags;
  if (ibv_mask & IBV_QP_AV)
    qp->attr.ah_attr = attr->ah_attr;
  if (ibv_mask & IBV_QP_PATH_MTU)
    qp->attr.path_mtu = attr->path_mtu;
  if (ibv_mask & IBV_QP_DEST_QPN)
    qp->attr.dest_qp_num = attr->dest_qp_num;
  if (ibv_mask & IBV_QP_RQ_PSN)
    qp->attr.rq_psn = attr->rq_psn & 0xFFFFFF;
  if (ibv_mask & IBV_QP_SQ_PSN)
    qp->attr.sq_psn = attr->sq_psn & 0xFFFFFF;
  if (ibv_mask & IBV_QP_TIMEOUT)
    qp->attr.timeout = attr->timeout;
  if (ibv_mask & IBV_QP_RETRY_CNT)
    qp->attr.retry_cnt = attr->retry_cnt;
  if (mrc_mask & MRC_QP_EV_PROFILE)
    qp->mrc.ev_profile_id = mrc_attr->ev_profile_id;
  if (mrc_mask & MRC_QP_CC_PROFILE)
    qp->mrc.cc_profile_id = mrc_attr->cc_profile_id;
  if (mrc_mask & MRC_QP_MAX_WIMM_DEST)
    qp->mrc.max_wimm_dest = mrc_attr->max_wimm_dest;
  if (mrc_mask & MRC_QP_MPR_DEST)
    qp->mrc.mpr_dest = mrc_attr->mpr_dest;
  if (mrc_mask & MRC_QP_MAX_WIMM)
    qp->mrc.max_wimm = mrc_attr->max_wimm;
  if (mrc_mask & MRC_QP_MPR)
    qp->mrc.mpr = mrc_attr->mpr;
  return 0;
}

int mrc_query_qp(struct mrc_qp *qp, struct ibv_qp_attr *attr, int ibv_mask,
                 struct ibv_qp_init_attr *init_attr, struct mrc_qp_attr *mrc_attr,
                 int mrc_mask) {
  (void)ibv_mask; /* every attribute is returned, as verbs providers do */
  if (!qp || !attr || (mrc_mask && !mrc_attr))
    return EINVAL;
  *attr = qp->attr;
  attr->qp_state = qp_state(qp);
  attr->cur_qp_state = attr->qp_state;
  attr->cap = qp->cap;
  if (init_attr) {
    memset(init_attr, 0, sizeof(*init_attr));
    init_attr->qp_context = qp->qp_context;
    init_attr->cap = qp->cap;
    init_attr->qp_type = IBV_QPT_RC;
    init_attr->sq_sig_all = 0;
  }
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
      rc = mrcx_post_write(qp->rs, wr->wr_id, addr, len, lkey,
                           wr->wr.rdma.remote_addr, wr->wr.rdma.rkey,
                           (wr->send_flags & IBV_SEND_SIGNALED) != 0, imm,
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
