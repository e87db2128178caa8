/*
 * libmrc's control API (include/mrc_ctl.h) over the Rust core
 * (libmrc/src/ctl.rs): the public structures translated to the core's
 * and back, errors as -1 with errno.
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

/* The device context an MRC context (core.h) was made on. */
static struct mrc_ibv_context *device_of(struct mrc_context *m) {
  if (!m)
    return NULL;
  struct mrc_ibv_context *c = m->ibv;
  return c ? mrc_ours(&c->ctx) : NULL;
}

/* -1 with errno = err (err nonzero), else 0. */
static int result(int err) {
  if (err) {
    errno = err;
    return -1;
  }
  return 0;
}

static const char NSCC_NAME[] = "uet-1.0-nscc";
static const char *cc_algorithms[] = {NSCC_NAME, NULL};

/* Vendor configuration: this device defines none, so only zeros. */
static int vendor_cfg_empty(const uint8_t *cfg) {
  for (size_t i = 0; i < MRC_CTL_MAX_VENDOR_CFG_SIZE; i++)
    if (cfg[i])
      return 0;
  return 1;
}

/* ---- the device ---- */

enum {
  CTL_PORT = 1,            /* the device's one port, 1-based */
  CTL_EV_MAX_COUNT = 128,  /* EVs per profile (driver::EvProfile) */
  CTL_EV_COUNT_ALIGN = 1,
};

static int fill_device_attr(struct mrc_ibv_context *c,
                            struct mrc_ctl_device_attr *a) {
  struct mrcx_ctl_info info;
  int rc = mrcx_ctl_info(c->rs, &info);
  if (rc)
    return rc;
  memset(a, 0, sizeof(*a));
  a->mrc_ctl_protocol_version = MRC_CTL_PROTOCOL_VERSION_1;
  a->ev.ev_max_fmt_profiles = MRCX_MAX_PROFILES;
  a->ev.ev_max_profiles = MRCX_MAX_PROFILES;
  a->ev.ev_max_count = MRCX_MAX_PROFILES * CTL_EV_MAX_COUNT;
  a->ev.ev_free_count = a->ev.ev_max_count - info.evs_in_use;
  a->ev.ev_max_count_profile = CTL_EV_MAX_COUNT;
  a->ev.ev_count_align = CTL_EV_COUNT_ALIGN;
  a->ev.ev_max_width = MRCX_EV_WIDTH;
  a->ev.ev_fmt_mode_mask = MRC_CTL_EV_FMT_MODE_UDP;
  a->ev.ev_mode_mask =
      MRC_CTL_EV_MODE_AUTO | MRC_CTL_EV_MODE_EXP | MRC_CTL_EV_MODE_GEN;
  a->ev.ev_op_max_entries = 0;
  a->cc.cc_max_profiles = MRCX_MAX_PROFILES;
  a->cc.algorithms = cc_algorithms;
  a->phy_port_mask = 1u << CTL_PORT;
  a->opt_attr = MRC_CTL_OPT_CAP_EV_EVENT;
  if (info.endpoint_ops)
    a->opt_attr |= MRC_CTL_OPT_CAP_EP_OP_EV_PROBE;
  return 0;
}

int mrc_ctl_query_device(struct ibv_context *context,
                         struct mrc_ctl_device_attr *ctl_attr) {
  struct mrc_ibv_context *c = mrc_ours(context);
  if (!context || !ctl_attr)
    return result(EINVAL);
  if (!c)
    return result(EOPNOTSUPP); /* not an MRC device */
  return result(fill_device_attr(c, ctl_attr));
}

int mrc_ctl_query_device_ex(struct ibv_context *context,
                            struct mrc_context *mcontext,
                            struct mrc_ctl_device_attr *ctl_attr,
                            int *supported) {
  if (!context || !ctl_attr || !supported)
    return result(EINVAL);
  struct mrc_ibv_context *c = mrc_ours(context);
  *supported = c != NULL;
  if (!c) {
    memset(ctl_attr, 0, sizeof(*ctl_attr));
    return 0;
  }
  if (mcontext && device_of(mcontext) != c)
    return result(EINVAL);
  /* The program uses API 1.0.1: its EV events carry their state. */
  mrcx_ctl_api_1_0_1(c->rs, 1);
  return result(fill_device_attr(c, ctl_attr));
}

