/*
 * mrc.h - the MRC (Multipath Reliable Connection) C API, libmrc 1.0.1, as
 * implemented by the Open MRC project (lib_mrc.so).
 *
 * Written for this project from the public facts of the OCP MRC API:
 * function names and parameters, struct and field names, types and order,
 * enum and macro names and values, so that a program written for libmrc
 * compiles against this header unchanged. The OCP headers' text is not
 * used. docs/host.md lists, function by function, what lib_mrc.so does.
 *
 * Protection domains, memory regions, GIDs and devices come from
 * libibverbs (<infiniband/verbs.h>); lib_mrc.so provides those too, for
 * its own devices (mrc0, mrc1, ... named by $MRC_DEVICE).
 *
 * Returns: functions that follow a verbs call ("as ibv_...") return 0 or
 * an errno value; the others return 0, or -1 with errno set.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#ifndef MRC_H
#define MRC_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include <mrc_api_ver.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of opaque provider data a QP or a QP hint may carry. */
#define MRC_MAX_VENDOR_CFG_SIZE 128

/* Wire protocol versions: a device reports the set it speaks, a QP asks
 * for one (0: the device's choice). */
enum mrc_protocol_version {
  MRC_PROTOCOL_VERSION_0 = 0,
  MRC_PROTOCOL_VERSION_1 = 1 << 0,
};

struct mrc_context;
struct mrc_qp_hint;
struct mrc_qp;
struct mrc_cq;
struct mrc_comp_channel;

/* Optional features of a device (mrc_device_attr.cap). */
enum mrc_device_cap {
  MRC_DEVICE_CAP_TRIM_NACK = 1 << 0,   /* sends NACKs for trimmed packets */
  MRC_DEVICE_CAP_DYNAMIC_MPR = 1 << 1, /* the receive window may change */
  MRC_DEVICE_CAP_SVC_TIME = 1 << 2,    /* reports its service time */
};

struct mrc_device_attr {
  uint32_t mrc_protocol_version; /* enum mrc_protocol_version bits */
  struct {
    uint16_t max_wimm;      /* WRITE-with-immediate in flight, requester */
    uint16_t max_wimm_dest; /* ... held by the responder */
  } wimm_attr;
  struct {
    uint8_t max_mpr;        /* largest receive window, units of 128 PSNs */
    uint8_t mpr_resolution; /* its granularity, units of 128 PSNs */
  } mpr_attr;
  struct {
    uint32_t max_qp_hint; /* QP hints a context may hold */
  } qp_attr;
  uint32_t cap; /* enum mrc_device_cap */
};

/* Device query; *supported is 0 for a device that does not speak MRC
 * (attr is then zeroed). The _ex form (API 1.0.1) also takes the MRC
 * context, which may be NULL. */
#if MRC_API_VER_USED >= MRC_API_VER(1, 0, 1)
int mrc_query_device_ex(struct ibv_context *context,
                        struct mrc_context *mcontext,
                        struct mrc_device_attr *attr, int *supported);
#endif
int mrc_query_device(struct ibv_context *context, struct mrc_device_attr *attr,
                     int *supported);

/* The API versions (MRC_API_VER) this library implements and still
 * accepts, and the same for its provider extensions. Any pointer may be
 * NULL. May be called before any context exists. */
void mrc_query_version(uint32_t *current_version,
                       uint32_t *last_supported_version,
                       uint32_t *vendor_version,
                       uint32_t *last_supported_vendor_version);

/* 0 in either field: the newest version. A version newer than this
 * library's is refused (EPROTONOSUPPORT). */
struct mrc_context_attr {
  uint32_t mrc_api_version_used;
  uint32_t mrc_vendor_api_version_used;
};

/* context_attr may be NULL. EBUSY from destroy while CQs, QPs, QP hints
 * or completion channels of the context exist. */
struct mrc_context *mrc_create_context(struct ibv_context *vcontext,
                                       struct mrc_context_attr *context_attr);
int mrc_destroy_context(struct mrc_context *mrc_ctx);

/* A completion channel: a file descriptor that becomes readable when an
 * armed CQ bound to it gets a completion (as ibv_create_comp_channel;
 * destroy: EBUSY while CQs use it). */
int mrc_create_comp_channel(struct mrc_context *mrc_ctx,
                            struct mrc_comp_channel **channel);
int mrc_get_comp_channel_fd(struct mrc_comp_channel *channel, int *fd);
int mrc_destroy_comp_channel(struct mrc_comp_channel *channel);

/* As ibv_create_cq: channel may be NULL (poll only) or a channel of the
 * same context; comp_vector 0 only. Destroy: EBUSY while QPs use the CQ
 * or events taken from its channel are not acked. */
