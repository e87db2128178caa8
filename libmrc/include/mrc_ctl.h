/*
 * mrc_ctl.h - the MRC control API, libmrc as implemented by the Open MRC
 * project (lib_mrc.so): what a network controller configures before
 * programs run (EV format, EV and CC profiles, ports) and what it watches
 * and asks while they do (EV events, endpoint operations).
 *
 * Written for this project from the public facts of the OCP MRC API
 * (function names and parameters, structure and enum names, field order,
 * constant values and documented errors); the comments are ours.
 * docs/host.md ("mrc_ctl.h") says what each function does on our devices
 * and what it refuses.
 *
 * Profiles are named by ids the controller picks (here 1 to the device's
 * maximum) and move INIT -> OFFLINE -> ONLINE -> OFFLINE -> INIT. A QP
 * names ONLINE ones with mrc_modify_qp (mrc.h). Functions return 0, or -1
 * with errno set, unless said otherwise.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#ifndef MRC_CTL_H
#define MRC_CTL_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "mrc.h"
#include "mrc_ctl_api_ver.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mrc_comp_channel;

#define MRC_CTL_MAX_VENDOR_CFG_SIZE 128
#define MRC_CTL_EV_MAX_BYTES 32

enum mrc_ctl_protocol_version {
  MRC_CTL_PROTOCOL_VERSION_0 = 0, /* none named: the provider's choice */
  MRC_CTL_PROTOCOL_VERSION_1 = 1 << 0,
};

enum mrc_ctl_profile_state {
  MRC_CTL_PROFILE_INIT,    /* not configured */
  MRC_CTL_PROFILE_OFFLINE, /* configured, not in use */
  MRC_CTL_PROFILE_ONLINE,  /* usable */
};

/* ---- the device ---- */

/* Optional features (mrc_ctl_device_attr.opt_attr). */
enum mrc_ctl_attr_opt {
  MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE = 1 << 0,
  MRC_CTL_OPT_CAP_CC_PROFILE_MODIFY_ONLINE = 1 << 1,
  MRC_CTL_OPT_CAP_EV_EVENT = 1 << 2,
  MRC_CTL_OPT_CAP_EV_EXPLICIT_RANGE = 1 << 3, /* explicit EVs: one range */
  MRC_CTL_OPT_CAP_EV_EVENT_PRECISE_DROP_CNT = 1 << 4,
  MRC_CTL_OPT_CAP_EP_OP_EV_PROBE = 1 << 5,
};

struct mrc_ctl_device_attr {
  uint32_t mrc_ctl_protocol_version; /* enum mrc_ctl_protocol_version bits */
  struct {
    uint32_t ev_max_fmt_profiles;
    uint32_t ev_max_profiles;
    uint32_t ev_max_count;         /* EVs of all profiles together */
    uint32_t ev_free_count;        /* of those, not taken by a profile */
    uint32_t ev_max_count_profile; /* EVs of one profile */
    uint32_t ev_count_align;       /* an EV count is a multiple of this */
    uint32_t ev_max_width;         /* bits of an EV */
    uint32_t ev_fmt_mode_mask;     /* enum mrc_ctl_ev_fmt_mode bits */
    uint32_t ev_mode_mask;         /* enum mrc_ctl_ev_mode bits */
    uint32_t ev_op_max_entries;    /* entries of one EV operation; 0: any */
  } ev;
  struct {
    uint32_t cc_max_profiles;
    const char **algorithms; /* names, NULL-terminated; the library's */
  } cc;
  uint32_t phy_port_mask; /* bit N: port N (1-based) */
  uint32_t opt_attr;      /* enum mrc_ctl_attr_opt bits */
};

/* The device's control features; *supported (the _ex form) is 0 for a
 * device that does not speak MRC. Calling mrc_ctl_query_device_ex tells
 * the library the program uses control API 1.0.1 or later (the EV event
 * layout depends on it); mrc_ctl_query_device means 1.0.0. */
#if MRC_CTL_API_VER_USED >= MRC_CTL_API_VER(1, 0, 1)
int mrc_ctl_query_device_ex(struct ibv_context *context,
                            struct mrc_context *mcontext,
                            struct mrc_ctl_device_attr *ctl_attr,
                            int *supported);
#endif
int mrc_ctl_query_device(struct ibv_context *context,
                         struct mrc_ctl_device_attr *ctl_attr);

/* The control API versions of the library (MRC_CTL_API_VER encoding);
 * any pointer may be NULL. Needs no context. */
void mrc_ctl_query_version(uint32_t *current_version,
                           uint32_t *last_supported_version,
                           uint32_t *vendor_version,
                           uint32_t *last_supported_vendor_version);