void mrc_ctl_query_version(uint32_t *current_version,
                           uint32_t *last_supported_version,
                           uint32_t *vendor_version,
                           uint32_t *last_supported_vendor_version) {
  if (current_version)
    *current_version = MRC_CTL_API_CURRENT_VERSION;
  if (last_supported_version)
    *last_supported_version = MRC_CTL_API_LAST_SUPPORTED_VERSION;
  if (vendor_version)
    *vendor_version = MRC_CTL_VENDOR_API_CURRENT_VERSION;
  if (last_supported_vendor_version)
    *last_supported_vendor_version = MRC_CTL_VENDOR_API_LAST_SUPPORTED_VERSION;
}

/* ---- ports ---- */

int mrc_ctl_query_port(struct mrc_context *context, uint8_t port_num,
                       struct mrc_ctl_port_attr *attr, int attr_mask) {
  struct mrc_ibv_context *c = device_of(context);
  if (!c || !attr || port_num != CTL_PORT ||
      (attr_mask & ~MRC_CTL_PORT_ADMIN_STATE))
    return result(EINVAL);
  if (attr_mask & MRC_CTL_PORT_ADMIN_STATE) {
    int up = mrcx_port_up(c->rs, (uint8_t)(port_num - 1));
    if (up < 0)
      return result(-up);
    attr->port_admin_state =
        up ? MRC_CTL_PORT_ADMIN_ENABLED : MRC_CTL_PORT_ADMIN_DISABLED;
  }
  return 0;
}

/* A soft NIC's port goes down and up (docs/host.md, "Ports"); a card
 * refuses down with EOPNOTSUPP (its port is always up). */
int mrc_ctl_modify_port(struct mrc_context *context, uint8_t port_num,
                        struct mrc_ctl_port_attr *attr, int attr_mask) {
  struct mrc_ibv_context *c = device_of(context);
  if (!c || !attr || port_num != CTL_PORT ||
      (attr_mask & ~MRC_CTL_PORT_ADMIN_STATE))
    return result(EINVAL);
  if (!(attr_mask & MRC_CTL_PORT_ADMIN_STATE))
    return 0;
  if (attr->port_admin_state != MRC_CTL_PORT_ADMIN_ENABLED &&
      attr->port_admin_state != MRC_CTL_PORT_ADMIN_DISABLED)
    return result(EINVAL);
  return result(mrcx_port_set_up(
      c->rs, (uint8_t)(port_num - 1),
      attr->port_admin_state == MRC_CTL_PORT_ADMIN_ENABLED));
}

/* ---- EV format profiles ---- */

static const int FMT_MASK_KNOWN =
    MRC_CTL_EV_FMT_PROFILE_STATE | MRC_CTL_EV_FMT_PROFILE_CUR_STATE |
    MRC_CTL_EV_FMT_PROFILE_MODE | MRC_CTL_EV_FMT_PROFILE_OP |
    MRC_CTL_EV_FMT_VENDOR_CFG;

/* After a modify or query: the states, mode and (QUERY_FIELDS) fields. */
static int fmt_report(struct mrc_ibv_context *c, uint64_t id,
                      struct mrc_ctl_ev_fmt_profile_attr *attr, int attr_mask,
                      const struct mrcx_fmt_req *req) {
  uint8_t widths[MRCX_MAX_EV_FIELDS];
  uint32_t state = 0, mode = 0, n = 0;
  int rc = mrcx_ctl_fmt(c->rs, id, req, &state, &mode, widths,
                        MRCX_MAX_EV_FIELDS, &n);
  if (rc)
    return rc;
  if (attr_mask & (MRC_CTL_EV_FMT_PROFILE_STATE |
                   MRC_CTL_EV_FMT_PROFILE_CUR_STATE))
    attr->cur_profile_state = (enum mrc_ctl_profile_state)state;
  if (!req && (attr_mask & MRC_CTL_EV_FMT_PROFILE_STATE))
    attr->profile_state = (enum mrc_ctl_profile_state)state;
  if (!req && (attr_mask & MRC_CTL_EV_FMT_PROFILE_MODE))
    attr->ev_fmt_mode = (enum mrc_ctl_ev_fmt_mode)mode;
  if (!req && (attr_mask & MRC_CTL_EV_FMT_VENDOR_CFG))
    memset(attr->vendor_cfg, 0, sizeof(attr->vendor_cfg));
  if ((attr_mask & MRC_CTL_EV_FMT_PROFILE_OP) &&
      attr->ev_fmt_op.op == MRC_CTL_EV_FMT_OP_QUERY_FIELDS) {
    int cap = attr->ev_fmt_op.fmt_field_count;
    attr->ev_fmt_op.fmt_field_count = (int)n;
    if ((uint32_t)cap < n)
      return E2BIG;
    for (uint32_t i = 0; i < n; i++)
      attr->ev_fmt_op.fmt_fields[i].width = widths[i];
  }
  return 0;
}