struct mrc_cq *mrc_create_cq(struct mrc_context *mrc_ctx, int cqe,
                             void *cq_context,
                             struct mrc_comp_channel *channel,
                             int comp_vector);
/* Completions as ibv_wc; how many, or -1 with errno. */
int mrc_poll_cq(struct mrc_cq *cq, int num_entries, struct ibv_wc *wc);
int mrc_destroy_cq(struct mrc_cq *cq);

/* What a group of QPs is expected to do, so a provider can size its
 * resources (a QP names its hint when it moves to INIT). */
struct mrc_qp_hint_attr {
  int num_qps_per_peer;      /* QPs with this hint sending to one peer */
  int num_send_peers;        /* peers they send to at once */
  int num_remote_recv_peers; /* remote QPs sending to that peer (incast) */
  uint8_t vendor_cfg[MRC_MAX_VENDOR_CFG_SIZE];
};

enum mrc_qp_hint_attr_mask {
  MRC_QP_HINT_NUM_QPS_PER_PEER = 1 << 0,
  MRC_QP_HINT_NUM_SEND_PEERS = 1 << 1,
  MRC_QP_HINT_NUM_REMOTE_RECV_PEERS = 1 << 2,
  MRC_QP_HINT_VENDOR_CFG = 1 << 31
};

struct mrc_qp_hint_init_attr {
  struct mrc_qp_hint_attr attr;
};

/* QP hints: counts are >= 0; destroy refuses a hint QPs still name
 * (EBUSY); query and modify take the fields their mask names. */
struct mrc_qp_hint *mrc_create_qp_hint(struct mrc_context *mrc_ctx,
                                       struct mrc_qp_hint_init_attr *init_attr);
int mrc_destroy_qp_hint(struct mrc_qp_hint *qp_hint);
int mrc_query_qp_hint(struct mrc_qp_hint *qp_hint,
                      struct mrc_qp_hint_attr *qp_hint_attr,
                      int qp_hint_attr_mask);
int mrc_modify_qp_hint(struct mrc_qp_hint *qp_hint,
                       struct mrc_qp_hint_attr *qp_hint_attr,
                       int qp_hint_attr_mask);

struct mrc_qp_init_attr {
  void *qp_context;
  struct mrc_cq *send_cq;
  struct mrc_cq *recv_cq;
  struct ibv_qp_cap cap; /* one SGE per work request */
  int sq_sig_all;        /* non-zero: every send completes in the CQ */
  struct ibv_pd *pd;
  uint64_t send_ops_flags; /* enum ibv_qp_create_send_ops_flags: WRITE and
                              WRITE_WITH_IMM only, or 0 */
  enum mrc_protocol_version protocol_version; /* 0: the device's */
};

/* As ibv_create_qp / ibv_destroy_qp (destroy: EBUSY while asynchronous
 * events taken for the QP are not acked). */
struct mrc_qp *mrc_create_qp(struct mrc_context *mrc_ctx,
                             struct mrc_qp_init_attr *mrc_qp_attr);
int mrc_destroy_qp(struct mrc_qp *qp);

/* MRC attributes of a transition (mrc_modify_qp's mrc_attr_mask), each
 * set on one: INIT takes the hint and the profiles, RTR the responder's
 * window, WIMM bound and capabilities, RTS the requester's window, WIMM
 * bound, retries and timeout. */
enum mrc_qp_attr_mask {
  MRC_QP_MAX_WIMM = 1 << 0,      /* RTS */
  MRC_QP_MAX_WIMM_DEST = 1 << 1, /* RTR */
  MRC_QP_MPR = 1 << 2,           /* RTS */
  MRC_QP_MPR_DEST = 1 << 3,      /* RTR */
  MRC_QP_TIMEOUT = 1 << 4,       /* RTS */
  MRC_QP_EV_PROFILE_ID = 1 << 5, /* INIT */
  MRC_QP_CC_PROFILE_ID = 1 << 6, /* INIT */
  MRC_QP_HINT = 1 << 7,          /* INIT */
  MRC_QP_RETRY_CNT = 1 << 8,     /* RTS */
  MRC_QP_CAP = 1 << 9,           /* RTR */
  MRC_QP_VENDOR_CFG = 1 << 31
};

/* Per-QP features (mrc_qp_attr.cap). */
enum mrc_qp_cap {
  MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED = 1 << 0, /* peer sends no trim NACK */
  MRC_QP_CAP_DYNAMIC_MPR = 1 << 1,                /* both ends must ask */
  MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED = 1 << 2,  /* peer has no service time */
};

