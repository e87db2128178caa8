/* The Rust core's flat ABI (libmrc/src/lib.rs). */
#ifndef MRC_CORE_H
#define MRC_CORE_H
#include <stddef.h>
#include <stdint.h>

struct mrcx_wc {
  uint64_t wr_id;
  uint32_t status; /* contract::layout::CqStatus */
  uint32_t opcode; /* 0 WRITE, 1 WRITE-IMM, 2 receive of a WRITE-IMM */
  uint32_t byte_len;
  uint32_t imm; /* host order */
  uint32_t has_imm;
  uint32_t qp_num;
};

int mrcx_device_count(void);
int mrcx_device_name(int i, char *buf, size_t len);
void *mrcx_open(int i);
void mrcx_close(void *ctx);
int mrcx_gid(const void *ctx, uint8_t *out16);
void *mrcx_alloc_pd(const void *ctx);
void mrcx_dealloc_pd(void *pd);
void *mrcx_reg_mr(const void *pd, void *addr, size_t len, int remote,
                  uint32_t *lkey, uint32_t *rkey);
int mrcx_dereg_mr(void *mr);
struct mrcx_async_event {
  uint32_t event_type; /* enum ibv_event_type */
  uintptr_t handle;    /* the mrc_qp or mrc_cq it is about */
};

int mrcx_async_fd(const void *ctx);
int mrcx_get_async_event(const void *ctx, struct mrcx_async_event *out);
int mrcx_port_mtu(const void *ctx);
int mrcx_port_up(const void *ctx, uint8_t port);
int mrcx_port_set_up(const void *ctx, uint8_t port, int up);
void *mrcx_create_cq(const void *ctx, int entries, uintptr_t handle,
                     const void *channel);
int mrcx_req_notify(const void *cq);
void *mrcx_channel_create(void);
int mrcx_channel_fd(const void *ch);
void mrcx_channel_destroy(void *ch);
int mrcx_channel_get_event(const void *ch, uintptr_t *cq_handle);
int mrcx_destroy_cq(const void *ctx, void *cq);
void *mrcx_create_qp(const void *ctx, const void *pd, const void *send_cq,
                     const void *recv_cq, uint32_t max_send_wr,
                     uintptr_t handle);
int mrcx_qp_state(const void *qp); /* 0 RESET .. 4 ERR, or -errno */
int mrcx_to_err_or_reset(const void *qp, int reset);
uint32_t mrcx_qpn(const void *qp);
int mrcx_destroy_qp(void *qp);
int mrcx_to_init(const void *qp);
/* max_wimm_dest: receives the QP may hold (0: the device's default). */
int mrcx_to_rtr(const void *qp, uint32_t dest_qp, uint32_t rq_psn,
                const uint8_t *gid16, uint8_t log2_mtu, uint16_t max_wimm_dest);
/* timeout: exponent (0: default); retries at the fixed timeout, then with
 * backoff; mpr_units: the peer's window in 128 PSNs and max_wimm (0 each:
 * the defaults). */
int mrcx_to_rts(const void *qp, uint32_t sq_psn, uint8_t timeout,
                uint8_t retry_linear, uint8_t retry_exp, uint8_t mpr_units,
                uint16_t max_wimm);
int mrcx_post_write(const void *qp, uint64_t wr_id, uint64_t laddr,
                    uint32_t len, uint32_t lkey, uint64_t raddr,
                    uint32_t rkey, int signaled, int has_imm, uint32_t imm);
int mrcx_post_recv(const void *qp, uint64_t wr_id);
int mrcx_poll(const void *ctx, const void *cq, int max, struct mrcx_wc *out);

/* mrc_ctl.h's objects (libmrc/src/ctl.rs). */
int mrcx_bind_profiles(const void *qp, uint32_t ev_profile, uint32_t cc_profile);
/* The profiles, in the model's own terms (libmrc/src/ctl.rs: FmtReq,
 * EvReq, EvEntry, EvField, CcReq, ...; the SET_* bits and operation
 * numbers are the same there). */