/* The fields operation's array: present and of a sane length. */
static int fmt_op_ok(const struct mrc_ctl_ev_fmt_profile_attr *attr) {
  int n = attr->ev_fmt_op.fmt_field_count;
  return n >= 0 && (n == 0 || attr->ev_fmt_op.fmt_fields);
}

int mrc_ctl_modify_ev_fmt_profile(struct mrc_context *mrc_ctx,
                                  uint64_t ev_fmt_profile_id,
                                  struct mrc_ctl_ev_fmt_profile_attr *attr,
                                  int attr_mask) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || !attr || (attr_mask & ~FMT_MASK_KNOWN) ||
      (attr_mask & MRC_CTL_EV_FMT_PROFILE_CUR_STATE))
    return result(EINVAL);
  if ((attr_mask & MRC_CTL_EV_FMT_VENDOR_CFG) &&
      !vendor_cfg_empty(attr->vendor_cfg))
    return result(EINVAL);
  struct mrcx_fmt_req req = {0};
  uint8_t widths[MRCX_MAX_EV_FIELDS];
  if (attr_mask & MRC_CTL_EV_FMT_PROFILE_STATE) {
    req.set |= MRCX_SET_STATE;
    req.state = (uint32_t)attr->profile_state;
  }
  if (attr_mask & MRC_CTL_EV_FMT_PROFILE_MODE) {
    req.set |= MRCX_SET_MODE;
    req.mode = (uint32_t)attr->ev_fmt_mode;
  }
  if (attr_mask & MRC_CTL_EV_FMT_PROFILE_OP) {
    if (!fmt_op_ok(attr))
      return result(EINVAL);
    if (attr->ev_fmt_op.op == MRC_CTL_EV_FMT_OP_MODIFY_FIELDS) {
      int n = attr->ev_fmt_op.fmt_field_count;
      if (n > MRCX_MAX_EV_FIELDS)
        return result(E2BIG);
      for (int i = 0; i < n; i++)
        widths[i] = attr->ev_fmt_op.fmt_fields[i].width;
      req.set |= MRCX_SET_FIELDS;
      req.widths = widths;
      req.n_widths = (uint32_t)n;
    } else if (attr->ev_fmt_op.op != MRC_CTL_EV_FMT_OP_QUERY_FIELDS) {
      return result(EINVAL);
    }
  }
  return result(fmt_report(c, ev_fmt_profile_id, attr, attr_mask, &req));
}

int mrc_ctl_query_ev_fmt_profile(struct mrc_context *mrc_ctx,
                                 uint64_t ev_fmt_profile_id,
                                 struct mrc_ctl_ev_fmt_profile_attr *attr,
                                 int attr_mask) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || !attr || (attr_mask & ~FMT_MASK_KNOWN))
    return result(EINVAL);
  if ((attr_mask & MRC_CTL_EV_FMT_PROFILE_OP) &&
      (attr->ev_fmt_op.op != MRC_CTL_EV_FMT_OP_QUERY_FIELDS ||
       !fmt_op_ok(attr)))
    return result(EINVAL);
  return result(fmt_report(c, ev_fmt_profile_id, attr, attr_mask, NULL));
}

/* ---- EVs between the API's form and the core's ---- */

/* An EV's value is the first 4 bytes (a host-order uint32_t); the rest
 * must be zero (EVs here are 16 bits). 0: ok. */
static int ev_in(const struct mrc_ctl_ev *e, struct mrcx_ev *out) {
  for (size_t i = sizeof(uint32_t); i < MRC_CTL_EV_MAX_BYTES; i++)
    if (e->val[i])
      return EINVAL;
  memcpy(&out->value, e->val, sizeof(uint32_t));
  out->port = e->port;
  return 0;
}