struct mrc_qp_attr {
  struct {
    uint8_t mpr;      /* requester's window, units of 128 PSNs (0: default) */
    uint8_t mpr_dest; /* responder's window, same unit */
  } mpr;
  struct {
    uint16_t max_wimm;      /* WRITE-with-immediate in flight (0: default) */
    uint16_t max_wimm_dest; /* ... the responder holds */
  } wimm;
  uint8_t timeout; /* 1.024 us x 2^timeout, at most 24 (0: default) */
  struct {
    uint64_t ev_profile_id; /* mrc_ctl.h profiles, ONLINE */
    uint64_t cc_profile_id;
  } profile;
  struct {
    uint8_t linear_cnt; /* retries at the fixed timeout, at most 7 */
    uint8_t exp_cnt;    /* then with doubling timeouts, at most 25 (25:
                           without end) */
  } retry;
  struct mrc_qp_hint *qp_hint; /* NULL: none */
  uint32_t cap;                /* enum mrc_qp_cap */
  uint8_t vendor_cfg[MRC_MAX_VENDOR_CFG_SIZE];
};

/* Every attribute the transitions set, the current state (ERR after an
 * error completion) and the capabilities; mrc_attr and init_attr may be
 * NULL. As ibv_query_qp. */
int mrc_query_qp(struct mrc_qp *qp, struct ibv_qp_attr *vattr, int vattr_mask,
                 struct mrc_qp_attr *mrc_attr, int mrc_attr_mask,
                 struct mrc_qp_init_attr *init_attr);
/* RST -> INIT -> RTR -> RTS, and any state -> ERR or RST, as
 * ibv_modify_qp: vattr_mask must hold IBV_QP_STATE; IBV_QP_CUR_STATE, if
 * given, must match. Alternate paths are refused (EINVAL); RNR and port
 * attributes are accepted and ignored (MRC has no receiver-not-ready);
 * IBV_QP_TIMEOUT and IBV_QP_RETRY_CNT apply unless MRC_QP_TIMEOUT /
 * MRC_QP_RETRY_CNT are given. An MRC attribute on another transition
 * than its own is refused (EINVAL), as are values beyond the device's
 * limits. INIT's profiles must exist (ENOENT) and be ONLINE (EINVAL);
 * without them the device's defaults apply. */
int mrc_modify_qp(struct mrc_qp *qp, struct ibv_qp_attr *vattr, int vattr_mask,
                  struct mrc_qp_attr *mrc_attr, int mrc_attr_mask);

int mrc_get_qpn(struct mrc_qp *qp, uint32_t *qpn);

/* Receives for WRITE-with-immediate (as ibv_post_recv). */
int mrc_post_recv(struct mrc_qp *qp, struct ibv_recv_wr *wr,
                  struct ibv_recv_wr **bad_wr);
/* IBV_WR_RDMA_WRITE and IBV_WR_RDMA_WRITE_WITH_IMM, at most one SGE (as
 * ibv_post_send; a full send queue is ENOMEM). */
int mrc_post_send(struct mrc_qp *qp, struct ibv_send_wr *wr,
                  struct ibv_send_wr **bad_wr);

/* An asynchronous event of a context: IBV_EVENT_QP_FATAL names a QP that
 * entered ERR through an error completion, IBV_EVENT_CQ_ERR a CQ that
 * received a completion the library could not read. */
struct mrc_async_event {
  union {
    struct mrc_cq *cq;
    struct mrc_qp *qp;
    int port_num;
  } element;
  enum ibv_event_type event_type;
};

/* The next asynchronous event (blocks until one comes, unless the
 * context's ibv_context->async_fd was made non-blocking: then EAGAIN).
 * As ibv_get_async_event; every event taken is acked. */
int mrc_get_async_event(struct mrc_context *mrc_ctx,
                        struct mrc_async_event *event);
void mrc_ack_async_event(struct mrc_async_event *event);

/* Arm a CQ: its next completion (or one it already holds) puts one event
 * on its channel. Every completion notifies (solicited_only is
 * accepted). EINVAL without a channel. */
int mrc_req_notify_cq(struct mrc_cq *cq, int solicited_only);
/* The next event of a channel (blocks unless its fd was made
 * non-blocking: then -1 with errno EAGAIN): its CQ and cq_context. */
int mrc_get_cq_event(struct mrc_comp_channel *channel, struct mrc_cq **cq,
                     void **cq_context);
void mrc_ack_cq_events(struct mrc_cq *cq, unsigned int nevents);

#ifdef __cplusplus
}
#endif

#endif /* MRC_H */