enum {
  MRCX_SET_STATE = 1 << 0,
  MRCX_SET_MODE = 1 << 1,
  MRCX_SET_FIELDS = 1 << 2,
  MRCX_SET_FORMAT = 1 << 3,
  MRCX_SET_COUNT = 1 << 4,
  MRCX_SET_MIN_ACTIVE = 1 << 5,
  MRCX_SET_EVENT_MASK = 1 << 6,
  MRCX_SET_ALGORITHM = 1 << 7,
  MRCX_SET_CONFIG = 1 << 8,
};
enum {
  MRCX_EV_OP_NONE = 0, /* else enum mrc_ctl_ev_op + 1 */
  MRCX_FIELDS_OP_NONE = 0, /* else enum mrc_ctl_ev_fields_op + 1 */
  MRCX_CC_NONE = 0,
  MRCX_CC_NSCC = 1,
  MRCX_CC_UNKNOWN = 2,
};
/* Profile ids a context takes: 1 .. MRCX_MAX_PROFILES. */
enum { MRCX_MAX_PROFILES = 256, MRCX_EV_WIDTH = 16, MRCX_MAX_EV_FIELDS = 8 };
struct mrcx_ev {
  uint32_t value;
  uint32_t port; /* value 0 on port 0: not yet given */
};
struct mrcx_ev_field {
  uint32_t width, init_val, min_val, max_val, mask;
};
struct mrcx_ev_entry {
  struct mrcx_ev ev, ev_new;
  uint32_t state, flags;
};
struct mrcx_fmt_req {
  uint32_t set, state, mode, n_widths;
  const uint8_t *widths;
};
struct mrcx_ev_req {
  uint32_t set, state, mode, ev_count;
  uint64_t format;
  uint32_t ev_min_active, event_mask, ev_op, fields_op;
};
struct mrcx_ev_info {
  uint32_t state, mode;
  uint64_t format;
  uint32_t ev_count, ev_min_active, event_mask;
};
/* NSCC's parameters but max_cwnd (ctl.rs: Nscc): times in ns. */
struct mrcx_nscc {
  uint32_t base_rtt, target_delay, disable_qa, qa_gate, qa_threshold;
  float gamma, max_md_jump, eta, fi, fi_scale;
  uint32_t adjust_bytes_threshold, adjust_period_threshold;
};
struct mrcx_cc_req {
  uint32_t set, state, algorithm, max_cwnd;
  const uint8_t *config;
  uint32_t config_len;
  const struct mrcx_nscc *nscc; /* with MRCX_SET_CONFIG */
};
struct mrcx_cc_info {
  uint32_t state, algorithm;
  const uint8_t *config;
};
struct mrcx_ctl_info {
  uint32_t evs_in_use;
  uint32_t endpoint_ops; /* 1: the device sends them (a soft NIC) */
};
int mrcx_ctl_api_1_0_1(const void *ctx, int set);
int mrcx_ctl_info(const void *ctx, struct mrcx_ctl_info *info);
int mrcx_ctl_fmt(const void *ctx, uint64_t id, const struct mrcx_fmt_req *req,
                 uint32_t *state, uint32_t *mode, uint8_t *widths,
                 uint32_t cap, uint32_t *n);
int mrcx_ctl_ev(const void *ctx, uint64_t id, const struct mrcx_ev_req *req,
                struct mrcx_ev_entry *entries, uint32_t *n_entries,
                struct mrcx_ev_field *fields, uint32_t *n_fields,
                struct mrcx_ev_info *info);
int mrcx_ctl_cc(const void *ctx, uint64_t id, const struct mrcx_cc_req *req,
                struct mrcx_cc_info *info);
/* handle: the mrc_cq's address, as mrc.c gives it to mrcx_create_cq. */
int mrcx_ctl_open_ev_cq(const void *ctx, uintptr_t handle, int entries);
struct mrcx_ev_event {
  uint32_t profile_id;
  uint32_t ev;
  uint32_t state; /* enum mrc_ctl_ev_state */
  uint32_t drop_count; /* events lost since the one before */
};
int mrcx_ctl_poll_ev_cq(uintptr_t handle, int max, struct mrcx_ev_event *out,
                        int *api_1_0_1);
/* dscp: the request's traffic class (DSCP, 0..63). */
int mrcx_ctl_endpoint_post(const void *ctx, uint32_t kind, const uint8_t *gid16,
                           uint32_t ev, uint8_t port, uint8_t dscp,
                           uint32_t *id);
/* 1: request id's result (status, ...), 0: not yet, or -errno. */
int mrcx_ctl_endpoint_take(const void *ctx, uint32_t id, int *status,
                           uint32_t *rtt_ns, uint32_t *service_ns,
                           uint32_t *peer_ports_up);

/* The verbs objects of our devices (verbs.c), as mrc.c needs them.
 * `refs` counts the objects made from one that must go first: freeing
 * one that still has them is refused with EBUSY, as the kernel's verbs
 * do, instead of leaving them dangling. */
struct mrc_ibv_context {
  struct ibv_context ctx;
  uint32_t magic;
  void *rs;
  int refs; /* PDs, completion channels, MRC contexts */
};
struct mrc_ibv_pd {
  struct ibv_pd pd;
  void *rs;
  int refs; /* MRs, QPs */
};
struct mrc_ibv_comp_channel {
  struct ibv_comp_channel ch;
  void *rs;
  int refs; /* CQs */
};

static inline void mrc_ref(int *refs) {
  __atomic_fetch_add(refs, 1, __ATOMIC_ACQ_REL);
}
static inline void mrc_unref(int *refs) {
  __atomic_fetch_sub(refs, 1, __ATOMIC_ACQ_REL);
}
static inline int mrc_refs(int *refs) {
  return __atomic_load_n(refs, __ATOMIC_ACQUIRE);
}
#define MRC_CONTEXT_MAGIC 0x4d524331u /* "MRC1" */

/* ctx as one of our device contexts, or NULL (another provider's, or
 * closed). */
static inline struct mrc_ibv_context *mrc_ours(struct ibv_context *ctx) {
  struct mrc_ibv_context *c = (struct mrc_ibv_context *)ctx;
  return (c && c->magic == MRC_CONTEXT_MAGIC) ? c : NULL;
}

/* An MRC context (mrc.h): the device context it was made on. `refs`
 * counts its CQs, QPs, QP hints and completion channels. */
struct mrc_context {
  struct mrc_ibv_context *ibv;
  int refs;
  int hints; /* QP hints it holds (at most MRC_DEV_MAX_QP_HINT) */
};

/* What our devices offer (the driver's limits), for every query. */
enum {
  MRC_DEV_MAX_QP_HINT = 1024, /* per MRC context */
  MRC_DEV_MAX_QP = 255, /* 256, less QP 2 (MRC 1.0's endpoint QPN) */
  MRC_DEV_MAX_CQ = 256,
  MRC_DEV_MAX_QP_WR = 1 << 16,
  MRC_DEV_MAX_EVS = 128, /* EVs per QP (driver::EvProfile) */
};

#endif
