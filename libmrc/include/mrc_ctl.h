/*
 * mrc_ctl.h - the MRC control API, libmrc 1.0, as implemented by the Open
 * MRC project (lib_mrc.so): what a controller sets up before programs
 * run, and what it watches while they do.
 *
 * Written for this project from the public record of the OCP MRC 1.0 API
 * (the concepts and their life cycles; see docs/host.md, "mrc_ctl.h");
 * the OCP headers themselves are not used, and where the record gives no
 * name or value the ones here are this project's (docs/host.md lists
 * which).
 *
 * Profiles (EV formats, EVs, congestion control) belong to a device
 * context (ibv_context). EV and CC profiles move INIT -> OFFLINE ->
 * ONLINE (and ONLINE -> OFFLINE); a QP names ONLINE ones when it moves to
 * INIT (mrc_modify_qp, MRC_QP_EV_PROFILE / MRC_QP_CC_PROFILE) and takes
 * their EVs and window at RTS. Functions return 0 or an errno value.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#ifndef MRC_CTL_H
#define MRC_CTL_H

#include "mrc.h"

#ifdef __cplusplus
extern "C" {
#endif

enum mrc_ctl_profile_state {
  MRC_CTL_PROFILE_INIT = 0,
  MRC_CTL_PROFILE_OFFLINE = 1,
  MRC_CTL_PROFILE_ONLINE = 2,
};

/* ---- device and port ---- */

struct mrc_ctl_device_attr {
  uint32_t max_ev_format_profiles;
  uint32_t max_ev_profiles;
  uint32_t max_cc_profiles;
  uint32_t max_evs_per_profile;
  uint32_t max_ev_fields; /* fields of an EV format */
  uint32_t ev_bits;       /* bits of an EV value the device carries */
  uint32_t phys_port_cnt;
};

struct mrc_ctl_port_attr {
  enum ibv_port_state state;
  uint32_t admin_up; /* 1: the port is administratively up */
  enum ibv_mtu active_mtu;
};

int mrc_ctl_query_device(struct ibv_context *ctx,
                         struct mrc_ctl_device_attr *attr);
int mrc_ctl_query_port(struct ibv_context *ctx, uint8_t port_num,
                       struct mrc_ctl_port_attr *attr);
/* up = 0 takes the port down, nonzero brings it up. On a soft NIC the
 * peers it has QPs with are told (Port Status Update), then the port sends
 * and takes nothing and its QPs' EVs are DENIED until it is up again; a
 * card refuses down (EOPNOTSUPP). EINVAL: not our device, or a port other
 * than 1. Down, mrc_ctl_query_port reports IBV_PORT_DOWN, admin_up 0. */
int mrc_ctl_set_port_admin_state(struct ibv_context *ctx, uint8_t port_num,
                                 int up);

/* ---- EV format profiles: the widths of an EV's fields ---- */

#define MRC_CTL_MAX_EV_FIELDS 8

struct mrc_ctl_ev_format_attr {
  uint32_t num_fields;                          /* 1 .. 8 */
  uint8_t field_bits[MRC_CTL_MAX_EV_FIELDS];    /* each >= 1, sum <= 32 */
};

int mrc_ctl_create_ev_format_profile(struct ibv_context *ctx,
                                     const struct mrc_ctl_ev_format_attr *attr,
                                     uint32_t *id);
/* EBUSY while an EV profile names it. */
int mrc_ctl_destroy_ev_format_profile(struct ibv_context *ctx, uint32_t id);

/* ---- EV profiles: the EVs a QP sprays over ---- */

enum mrc_ctl_ev_profile_type {
  MRC_CTL_EV_PROFILE_AUTO = 0,      /* the device picks ev_count EVs per QP */
  MRC_CTL_EV_PROFILE_EXPLICIT = 1,  /* evs[0 .. ev_count) */
  MRC_CTL_EV_PROFILE_GENERATED = 2, /* ev_base .. ev_base + ev_count - 1 */
};

enum mrc_ctl_ev_state {
  MRC_CTL_EV_GOOD = 0,
  MRC_CTL_EV_ASSUMED_BAD = 1,
  MRC_CTL_EV_DENIED = 2,
};

/* event_mask: the new states that produce EV events. */
#define MRC_CTL_EV_EVENT(state) (1u << (state))

struct mrc_ctl_ev_profile_attr {
  enum mrc_ctl_ev_profile_type type;
  uint32_t ev_format_id; /* 0: none */
  uint32_t ev_count;     /* 1 .. max_evs_per_profile */
  uint32_t ev_min_active; /* <= ev_count */
  uint32_t event_mask;
  uint32_t ev_base;      /* GENERATED */
  const uint32_t *evs;   /* EXPLICIT: ev_count distinct values */
};

int mrc_ctl_create_ev_profile(struct ibv_context *ctx,
                              const struct mrc_ctl_ev_profile_attr *attr,
                              uint32_t *id);
/* EBUSY while a QP is bound to it. */
int mrc_ctl_destroy_ev_profile(struct ibv_context *ctx, uint32_t id);
int mrc_ctl_modify_ev_profile_state(struct ibv_context *ctx, uint32_t id,
                                    enum mrc_ctl_profile_state state);
/* attr->evs is set to NULL; up to max_evs values go to evs (AUTO: none,
 * the values are per QP), *num_evs says how many the profile has. */