static void ev_out(const struct mrcx_ev *e, struct mrc_ctl_ev *out) {
  memset(out, 0, sizeof(*out));
  memcpy(out->val, &e->value, sizeof(uint32_t));
  out->port = (uint8_t)e->port;
}

/* ---- EV profiles ---- */

static const int EV_MASK_KNOWN =
    MRC_CTL_EV_PROFILE_STATE | MRC_CTL_EV_PROFILE_CUR_STATE |
    MRC_CTL_EV_PROFILE_MODE | MRC_CTL_EV_PROFILE_FMT_ID |
    MRC_CTL_EV_PROFILE_COUNT | MRC_CTL_EV_PROFILE_MIN_ACTIVE |
    MRC_CTL_EV_PROFILE_EVENT_MASK | MRC_CTL_EV_PROFILE_EV_OP |
    MRC_CTL_EV_PROFILE_EV_FIELDS_OP | MRC_CTL_EV_PROFILE_VENDOR_CFG;

/* Modify (modify nonzero) or query EV profile id as attr and attr_mask
 * say: the operations' arrays converted in and out. Returns an errno. */
static int ev_profile(struct mrc_ibv_context *c, uint64_t id,
                      struct mrc_ctl_ev_profile_attr *attr, int attr_mask,
                      int modify) {
  int ev_op = attr_mask & MRC_CTL_EV_PROFILE_EV_OP;
  int fields_op = attr_mask & MRC_CTL_EV_PROFILE_EV_FIELDS_OP;
  if (ev_op && fields_op)
    return EINVAL;
  struct mrcx_ev_req req = {0};
  if (modify) {
    if (attr_mask & MRC_CTL_EV_PROFILE_CUR_STATE)
      return EINVAL;
    if ((attr_mask & MRC_CTL_EV_PROFILE_VENDOR_CFG) &&
        !vendor_cfg_empty(attr->vendor_cfg))
      return EINVAL;
    static const struct {
      int mask;
      uint32_t set;
    } sets[] = {
        {MRC_CTL_EV_PROFILE_STATE, MRCX_SET_STATE},
        {MRC_CTL_EV_PROFILE_MODE, MRCX_SET_MODE},
        {MRC_CTL_EV_PROFILE_FMT_ID, MRCX_SET_FORMAT},
        {MRC_CTL_EV_PROFILE_COUNT, MRCX_SET_COUNT},
        {MRC_CTL_EV_PROFILE_MIN_ACTIVE, MRCX_SET_MIN_ACTIVE},
        {MRC_CTL_EV_PROFILE_EVENT_MASK, MRCX_SET_EVENT_MASK},
    };
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
      if (attr_mask & sets[i].mask)
        req.set |= sets[i].set;
    req.state = (uint32_t)attr->profile_state;
    req.mode = (uint32_t)attr->ev_mode;
    req.format = attr->ev_fmt_profile_id;
    req.ev_count = attr->ev_count;
    req.ev_min_active = attr->ev_min_active;
    req.event_mask = (uint32_t)attr->ev_event_mask;
  }
  struct mrcx_ev_entry *entries = NULL;
  struct mrcx_ev_field fields[MRCX_MAX_EV_FIELDS];
  uint32_t n_entries = 0, n_fields = 0;
  int rc = 0;
  if (ev_op) {
    enum mrc_ctl_ev_op op = attr->ev_op.op;
    int n = attr->ev_op.entry_count;
    if (op > MRC_CTL_EV_OP_QUERY_EV_ARRAY || n < 0 ||
        (n > 0 && !attr->ev_op.entries))
      return EINVAL;
    if (!modify && (op == MRC_CTL_EV_OP_REPLACE_EV ||
                    op == MRC_CTL_EV_OP_MODIFY_EV_STATE))
      return EINVAL;
    req.ev_op = (uint32_t)op + 1;
    entries = calloc(n > 0 ? (size_t)n : 1, sizeof(*entries));
    if (!entries)
      return ENOMEM;
    n_entries = (uint32_t)n;
    for (int i = 0; i < n && op != MRC_CTL_EV_OP_QUERY_EV_ARRAY; i++) {
      const struct mrc_ctl_ev_op_entry *e = &attr->ev_op.entries[i];
      if (ev_in(&e->ev, &entries[i].ev) ||
          (op == MRC_CTL_EV_OP_REPLACE_EV &&
           ev_in(&e->ev_new, &entries[i].ev_new))) {
        free(entries);
        return EINVAL;
      }
      entries[i].state = (uint32_t)e->state;
      entries[i].flags = e->flags;
    }
  }
  if (fields_op) {
    enum mrc_ctl_ev_fields_op op = attr->ev_fields_op.op;
    int n = attr->ev_fields_op.field_count;
    if (op > MRC_CTL_EV_FIELDS_OP_QUERY_FIELDS || n < 0 ||
        (n > 0 && !attr->ev_fields_op.fields) ||
        (!modify && op == MRC_CTL_EV_FIELDS_OP_MODIFY_FIELDS))
      return EINVAL;
    if (op == MRC_CTL_EV_FIELDS_OP_MODIFY_FIELDS && n > MRCX_MAX_EV_FIELDS)
      return E2BIG;
    req.fields_op = (uint32_t)op + 1;
    n_fields = n > MRCX_MAX_EV_FIELDS ? MRCX_MAX_EV_FIELDS : (uint32_t)n;
    for (uint32_t i = 0; i < n_fields; i++) {
      const struct mrc_ctl_ev_field *f = &attr->ev_fields_op.fields[i];
      fields[i] = (struct mrcx_ev_field){f->width, f->init_val, f->min_val,
                                         f->max_val, f->mask};
    }
  }
  struct mrcx_ev_info info;
  memset(&info, 0, sizeof(info));
  rc = mrcx_ctl_ev(c->rs, id, &req, entries, &n_entries, fields, &n_fields,
                   &info);
  /* Outputs of the operations, E2BIG included (the count needed). */
  if (ev_op) {
    enum mrc_ctl_ev_op op = attr->ev_op.op;
    if (op == MRC_CTL_EV_OP_QUERY_EV_ARRAY) {
      if (rc == 0 || rc == E2BIG) {
        if (rc == 0)
          for (uint32_t i = 0; i < n_entries; i++) {
            struct mrc_ctl_ev_op_entry *e = &attr->ev_op.entries[i];
            ev_out(&entries[i].ev, &e->ev);
            e->state = (enum mrc_ctl_ev_state)entries[i].state;
          }
        attr->ev_op.entry_count = (int)n_entries;
      }
    } else if (op == MRC_CTL_EV_OP_QUERY_EV_STATE && rc == 0) {
      for (int i = 0; i < attr->ev_op.entry_count; i++)
        attr->ev_op.entries[i].state =
            (enum mrc_ctl_ev_state)entries[i].state;
    }
    free(entries);
  }
  if (fields_op && attr->ev_fields_op.op == MRC_CTL_EV_FIELDS_OP_QUERY_FIELDS &&
      (rc == 0 || rc == E2BIG)) {
    if (rc == 0)
      for (uint32_t i = 0; i < n_fields; i++)
        attr->ev_fields_op.fields[i] = (struct mrc_ctl_ev_field){
            fields[i].width, fields[i].init_val, fields[i].min_val,
            fields[i].max_val, fields[i].mask};
    attr->ev_fields_op.field_count = (int)n_fields;
  }
  if (rc)
    return rc;
  if (attr_mask & (MRC_CTL_EV_PROFILE_STATE | MRC_CTL_EV_PROFILE_CUR_STATE))
    attr->cur_profile_state = (enum mrc_ctl_profile_state)info.state;
  if (!modify) {
    if (attr_mask & MRC_CTL_EV_PROFILE_STATE)
      attr->profile_state = (enum mrc_ctl_profile_state)info.state;
    if (attr_mask & MRC_CTL_EV_PROFILE_MODE)
      attr->ev_mode = (enum mrc_ctl_ev_mode)info.mode;
    if (attr_mask & MRC_CTL_EV_PROFILE_FMT_ID)
      attr->ev_fmt_profile_id = info.format;
    if (attr_mask & MRC_CTL_EV_PROFILE_COUNT)
      attr->ev_count = info.ev_count;
    if (attr_mask & MRC_CTL_EV_PROFILE_MIN_ACTIVE)
      attr->ev_min_active = info.ev_min_active;
    if (attr_mask & MRC_CTL_EV_PROFILE_EVENT_MASK)
      attr->ev_event_mask = (int)info.event_mask;
    if (attr_mask & MRC_CTL_EV_PROFILE_VENDOR_CFG)
      memset(attr->vendor_cfg, 0, sizeof(attr->vendor_cfg));
  }
  return 0;
}