/* ---- ports ---- */

enum mrc_ctl_port_admin_state {
  MRC_CTL_PORT_ADMIN_DISABLED = 0,
  MRC_CTL_PORT_ADMIN_ENABLED = 1,
};

enum mrc_ctl_port_attr_mask {
  MRC_CTL_PORT_ADMIN_STATE = 1 << 0,
};

struct mrc_ctl_port_attr {
  enum mrc_ctl_port_admin_state port_admin_state;
};

/* port_num is 1-based. A disabled port is IBV_PORT_DOWN to
 * ibv_query_port. */
int mrc_ctl_query_port(struct mrc_context *context, uint8_t port_num,
                       struct mrc_ctl_port_attr *attr, int attr_mask);
int mrc_ctl_modify_port(struct mrc_context *context, uint8_t port_num,
                        struct mrc_ctl_port_attr *attr, int attr_mask);

/* ---- EV format profiles: how an EV's bits sit in a packet ---- */

enum mrc_ctl_ev_fmt_mode {
  MRC_CTL_EV_FMT_MODE_STEV = 1 << 0, /* IPv6 flow label and UDP source port */
  MRC_CTL_EV_FMT_MODE_SRV6 = 1 << 1, /* SRv6 (and SRH) addresses */
  MRC_CTL_EV_FMT_MODE_UDP = 1 << 2,  /* the UDP source port alone */
};

enum mrc_ctl_ev_fmt_op {
  MRC_CTL_EV_FMT_OP_MODIFY_FIELDS,
  MRC_CTL_EV_FMT_OP_QUERY_FIELDS,
};

enum mrc_ctl_ev_fmt_profile_attr_mask {
  MRC_CTL_EV_FMT_PROFILE_STATE = 1 << 0,
  MRC_CTL_EV_FMT_PROFILE_CUR_STATE = 1 << 1,
  MRC_CTL_EV_FMT_PROFILE_MODE = 1 << 2,
  MRC_CTL_EV_FMT_PROFILE_OP = 1 << 3,
  MRC_CTL_EV_FMT_VENDOR_CFG = (int)(1u << 31), /* bit 31 */
};

struct mrc_ctl_ev_fmt_field {
  uint8_t width; /* bits */
};

struct mrc_ctl_ev_fmt_profile_attr {
  enum mrc_ctl_profile_state profile_state;     /* in: the state wanted */
  enum mrc_ctl_profile_state cur_profile_state; /* out */
  enum mrc_ctl_ev_fmt_mode ev_fmt_mode;
  struct {
    enum mrc_ctl_ev_fmt_op op;
    struct mrc_ctl_ev_fmt_field *fmt_fields;
    int fmt_field_count; /* in: entries of fmt_fields; out: fields */
  } ev_fmt_op;
  uint8_t vendor_cfg[MRC_CTL_MAX_VENDOR_CFG_SIZE];
};

/* OFFLINE needs the mode, ONLINE the fields. EBUSY while an EV profile
 * that names it is ONLINE; E2BIG for fields the device cannot carry. */
int mrc_ctl_modify_ev_fmt_profile(struct mrc_context *mrc_ctx,
                                  uint64_t ev_fmt_profile_id,
                                  struct mrc_ctl_ev_fmt_profile_attr *attr,
                                  int attr_mask);
/* QUERY_FIELDS with too few entries: E2BIG, fmt_field_count set to the
 * number needed. */
int mrc_ctl_query_ev_fmt_profile(struct mrc_context *mrc_ctx,
                                 uint64_t ev_fmt_profile_id,
                                 struct mrc_ctl_ev_fmt_profile_attr *attr,
                                 int attr_mask);

/* ---- EVs ---- */

/* An EV's value: here the first 4 bytes, a host-order uint32_t. */
typedef uint8_t mrc_ctl_ev_t[MRC_CTL_EV_MAX_BYTES];

struct mrc_ctl_ev {
  mrc_ctl_ev_t val;
  uint8_t port; /* 1-based */
};

/* The value of an EV array entry not yet given. */
#define MRC_CTL_EV_UNPOPULATED ((struct mrc_ctl_ev){.val = {0}, .port = 0})

enum mrc_ctl_ev_state {
  MRC_CTL_EV_GOOD = 1 << 0,
  MRC_CTL_EV_ASSUMED_BAD = 1 << 1,
  MRC_CTL_EV_DENIED = 1 << 2,
  MRC_CTL_EV_UNKNOWN = (int)(1u << 31), /* bit 31 */
};

/* ---- EV profiles: the EVs a QP sprays over ---- */

