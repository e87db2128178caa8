/*
 * mrc.h - the MRC (Multipath Reliable Connection) C API, libmrc 1.0, as
 * implemented by the Open MRC project (lib_mrc.so).
 *
 * Written for this project from the public record of the OCP MRC 1.0 API
 * (names, enum values and the calls a program makes; see
 * docs/host.md, "libmrc"); the OCP headers themselves are not used.
 * Protection domains, memory regions, GIDs and devices come from
 * libibverbs (<infiniband/verbs.h>); lib_mrc.so provides those too, for
 * its own devices (mrc0, mrc1, ... named by $MRC_DEVICE).
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#ifndef MRC_H
#define MRC_H

#include <infiniband/verbs.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Protocol versions a device speaks and a context asks for. */
enum mrc_protocol_version {
  MRC_PROTOCOL_VERSION_1 = 1,
};

/* Capabilities (mrc_device_attr.capabilities). */
enum mrc_device_cap {
  MRC_DEVICE_CAP_TRIM_NACK = 1 << 0,
  MRC_DEVICE_CAP_DYNAMIC_MPR = 1 << 1,
  MRC_DEVICE_CAP_SVC_TIME = 1 << 2,
};

struct mrc_device_attr {
  uint32_t protocol_versions; /* bit (v - 1) set: version v spoken */
  uint32_t max_qp;
  uint32_t max_cq;
  uint32_t max_qp_wr;     /* send work requests per QP */
  uint32_t max_wimm;      /* outstanding WRITE-with-immediate per QP */
  uint32_t max_mpr;       /* receive window, PSNs */
  uint32_t mpr_resolution; /* the window's unit, PSNs (128) */
  uint32_t max_evs;       /* EVs per QP */
  uint64_t capabilities;  /* enum mrc_device_cap */
};

struct mrc_context_attr {
  uint32_t mrc_api_version_used; /* enum mrc_protocol_version */
};

struct mrc_context;
struct mrc_cq;
struct mrc_qp;

struct mrc_qp_init_attr {
  struct mrc_cq *send_cq;
  struct mrc_cq *recv_cq;
  struct ibv_pd *pd;
  struct ibv_qp_cap cap;
  uint32_t protocol_version; /* 0: the context's */
  void *qp_context;
};

/* MRC attributes of a QP transition (mrc_modify_qp's mrc_mask). */
enum mrc_qp_attr_mask {
  MRC_QP_EV_PROFILE = 1 << 0,   /* INIT */
  MRC_QP_CC_PROFILE = 1 << 1,   /* INIT */
  MRC_QP_MAX_WIMM_DEST = 1 << 2, /* RTR */
  MRC_QP_MPR_DEST = 1 << 3,     /* RTR */
  MRC_QP_MAX_WIMM = 1 << 4,     /* RTS */
  MRC_QP_MPR = 1 << 5,          /* RTS */
};

struct mrc_qp_attr {
  uint32_t ev_profile_id;
  uint32_t cc_profile_id;
  uint32_t max_wimm_dest;
  uint32_t mpr_dest;
  uint32_t max_wimm;
  uint32_t mpr;
};

/* An asynchronous event of a context (mrc_get_async_event):
 * IBV_EVENT_QP_FATAL names a QP that entered ERR through an error
 * completion (retries exceeded, remote access error), once per entry;
 * IBV_EVENT_CQ_ERR names a CQ that received a completion the library
 * could not read. */
struct mrc_async_event {
  union {
    struct mrc_qp *qp;
    struct mrc_cq *cq;
  } element;
  enum ibv_event_type event_type;
};

/* Device query: *supported is set to 1 when the device speaks MRC. */
int mrc_query_device(struct ibv_context *ctx, struct mrc_device_attr *attr,
                     int *supported);

struct mrc_context *mrc_create_context(struct ibv_context *ctx,
                                       struct mrc_context_attr *attr);
/* EBUSY while CQs or QPs of the context exist. */
int mrc_destroy_context(struct mrc_context *mctx);

/* The next asynchronous event (blocks until one comes, unless the
 * context's ibv_context->async_fd was made non-blocking: then -1 with
 * errno EAGAIN). Returns 0, or -1 with errno. Every event taken is acked
 * before its QP is destroyed. */
int mrc_get_async_event(struct mrc_context *mctx,
                        struct mrc_async_event *event);
void mrc_ack_async_event(struct mrc_async_event *event);

struct mrc_cq *mrc_create_cq(struct mrc_context *mctx, int cqe,
                             void *cq_context,
                             struct ibv_comp_channel *channel,
                             int comp_vector);
/* channel: from ibv_create_comp_channel on the context's device, or
 * NULL (poll only). EBUSY while QPs use the CQ or events taken from its
 * channel are not acked. */
int mrc_destroy_cq(struct mrc_cq *cq);
/* Arm the CQ: its next completion (or one it already holds) puts one
 * event on its channel. solicited_only is accepted; every completion
 * notifies. EINVAL without a channel. */
int mrc_req_notify_cq(struct mrc_cq *cq, int solicited_only);
/* The next event of channel (blocks until one comes, unless channel->fd
 * was made non-blocking: then -1 with errno EAGAIN): its CQ and the CQ's
 * cq_context. Returns 0, or -1 with errno. */
int mrc_get_cq_event(struct ibv_comp_channel *channel, struct mrc_cq **cq,
                     void **cq_context);
void mrc_ack_cq_events(struct mrc_cq *cq, unsigned int nevents);
/* Completions as ibv_wc; returns how many, or a negative errno. */
int mrc_poll_cq(struct mrc_cq *cq, int num_entries, struct ibv_wc *wc);

struct mrc_qp *mrc_create_qp(struct mrc_context *mctx,
                             struct mrc_qp_init_attr *attr);
/* EBUSY while asynchronous events taken for it are not acked. */
int mrc_destroy_qp(struct mrc_qp *qp);
int mrc_get_qpn(struct mrc_qp *qp, uint32_t *qpn);
/* RST -> INIT -> RTR -> RTS, and any state -> ERR or RST; ibv_mask must
 * hold IBV_QP_STATE, and IBV_QP_CUR_STATE, if given, must match. Alternate
 * paths are refused (EINVAL); RNR attributes are accepted and ignored
 * (MRC has no receiver-not-ready). Each MRC attribute belongs to the
 * transition its mask names (EINVAL otherwise). INIT may name an EV and
 * a CC profile (mrc_ctl.h), which must be ONLINE (EINVAL; ENOENT for an
 * id that does not exist); without them the device's defaults apply. */
int mrc_modify_qp(struct mrc_qp *qp, struct ibv_qp_attr *attr, int ibv_mask,
                  struct mrc_qp_attr *mrc_attr, int mrc_mask);
/* Every attribute the transitions set, the current state (ERR after an
 * error completion) and the capabilities; init_attr may be NULL. The
 * masks are accepted and every attribute is filled. */
int mrc_query_qp(struct mrc_qp *qp, struct ibv_qp_attr *attr, int ibv_mask,
                 struct ibv_qp_init_attr *init_attr,
                 struct mrc_qp_attr *mrc_attr, int mrc_mask);
/* IBV_WR_RDMA_WRITE and IBV_WR_RDMA_WRITE_WITH_IMM, at most one SGE. */
int mrc_post_send(struct mrc_qp *qp, struct ibv_send_wr *wr,
                  struct ibv_send_wr **bad_wr);
int mrc_post_recv(struct mrc_qp *qp, struct ibv_recv_wr *wr,
                  struct ibv_recv_wr **bad_wr);

#ifdef __cplusplus
}
#endif

#endif /* MRC_H */