int mrc_ctl_modify_ev_profile(struct mrc_context *mrc_ctx,
                              uint64_t ev_profile_id,
                              struct mrc_ctl_ev_profile_attr *attr,
                              int attr_mask) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || !attr || (attr_mask & ~EV_MASK_KNOWN))
    return result(EINVAL);
  return result(ev_profile(c, ev_profile_id, attr, attr_mask, 1));
}

int mrc_ctl_query_ev_profile(struct mrc_context *mrc_ctx,
                             uint64_t ev_profile_id,
                             struct mrc_ctl_ev_profile_attr *attr,
                             int attr_mask) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || !attr || (attr_mask & ~EV_MASK_KNOWN))
    return result(EINVAL);
  return result(ev_profile(c, ev_profile_id, attr, attr_mask, 0));
}

/* ---- CC profiles ---- */

static const int CC_MASK_KNOWN =
    MRC_CTL_CC_PROFILE_STATE | MRC_CTL_CC_PROFILE_CUR_STATE |
    MRC_CTL_CC_PROFILE_ALGORITHM | MRC_CTL_CC_PROFILE_CONFIG |
    MRC_CTL_CC_PROFILE_VENDOR_CFG;

static int cc_report(struct mrc_ibv_context *c, uint64_t id,
                     struct mrc_ctl_cc_profile_attr *attr, int attr_mask,
                     const struct mrcx_cc_req *req) {
  struct mrcx_cc_info info;
  memset(&info, 0, sizeof(info));
  int rc = mrcx_ctl_cc(c->rs, id, req, &info);
  if (rc)
    return rc;
  if (attr_mask & (MRC_CTL_CC_PROFILE_STATE | MRC_CTL_CC_PROFILE_CUR_STATE))
    attr->cur_profile_state = (enum mrc_ctl_profile_state)info.state;
  if (req)
    return 0;
  if (attr_mask & MRC_CTL_CC_PROFILE_STATE)
    attr->profile_state = (enum mrc_ctl_profile_state)info.state;
  if (attr_mask & MRC_CTL_CC_PROFILE_ALGORITHM)
    attr->algorithm = info.algorithm == MRCX_CC_NSCC ? NSCC_NAME : NULL;
  if (attr_mask & MRC_CTL_CC_PROFILE_CONFIG)
    attr->cc_config = info.config;
  if (attr_mask & MRC_CTL_CC_PROFILE_VENDOR_CFG)
    memset(attr->vendor_cfg, 0, sizeof(attr->vendor_cfg));
  return 0;
}