enum mrc_ctl_ev_mode {
  MRC_CTL_EV_MODE_AUTO = 1 << 0, /* the device picks */
  MRC_CTL_EV_MODE_EXP = 1 << 1,  /* the controller lists them */
  MRC_CTL_EV_MODE_GEN = 1 << 2,  /* generated from the fields */
};

enum mrc_ctl_ev_op {
  MRC_CTL_EV_OP_REPLACE_EV,
  MRC_CTL_EV_OP_MODIFY_EV_STATE,
  MRC_CTL_EV_OP_QUERY_EV_STATE,
  MRC_CTL_EV_OP_QUERY_EV_ARRAY,
};

enum mrc_ctl_ev_fields_op {
  MRC_CTL_EV_FIELDS_OP_MODIFY_FIELDS,
  MRC_CTL_EV_FIELDS_OP_QUERY_FIELDS,
};

enum mrc_ctl_ev_profile_attr_mask {
  MRC_CTL_EV_PROFILE_STATE = 1 << 0,
  MRC_CTL_EV_PROFILE_CUR_STATE = 1 << 1,
  MRC_CTL_EV_PROFILE_MODE = 1 << 2,
  MRC_CTL_EV_PROFILE_FMT_ID = 1 << 3,
  MRC_CTL_EV_PROFILE_COUNT = 1 << 4,
  MRC_CTL_EV_PROFILE_MIN_ACTIVE = 1 << 5,
  MRC_CTL_EV_PROFILE_EVENT_MASK = 1 << 6,
  MRC_CTL_EV_PROFILE_EV_OP = 1 << 7,
  MRC_CTL_EV_PROFILE_EV_FIELDS_OP = 1 << 8,
  MRC_CTL_EV_PROFILE_VENDOR_CFG = (int)(1u << 31), /* bit 31 */
};

/* One field of a generated EV: init_val with the generated bits (min_val
 * .. max_val) laid into the bits of mask. */
struct mrc_ctl_ev_field {
  uint32_t width;
  uint32_t init_val;
  uint32_t min_val;
  uint32_t max_val;
  uint32_t mask;
};

enum mrc_ctl_ev_op_flags {
  MRC_CTL_EV_OP_F_ALL_COPIES = 1 << 0, /* REPLACE_EV: every occurrence */
};

/* An entry of an EV operation: ev is the EV acted on (output of
 * QUERY_EV_ARRAY), ev_new its replacement (REPLACE_EV), state the state
 * set (REPLACE_EV, MODIFY_EV_STATE) or found (the queries). */
struct mrc_ctl_ev_op_entry {
  struct mrc_ctl_ev ev;
  struct mrc_ctl_ev ev_new;
  enum mrc_ctl_ev_state state;
  uint32_t flags; /* enum mrc_ctl_ev_op_flags */
};

struct mrc_ctl_ev_profile_attr {
  enum mrc_ctl_profile_state profile_state;     /* in: the state wanted */
  enum mrc_ctl_profile_state cur_profile_state; /* out */
  enum mrc_ctl_ev_mode ev_mode;
  uint64_t ev_fmt_profile_id;
  uint32_t ev_count;
  uint32_t ev_min_active; /* GOOD EVs a QP keeps at least; <= ev_count */
  int ev_event_mask;      /* MRC_CTL_EV_GOOD, MRC_CTL_EV_ASSUMED_BAD */
  struct {
    enum mrc_ctl_ev_op op;
    struct mrc_ctl_ev_op_entry *entries;
    int entry_count; /* in: entries given; out: entries filled / needed */
  } ev_op;
  struct {
    enum mrc_ctl_ev_fields_op op;
    struct mrc_ctl_ev_field *fields;
    int field_count; /* in: fields given; out: fields filled / needed */
  } ev_fields_op;
  uint8_t vendor_cfg[MRC_CTL_MAX_VENDOR_CFG_SIZE];
};

/* OFFLINE needs the mode, format, count (and, generated, the fields);
 * ONLINE the minimum active, the event mask and (explicit) every EV
 * given. EV_OP and EV_FIELDS_OP exclude each other (EINVAL). ENOENT: an
 * EV not in the profile; EBUSY: QPs use it; E2BIG: too many entries. */
int mrc_ctl_modify_ev_profile(struct mrc_context *mrc_ctx,
                              uint64_t ev_profile_id,
                              struct mrc_ctl_ev_profile_attr *attr,
                              int attr_mask);
int mrc_ctl_query_ev_profile(struct mrc_context *mrc_ctx,
                             uint64_t ev_profile_id,
                             struct mrc_ctl_ev_profile_attr *attr,
                             int attr_mask);

/* ---- congestion-control profiles ---- */

