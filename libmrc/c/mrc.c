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
};

struct mrc_cq {
  struct mrc_context *ctx;
  void *rs;
  void *cq_context;
};

struct mrc_qp {
  struct mrc_context *ctx;
  void *rs;
  enum ibv_qp_state state;
};

/* What the core's device offers (the driver's limits). */
enum {
  MRC_MAX_QP = 256,
  MRC_MAX_CQ = 256,
  MRC_MAX_QP_WR = 1 << 16,
  MRC_MAX_WIMM = 256,
  MRC_MPR_RESOLUTION = 128,
  MRC_MAX_MPR = 255 * MRC_MPR_RESOLUTION,
  MRC_MAX_EVS = 128,
};

static struct mrc_ibv_context *ours(struct ibv_context *ctx) {
  struct mrc_ibv_context *c = (struct mrc_ibv_context *)ctx;
  return (c && c->magic == MRC_CONTEXT_MAGIC) ? c : NULL;
}

int mrc_query_device(struct ibv_context *ctx, struct mrc_device_attr *attr,
                     int *supported) {
  if (!ctx || !attr || !supported)
    return EINVAL;
  struct mrc_ibv_context *c = ours(ctx);
  *supported = c != NULL;
  memset(attr, 0, sizeof(*attr));
  if (!c)
    return 0;
  attr->protocol_versions = 1u << (MRC_PROTOCOL_VERSION_1 - 1);
  attr->max_qp = MRC_MAX_QP;
  attr->max_cq = MRC_MAX_CQ;
  attr->max_qp_wr = MRC_MAX_QP_WR;
  attr->max_wimm = MRC_MAX_WIMM;
  attr->max_mpr = MRC_MAX_MPR;
  attr->mpr_resolution = MRC_MPR_RESOLUTION;
  attr->max_evs = MRC_MAX_EVS;
  attr->capabilities = MRC_DEVICE_CAP_TRIM_NACK | MRC_DEVICE_CAP_DYNAMIC_MPR |
                       MRC_DEVICE_CAP_SVC_TIME;
  return 0;
}

struct mrc_context *mrc_create_context(struct ibv_context *ctx,
                                       struct mrc_context_attr *attr) {
  struct mrc_ibv_context *c = ours(ctx);
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
  return m;
}

int mrc_destroy_context(struct mrc_context *mctx) {
  if (!mctx)
    return EINVAL;
  free(mctx);
  return 0;
}

struct mrc_cq *mrc_create_cq(struct mrc_context *mctx, int cqe,
                             void *cq_context,
                             struct ibv_comp_channel *channel,
                             int comp_vector) {
  if (!mctx || cqe <= 0 || comp_vector != 0) {
    errno = EINVAL;
    return NULL;
  }
  if (channel) {
    /* Completion channels are not implemented yet: poll. */
    errno = EOPNOTSUPP;
    return NULL;
  }
  struct mrc_cq *cq = calloc(1, sizeof(*cq));
  if (!cq) {
    errno = ENOMEM;
    return NULL;
  }
  cq->rs = mrcx_create_cq(mctx->ibv->rs, cqe);
  if (!cq->rs) {
    free(cq);
    errno = ENOMEM;
    return NULL;
  }
  cq->ctx = mctx;
  cq->cq_context = cq_context;
  return cq;
}

int mrc_destroy_cq(struct mrc_cq *cq) {
  if (!cq)
    return EINVAL;
  int rc = mrcx_destroy_cq(cq->ctx->ibv->rs, cq->rs);
  free(cq);
  return rc;
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
      attr->cap.max_send_sge > 1 || attr->cap.max_recv_sge > 1 ||
      attr->cap.max_send_wr > MRC_MAX_QP_WR ||
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
                          attr->recv_cq->rs, wr);
  if (!qp->rs) {
    free(qp);
    errno = ENOMEM;
    return NULL;
  }
  qp->ctx = mctx;
  qp->state = IBV_QPS_RESET;
  return qp;
}

int mrc_destroy_qp(struct mrc_qp *qp) {
  if (!qp)
    return EINVAL;
  int rc = mrcx_destroy_qp(qp->rs);
  free(qp);
  return rc;
}

int mrc_get_qpn(struct mrc_qp *qp, uint32_t *qpn) {
  if (!qp || !qpn)
    return EINVAL;
  *qpn = mrcx_qpn(qp->rs);
  return 0;
}

int mrc_modify_qp(struct mrc_qp *qp, struct ibv_qp_attr *attr, int ibv_mask,
                  struct mrc_qp_attr *mrc_attr, int mrc_mask) {
  (void)mrc_attr;
  if (!qp || !attr || !(ibv_mask & IBV_QP_STATE))
    return EINVAL;
  if (ibv_mask & (IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE))
    return EINVAL;
  /* EV and CC profiles are not implemented yet: the default EV set. */
  if (mrc_mask & (MRC_QP_EV_PROFILE | MRC_QP_CC_PROFILE))
    return EOPNOTSUPP;
  int rc;
  switch (attr->qp_state) {
  case IBV_QPS_INIT:
    if (qp->state != IBV_QPS_RESET)
      return EINVAL;
    rc = mrcx_to_init(qp->rs);
    break;
  case IBV_QPS_RTR: {
    int need = IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_PATH_MTU;
    if (qp->state != IBV_QPS_INIT || (ibv_mask & need) != need ||
        !attr->ah_attr.is_global || attr->path_mtu < IBV_MTU_256 ||
        attr->path_mtu > IBV_MTU_4096)
      return EINVAL;
    /* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5: log2 = enum + 7. */
    rc = mrcx_to_rtr(qp->rs, attr->dest_qp_num, attr->rq_psn,
                     attr->ah_attr.grh.dgid.raw,
                     (uint8_t)(attr->path_mtu + 7));
    break;
  }
  case IBV_QPS_RTS:
    if (qp->state != IBV_QPS_RTR || !(ibv_mask & IBV_QP_SQ_PSN))
      return EINVAL;
    rc = mrcx_to_rts(qp->rs, attr->sq_psn,
                     (ibv_mask & IBV_QP_TIMEOUT) ? attr->timeout : 0,
                     (ibv_mask & IBV_QP_RETRY_CNT) ? attr->retry_cnt : 7);
    break;
  default:
    return EINVAL;
  }
  if (rc == 0)
    qp->state = attr->qp_state;
  return rc;
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
    if ((wr->opcode != IBV_WR_RDMA_WRITE && !imm) || wr->num_sge > 1 ||
        (wr->num_sge == 1 && !wr->sg_list)) {
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