int mrc_ctl_modify_cc_profile(struct mrc_context *mrc_ctx,
                              uint64_t cc_profile_id,
                              struct mrc_ctl_cc_profile_attr *attr,
                              int attr_mask) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || !attr || (attr_mask & ~CC_MASK_KNOWN) ||
      (attr_mask & MRC_CTL_CC_PROFILE_CUR_STATE))
    return result(EINVAL);
  if ((attr_mask & MRC_CTL_CC_PROFILE_VENDOR_CFG) &&
      !vendor_cfg_empty(attr->vendor_cfg))
    return result(EINVAL);
  struct mrcx_cc_req req = {0};
  if (attr_mask & MRC_CTL_CC_PROFILE_STATE) {
    req.set |= MRCX_SET_STATE;
    req.state = (uint32_t)attr->profile_state;
  }
  if (attr_mask & MRC_CTL_CC_PROFILE_ALGORITHM) {
    req.set |= MRCX_SET_ALGORITHM;
    req.algorithm = !attr->algorithm                 ? MRCX_CC_NONE
                    : !strcmp(attr->algorithm, NSCC_NAME) ? MRCX_CC_NSCC
                                                          : MRCX_CC_UNKNOWN;
  }
  if (attr_mask & MRC_CTL_CC_PROFILE_CONFIG) {
    /* NSCC's parameters (the one algorithm here). */
    const struct mrc_ctl_cc_nscc_cfg *cfg = attr->cc_config;
    if (!cfg)
      return result(EINVAL);
    req.set |= MRCX_SET_CONFIG;
    req.max_cwnd = cfg->max_cwnd;
    req.config = (const uint8_t *)cfg;
    req.config_len = sizeof(*cfg);
  }
  return result(cc_report(c, cc_profile_id, attr, attr_mask, &req));
}