enum mrc_ctl_cc_profile_attr_mask {
  MRC_CTL_CC_PROFILE_STATE = 1 << 0,
  MRC_CTL_CC_PROFILE_CUR_STATE = 1 << 1,
  MRC_CTL_CC_PROFILE_ALGORITHM = 1 << 2,
  MRC_CTL_CC_PROFILE_CONFIG = 1 << 3,
  MRC_CTL_CC_PROFILE_VENDOR_CFG = (int)(1u << 31), /* bit 31 */
};

struct mrc_ctl_cc_profile_attr {
  enum mrc_ctl_profile_state profile_state;     /* in: the state wanted */
  enum mrc_ctl_profile_state cur_profile_state; /* out */
  const char *algorithm; /* one of mrc_ctl_device_attr.cc.algorithms, or
                            NULL: no congestion control */
  const void *cc_config; /* the algorithm's parameters */
  uint8_t vendor_cfg[MRC_CTL_MAX_VENDOR_CFG_SIZE];
};

/* UET 1.0 NSCC's parameters ("uet-1.0-nscc"): times in ns, sizes in
 * bytes. */
struct mrc_ctl_cc_nscc_cfg {
  uint8_t disable_qa;
  uint32_t adjust_bytes_threshold;
  uint32_t adjust_period_threshold;
  uint32_t base_rtt;
  float eta;
  float fi;
  float fi_scale;
  float gamma;
  float max_md_jump;
  uint32_t max_cwnd;
  uint8_t qa_gate;
  uint32_t qa_threshold;
  uint32_t target_delay;
};

/* OFFLINE needs the algorithm, ONLINE its configuration. EBUSY while QPs
 * use it. */
int mrc_ctl_modify_cc_profile(struct mrc_context *mrc_ctx,
                              uint64_t cc_profile_id,
                              struct mrc_ctl_cc_profile_attr *attr,
                              int attr_mask);
int mrc_ctl_query_cc_profile(struct mrc_context *mrc_ctx,
                             uint64_t cc_profile_id,
                             struct mrc_ctl_cc_profile_attr *attr,
                             int attr_mask);

/* ---- EV events: EV state changes the event masks ask for ---- */

struct mrc_ctl_ev_event {
  uint64_t profile_id;
  struct mrc_ctl_ev ev;
  uint32_t drop_count; /* events lost before this one (or 1: some were) */
#if MRC_CTL_API_VER_USED >= MRC_CTL_API_VER(1, 0, 1)
  enum mrc_ctl_ev_state state; /* the EV's new state */
#endif
};

/* A CQ of EV events, destroyed with mrc_destroy_cq. */
struct mrc_cq *mrc_ctl_create_ev_event_cq(struct mrc_context *mrc_ctx,
                                          int cqe, void *cq_context,
                                          struct mrc_comp_channel *channel,
                                          int comp_vector);
/* Up to num_entries events: how many, or a negative errno. */
int mrc_ctl_poll_ev_event(struct mrc_cq *ev_cq, int num_entries,
                          struct mrc_ctl_ev_event *ev_event);

/* ---- endpoint operations (to the peer NIC's control QP) ---- */

enum mrc_ctl_ep_op_type {
  MRC_CTL_EP_OP_EV_PROBE,
  MRC_CTL_EP_OP_PORT_STATUS_UPDATE,
};

struct mrc_ctl_ep_req {
  uint16_t req_id; /* the caller's; unique among those outstanding */
  union ibv_gid sgid;
  union ibv_gid dgid;
  enum mrc_ctl_ev_fmt_mode ev_fmt_mode;
  struct mrc_ctl_ev req_ev; /* the EV and port it leaves on */
  union {
    struct {
      uint32_t port_status; /* bit N: port N (1-based) is up */
    } port_status_update;
  } op;
};

struct mrc_ctl_ep_rsp {
  uint16_t req_id;
  uint8_t port;         /* where the answer came in (1-based) */
  unsigned int rtt;     /* ns */
  uint8_t adj_svc_time; /* nonzero: rtt less the responder's time */
};

/* Send num_req operations of one kind and wait for their answers (at
 * most rsp_timeout ns): *num_rsp answers in rsp, in the order they came.
 * ETIMEDOUT when some did not come (those that did are in rsp). */
int mrc_ctl_ep_batch_send_wait(struct mrc_context *mrc_ctx, uint8_t req_tc,
                               enum mrc_ctl_ep_op_type op_type,
                               struct mrc_ctl_ep_req *req, int num_req,
                               uint32_t rsp_timeout,
                               struct mrc_ctl_ep_rsp *rsp, int *num_rsp);

#ifdef __cplusplus
}
#endif

#endif /* MRC_CTL_H */
