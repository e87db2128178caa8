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
int mrcx_ctl_create_ev_format(const void *ctx, const uint8_t *widths,
                              uint32_t n, uint32_t *id);
int mrcx_ctl_destroy_ev_format(const void *ctx, uint32_t id);
int mrcx_ctl_create_ev_profile(const void *ctx, uint32_t kind, uint32_t format,
                               uint32_t ev_count, uint32_t ev_min_active,
                               uint32_t event_mask, const uint32_t *evs,
                               uint32_t n_evs, uint32_t ev_base, uint32_t *id);
int mrcx_ctl_destroy_ev_profile(const void *ctx, uint32_t id);
int mrcx_ctl_profile_state(const void *ctx, int cc, uint32_t id,
                           uint32_t state);
/* attrs: kind, format, ev_count, ev_min_active, event_mask, ev_base, state */
enum { MRCX_QUERY_EV_ATTRS = 7, MRCX_NSCC_PARAMS = 13 };
int mrcx_ctl_query_ev_profile(const void *ctx, uint32_t id, uint32_t *attrs,
                              uint32_t *evs, uint32_t cap, uint32_t *n_evs);
int mrcx_ctl_replace_evs(const void *ctx, uint32_t id, const uint32_t *evs,
                         uint32_t n);
int mrcx_ctl_set_ev_state(const void *ctx, uint32_t id, uint32_t ev,
                          uint32_t state);
int mrcx_ctl_create_cc_profile(const void *ctx, const char *name,
                               const uint32_t *params, uint32_t *id);
int mrcx_ctl_destroy_cc_profile(const void *ctx, uint32_t id);
int mrcx_ctl_query_cc_profile(const void *ctx, uint32_t id, uint32_t *params,
                              uint32_t *state);
int mrcx_ctl_open_ev_cq(const void *ctx);
int mrcx_ctl_close_ev_cq(const void *ctx);
struct mrcx_ev_event {
  uint32_t ev_profile_id;
  uint32_t ev;
  uint32_t qp_num;
  uint32_t new_state;
  uint32_t reason;
  uint32_t time_ns;
};
int mrcx_ctl_poll_ev_cq(const void *ctx, int max, struct mrcx_ev_event *out);
int mrcx_ctl_endpoint_post(const void *ctx, uint32_t kind, const uint8_t *gid16,
                           uint32_t ev, uint8_t port, uint32_t *id);
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
  MRC_DEV_MAX_QP = 256,
  MRC_DEV_MAX_CQ = 256,
  MRC_DEV_MAX_QP_WR = 1 << 16,
  MRC_DEV_MAX_EVS = 128, /* EVs per QP (driver::EvProfile) */
};

#endif