int mrc_ctl_query_cc_profile(struct mrc_context *mrc_ctx,
                             uint64_t cc_profile_id,
                             struct mrc_ctl_cc_profile_attr *attr,
                             int attr_mask) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || !attr || (attr_mask & ~CC_MASK_KNOWN))
    return result(EINVAL);
  return result(cc_report(c, cc_profile_id, attr, attr_mask, NULL));
}

/* ---- EV events ---- */

/* An EV event as a program written for API 1.0.0 lays it out (no state):
 * what it gets unless it called mrc_ctl_query_device_ex. */
struct ev_event_1_0_0 {
  uint64_t profile_id;
  struct mrc_ctl_ev ev;
  uint32_t drop_count;
};

/* A CQ made by mrc_create_cq (mrc.c) and named the context's EV-event CQ
 * in the core; mrc_destroy_cq ends both. EV events do not signal a
 * completion channel here: one is refused. */
struct mrc_cq *mrc_ctl_create_ev_event_cq(struct mrc_context *mrc_ctx,
                                          int cqe, void *cq_context,
                                          struct mrc_comp_channel *channel,
                                          int comp_vector) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || cqe <= 0) {
    errno = EINVAL;
    return NULL;
  }
  if (channel) {
    errno = EOPNOTSUPP;
    return NULL;
  }
  struct mrc_cq *cq = mrc_create_cq(mrc_ctx, cqe, cq_context, NULL,
                                    comp_vector);
  if (!cq)
    return NULL;
  int rc = mrcx_ctl_open_ev_cq(c->rs, (uintptr_t)cq);
  if (rc) {
    mrc_destroy_cq(cq);
    errno = rc;
    return NULL;
  }
  return cq;
}

int mrc_ctl_poll_ev_event(struct mrc_cq *ev_cq, int num_entries,
                          struct mrc_ctl_ev_event *ev_event) {
  if (!ev_cq || num_entries < 0 || (num_entries > 0 && !ev_event))
    return -EINVAL;
  enum { BATCH = 32 };
  struct mrcx_ev_event got[BATCH];
  int done = 0;
  while (done < num_entries) {
    int want = num_entries - done < BATCH ? num_entries - done : BATCH;
    int v101 = 0;
    int n = mrcx_ctl_poll_ev_cq((uintptr_t)ev_cq, want, got, &v101);
    if (n < 0)
      return done ? done : n;
    /* The layout the program was built with (struct ev_event_1_0_0
     * unless it announced 1.0.1); the device is found by the CQ. */
    for (int i = 0; i < n; i++) {
      struct mrcx_ev e = {got[i].ev, CTL_PORT};
      struct mrc_ctl_ev ev;
      ev_out(&e, &ev);
      /* drop_count: the driver's EV-event ring reports no losses. */
      if (v101) {
        struct mrc_ctl_ev_event *o = &ev_event[done + i];
        memset(o, 0, sizeof(*o));
        o->profile_id = got[i].profile_id;
        o->ev = ev;
        o->state = (enum mrc_ctl_ev_state)got[i].state;
      } else {
        struct ev_event_1_0_0 *o = (struct ev_event_1_0_0 *)ev_event + done + i;
        memset(o, 0, sizeof(*o));
        o->profile_id = got[i].profile_id;
        o->ev = ev;
      }
    }
    done += n;
    if (n < want)
      break;
  }
  return done;
}

/* ---- endpoint operations ---- */

/* How long the device waits for an answer before it reports the request
 * timed out (driver::soft ENDPOINT_TIMEOUT); a wait beyond it has nothing
 * left to wait for. */
enum { POLL_NS = 20000, DSCP_MAX = 63 };

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The batch's requests checked: a kind we know, our own source GID, the
 * UDP format, an EV the device carries on its port, distinct ids, and
 * (Port Status Update) the status this device's port really has. */