int mrc_ctl_query_ev_profile(struct ibv_context *ctx, uint32_t id,
                             struct mrc_ctl_ev_profile_attr *attr,
                             enum mrc_ctl_profile_state *state, uint32_t *evs,
                             uint32_t max_evs, uint32_t *num_evs);
/* New values for an EXPLICIT profile that is not ONLINE and has no QP. */
int mrc_ctl_replace_evs(struct ibv_context *ctx, uint32_t id,
                        const uint32_t *evs, uint32_t count);
/* GOOD (allow) or DENIED (deny) one EV on every QP bound to the profile;
 * ASSUMED_BAD is the NIC's verdict (EINVAL). */
int mrc_ctl_set_ev_state(struct ibv_context *ctx, uint32_t id, uint32_t ev,
                         enum mrc_ctl_ev_state state);

/* ---- congestion-control profiles ---- */

#define MRC_CTL_CC_NSCC "uet-1.0-nscc"

struct mrc_ctl_cc_profile_attr {
  char algorithm[32]; /* MRC_CTL_CC_NSCC */
  /* UET 1.0 NSCC's parameters; times in ns, sizes in bytes. */
  uint32_t disable_qa;
  uint32_t adjust_bytes_threshold;
  uint32_t adjust_period_threshold;
  uint32_t base_rtt;
  uint32_t eta;
  uint32_t fi;
  uint32_t fi_scale;
  uint32_t gamma;
  uint32_t max_md_jump;
  uint32_t max_cwnd; /* > 0 */
  uint32_t qa_gate;
  uint32_t qa_threshold;
  uint32_t target_delay;
};

int mrc_ctl_create_cc_profile(struct ibv_context *ctx,
                              const struct mrc_ctl_cc_profile_attr *attr,
                              uint32_t *id);
int mrc_ctl_destroy_cc_profile(struct ibv_context *ctx, uint32_t id);
int mrc_ctl_modify_cc_profile_state(struct ibv_context *ctx, uint32_t id,
                                    enum mrc_ctl_profile_state state);
int mrc_ctl_query_cc_profile(struct ibv_context *ctx, uint32_t id,
                             struct mrc_ctl_cc_profile_attr *attr,
                             enum mrc_ctl_profile_state *state);

/* ---- the EV-event CQ: EV state changes of bound QPs ---- */

enum mrc_ctl_ev_reason {
  MRC_CTL_EV_REASON_CONTROL = 0, /* mrc_ctl_set_ev_state */
  MRC_CTL_EV_REASON_LOSS = 1,
  MRC_CTL_EV_REASON_TIMEOUT = 2,
  MRC_CTL_EV_REASON_PROBE_OK = 3,
};

struct mrc_ctl_ev_event {
  uint32_t ev_profile_id;
  uint32_t ev;
  uint32_t qp_num;
  uint8_t port;
  uint8_t new_state; /* enum mrc_ctl_ev_state */
  uint8_t reason;    /* enum mrc_ctl_ev_reason */
  uint8_t reserved;
  uint32_t drop_count; /* not counted by this device: 0 */
  uint32_t time_ns;    /* device time, wraps */
};

struct mrc_ctl_ev_cq;

/* One per device context (EBUSY for a second). */
struct mrc_ctl_ev_cq *mrc_ctl_create_ev_cq(struct ibv_context *ctx, int cqe);
int mrc_ctl_destroy_ev_cq(struct mrc_ctl_ev_cq *cq);
/* Events of QPs bound to an EV profile whose event_mask names the new
 * state: how many, or a negative errno. */
int mrc_ctl_poll_ev_cq(struct mrc_ctl_ev_cq *cq, int num_entries,
                       struct mrc_ctl_ev_event *events);

/* ---- batched endpoint operations (QPN 0x2) ---- */

enum mrc_ctl_endpoint_op_type {
  MRC_CTL_ENDPOINT_EV_PROBE = 0,
  MRC_CTL_ENDPOINT_PORT_STATUS_UPDATE = 1,
};

struct mrc_ctl_endpoint_op {
  enum mrc_ctl_endpoint_op_type type;
  union ibv_gid peer; /* the peer NIC's GID */
  uint32_t ev;        /* the EV probed, or the one the update travels on */
  uint8_t port;       /* EV_PROBE: our port the probe leaves on */
  int status;         /* out: 0, ETIMEDOUT (no answer), or EAGAIN (not
                         sent: the device's requests awaiting answers
                         stayed at its limit) */
  uint32_t rtt_ns;    /* out, EV_PROBE: request sent to answer received */
  uint32_t service_time_ns; /* out, EV_PROBE: the peer's time holding it,
                               as it reports it (a soft NIC answers in the
                               step the request arrived in: 0) */
  uint32_t peer_ports_up;   /* out, PORT_STATUS_UPDATE: the peer's ports
                               that are up, one bit each */
};

/* Send the operations and wait for every answer (or its timeout, 1 s
 * on a soft NIC): each op's outputs are filled. A Port Status Update
 * sends this device's own port state. Returns 0 when every op was sent
 * (see each status), EOPNOTSUPP if the device sends no endpoint
 * operations of its own (a card: its host interface has none), EINVAL
 * for bad arguments. */
int mrc_ctl_post_endpoint_ops(struct ibv_context *ctx,
                              struct mrc_ctl_endpoint_op *ops, int count);

#ifdef __cplusplus
}
#endif

#endif /* MRC_CTL_H */