static int ep_check(struct mrc_ibv_context *c, enum mrc_ctl_ep_op_type op,
                    const struct mrc_ctl_ep_req *req, int num_req,
                    uint32_t *evs) {
  union ibv_gid own;
  if (mrcx_gid(c->rs, own.raw))
    return EINVAL;
  int up = mrcx_port_up(c->rs, 0);
  if (up < 0)
    return -up;
  for (int i = 0; i < num_req; i++) {
    struct mrcx_ev e;
    if (memcmp(req[i].sgid.raw, own.raw, sizeof(own.raw)) ||
        req[i].ev_fmt_mode != MRC_CTL_EV_FMT_MODE_UDP ||
        ev_in(&req[i].req_ev, &e) || e.port != CTL_PORT || e.value == 0 ||
        e.value >= 1u << MRCX_EV_WIDTH)
      return EINVAL;
    for (int k = 0; k < i; k++)
      if (req[k].req_id == req[i].req_id)
        return EINVAL;
    /* The device sends its own port's state: another mask cannot be
     * sent. */
    if (op == MRC_CTL_EP_OP_PORT_STATUS_UPDATE &&
        req[i].op.port_status_update.port_status !=
            (up ? 1u << CTL_PORT : 0u))
      return ENOTSUP;
    evs[i] = e.value;
  }
  return 0;
}

int mrc_ctl_ep_batch_send_wait(struct mrc_context *mrc_ctx, uint8_t req_tc,
                               enum mrc_ctl_ep_op_type op_type,
                               struct mrc_ctl_ep_req *req, int num_req,
                               uint32_t rsp_timeout,
                               struct mrc_ctl_ep_rsp *rsp, int *num_rsp) {
  struct mrc_ibv_context *c = device_of(mrc_ctx);
  if (!c || !req || !rsp || !num_rsp || num_req <= 0 || req_tc > DSCP_MAX ||
      (op_type != MRC_CTL_EP_OP_EV_PROBE &&
       op_type != MRC_CTL_EP_OP_PORT_STATUS_UPDATE))
    return result(EINVAL);
  *num_rsp = 0;
  uint32_t *evs = calloc((size_t)num_req, sizeof(*evs));
  uint32_t *ids = calloc((size_t)num_req, sizeof(*ids));
  char *waiting = calloc((size_t)num_req, 1);
  if (!evs || !ids || !waiting) {
    free(evs);
    free(ids);
    free(waiting);
    return result(ENOMEM);
  }
  int rc = ep_check(c, op_type, req, num_req, evs);
  /* Post as many as the device takes (it holds a bounded number awaiting
   * answers), claim the answers of ours, post more, until every request
   * is answered or timed out by the device, or rsp_timeout passes. */
  uint64_t deadline = now_ns() + rsp_timeout;
  int next = 0, outstanding = 0, answered = 0;
  while (!rc && (next < num_req || outstanding > 0)) {
    while (next < num_req) {
      int st = mrcx_ctl_endpoint_post(c->rs, (uint32_t)op_type,
                                      req[next].dgid.raw, evs[next],
                                      CTL_PORT, &ids[next]);
      if (st == EAGAIN)
        break; /* full: post the rest as answers come */
      if (st) {
        rc = st == EOPNOTSUPP ? ENOTSUP : st;
        break;
      }
      waiting[next] = 1;
      outstanding++;
      next++;
    }
    for (int i = 0; i < next && !rc; i++) {
      if (!waiting[i])
        continue;
      uint32_t rtt = 0, svc = 0, up = 0;
      int st = 0;
      if (mrcx_ctl_endpoint_take(c->rs, ids[i], &st, &rtt, &svc, &up) != 1)
        continue;
      waiting[i] = 0;
      outstanding--;
      if (st)
        continue; /* the device gave up on it: no answer */
      struct mrc_ctl_ep_rsp *r = &rsp[answered++];
      memset(r, 0, sizeof(*r));
      r->req_id = req[i].req_id;
      r->port = CTL_PORT;
      if (op_type == MRC_CTL_EP_OP_EV_PROBE) {
        /* The peer reports the time it held the probe: taken out. */
        r->rtt = rtt > svc ? rtt - svc : 0;
        r->adj_svc_time = 1;
      }
    }
    if (rc || now_ns() >= deadline)
      break;
    struct timespec nap = {0, POLL_NS};
    nanosleep(&nap, NULL);
  }
  *num_rsp = answered;
  free(evs);
  free(ids);
  free(waiting);
  if (rc)
    return result(rc);
  return result(answered == num_req ? 0 : ETIMEDOUT);
}
