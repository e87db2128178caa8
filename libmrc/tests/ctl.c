/*
 * mrc_ctl.h between two soft NICs in one process ($MRC_DEVICE names two
 * devices), through the public API's names only: every function, its
 * good paths and its refusals. EV format, EV and CC profiles and their
 * state machines; A's QP bound to an explicit EV profile sprays from
 * exactly its EVs and B's to a generated one from exactly the generated
 * EVs (the soft NIC binds one UDP source port per EV: /proc/net/udp
 * shows them); the controller denies and allows an EV and sees the event
 * by profile and value, in the layout of the API version the program
 * announced; EV probes and Port Status Updates; a port taken down and up.
 * Built and run by libmrc/tests/ocp_benchmark.rs. Exit status: the
 * number of failed checks (100: setup failed).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrc_ctl.h"

static int failed;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "ctl.c:%d: %s (errno %d)\n", __LINE__, #cond, errno);    \
      failed++;                                                                \
    }                                                                          \
  } while (0)
/* A call that must fail with -1 and errno e. */
#define REFUSED(call, e) CHECK((errno = 0, (call) == -1) && errno == (e))

/* The API version a context asks for. */
#define CONTEXT_VERSION MRC_API_CURRENT_VERSION
/* A QP's EV and CC profiles (0: none) as INIT's MRC attributes. */
static void qp_profiles(struct mrc_qp_attr *m, int *mask, uint64_t ev,
                        uint64_t cc) {
  m->profile.ev_profile_id = ev;
  m->profile.cc_profile_id = cc;
  *mask = (ev ? MRC_QP_EV_PROFILE_ID : 0) | (cc ? MRC_QP_CC_PROFILE_ID : 0);
}

/* MSG: 16 packets of 4 KiB, enough to spray over every EV. */
enum { BUF = 1 << 16, MSG = 1 << 16, WAIT_MS = 5000, NEVS = 4, ROCE_PORT = 4791 };
/* A's explicit EVs: not the device's default block (0xC000+). */
static const uint32_t EVS[NEVS] = {0xD001, 0xD003, 0xD005, 0xD007};
/* B's generated EVs: high byte 0xE1, low byte 1..4 (format 8 + 8). */
static const uint32_t GEN_EVS[NEVS] = {0xE101, 0xE102, 0xE103, 0xE104};
/* Profile ids (the controller picks them). */
enum { FMT = 3, EXP = 1, GEN = 2, AUTO = 5, CC = 7, UNUSED = 9 };
/* Port 1 up, as a port status mask. */
#define PORT1_UP (1u << 1)
/* Response wait of an endpoint batch, ns (beyond the device's own 1 s;
 * the most a uint32_t holds is 4.29 s). */
#define EP_WAIT_NS 4000000000u

struct side {
  struct ibv_context *ctx;
  struct mrc_context *mctx;
  struct ibv_pd *pd;
  struct ibv_mr *mr;
  struct mrc_cq *cq;
  struct mrc_qp *qp;
  uint32_t qpn;
  union ibv_gid gid;
  char *buf;
};

static void sleep_ms(int ms) {
  struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static struct mrc_ctl_ev ev_of(uint32_t value) {
  struct mrc_ctl_ev e = MRC_CTL_EV_UNPOPULATED;
  memcpy(e.val, &value, sizeof(value));
  e.port = 1;
  return e;
}

static uint32_t value_of(const struct mrc_ctl_ev *e) {
  uint32_t v;
  memcpy(&v, e->val, sizeof(v));
  return v;
}

/* The UDP ports bound on the IPv4 address of gid (/proc/net/udp), up to
 * max of them into ports; how many, or -1. */
static int udp_ports(const union ibv_gid *gid, uint32_t *ports, int max) {
  FILE *f = fopen("/proc/net/udp", "r");
  if (!f)
    return -1;
  /* local_address is "%08X:%04X": the address as the kernel's raw u32
   * (network byte order read as a host integer), the port in host order. */
  uint32_t raw;
  memcpy(&raw, &gid->raw[12], sizeof(raw));
  char line[512];
  int n = 0;
  while (fgets(line, sizeof(line), f)) {
    unsigned sl, addr, port;
    if (sscanf(line, " %u: %8X:%4X", &sl, &addr, &port) == 3 && addr == raw &&
        n < max)
      ports[n++] = port;
  }
  fclose(f);
  return n;
}

/* Whether the side's packets left from exactly the n EVs (one socket per
 * EV source port, bound when first used) and its own RoCE port. */
static int sprays_from(const struct side *s, const uint32_t *evs, int n) {
  uint32_t ports[64];
  int np = udp_ports(&s->gid, ports, 64), from_evs = 0, other = 0;
  for (int i = 0; i < np; i++) {
    int in_profile = 0;
    for (int k = 0; k < n; k++)
      in_profile |= ports[i] == evs[k];
    from_evs += in_profile;
    other += !in_profile && ports[i] != ROCE_PORT;
  }
  return np > 0 && from_evs == n && other == 0;
}

static struct mrc_ctl_ep_req probe_req(const struct side *from,
                                       const union ibv_gid *to, uint16_t id,
                                       uint32_t ev) {
  struct mrc_ctl_ep_req r;
  memset(&r, 0, sizeof(r));
  r.req_id = id;
  r.sgid = from->gid;
  r.dgid = *to;
  r.ev_fmt_mode = MRC_CTL_EV_FMT_MODE_UDP;
  r.req_ev = ev_of(ev);
  r.op.port_status_update.port_status = PORT1_UP;
  return r;
}

/* Probes from one thread: THREAD_BATCHES batches of THREAD_BATCH. */
enum { THREAD_BATCHES = 20, THREAD_BATCH = 50,
       THREAD_PROBES = THREAD_BATCHES * THREAD_BATCH };
struct batch_args {
  const struct side *from;
  union ibv_gid peer;
  int answered;
};

static void *probe_batches(void *p) {
  struct batch_args *a = p;
  struct mrc_ctl_ep_req req[THREAD_BATCH];
  struct mrc_ctl_ep_rsp rsp[THREAD_BATCH];
  for (int k = 0; k < THREAD_BATCHES; k++) {
    for (int i = 0; i < THREAD_BATCH; i++)
      req[i] = probe_req(a->from, &a->peer, (uint16_t)i, EVS[i % NEVS]);
    int n = 0;
    if (mrc_ctl_ep_batch_send_wait(a->from->mctx, 0, MRC_CTL_EP_OP_EV_PROBE,
                                   req, THREAD_BATCH, EP_WAIT_NS, rsp,
                                   &n) == 0)
      a->answered += n;
  }
  return NULL;
}

static int open_side(struct ibv_device *dev, struct side *s) {
  memset(s, 0, sizeof(*s));
  s->ctx = ibv_open_device(dev);
  if (!s->ctx)
    return -1;
  struct mrc_context_attr ca;
  memset(&ca, 0, sizeof(ca));
  ca.mrc_api_version_used = CONTEXT_VERSION;
  s->mctx = mrc_create_context(s->ctx, &ca);
  s->pd = ibv_alloc_pd(s->ctx);
  s->buf = calloc(1, BUF);
  if (!s->mctx || !s->pd || !s->buf)
    return -1;
  s->mr = ibv_reg_mr(s->pd, s->buf, BUF,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  s->cq = mrc_create_cq(s->mctx, 64, NULL, NULL, 0);
  struct mrc_qp_init_attr qa;
  memset(&qa, 0, sizeof(qa));
  qa.send_cq = s->cq;
  qa.recv_cq = s->cq;
  qa.pd = s->pd;
  qa.cap.max_send_wr = 16;
  qa.cap.max_send_sge = 1;
  s->qp = s->cq ? mrc_create_qp(s->mctx, &qa) : NULL;
  if (!s->mr || !s->qp || mrc_get_qpn(s->qp, &s->qpn) ||
      ibv_query_gid(s->ctx, 1, 0, &s->gid))
    return -1;
  return 0;
}

static int to_init(struct side *s, uint64_t ev_id, uint64_t cc_id) {
  struct ibv_qp_attr a;
  struct mrc_qp_attr m;
  int mask;
  memset(&a, 0, sizeof(a));
  memset(&m, 0, sizeof(m));
  a.qp_state = IBV_QPS_INIT;
  qp_profiles(&m, &mask, ev_id, cc_id);
  return mrc_modify_qp(s->qp, &a, IBV_QP_STATE, &m, mask);
}

static int connect_to(struct side *s, const struct side *peer, uint64_t ev_id,
                      uint64_t cc_id) {
  struct ibv_qp_attr a;
  int rc = to_init(s, ev_id, cc_id);
  if (rc)
    return rc;
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_4096;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer->gid;
  a.dest_qp_num = peer->qpn;
  if ((rc = mrc_modify_qp(s->qp, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_PATH_MTU,
                          NULL, 0)))
    return rc;
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTS;
  return mrc_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, NULL, 0);
}

static int post_write(struct side *s, const struct side *peer, uint64_t id) {
  struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = MSG, .lkey = s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED};
  wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
  wr.wr.rdma.rkey = peer->mr->rkey;
  struct ibv_send_wr *bad;
  return mrc_post_send(s->qp, &wr, &bad);
}

static int write_and_wait(struct side *s, const struct side *peer, uint64_t id) {
  if (post_write(s, peer, id))
    return -1;
  struct ibv_wc wc;
  for (int i = 0; i < WAIT_MS; i++) {
    int n = mrc_poll_cq(s->cq, 1, &wc);
    if (n == 1)
      return wc.status == IBV_WC_SUCCESS && wc.wr_id == id ? 0 : -2;
    sleep_ms(1);
  }
  return -3;
}

/* EV profile id moved to state (nothing else). */
static int ev_state(struct side *s, uint64_t id, enum mrc_ctl_profile_state st) {
  struct mrc_ctl_ev_profile_attr a;
  memset(&a, 0, sizeof(a));
  a.profile_state = st;
  return mrc_ctl_modify_ev_profile(s->mctx, id, &a, MRC_CTL_EV_PROFILE_STATE);
}

static int fmt_state(struct side *s, uint64_t id, enum mrc_ctl_profile_state st) {
  struct mrc_ctl_ev_fmt_profile_attr a;
  memset(&a, 0, sizeof(a));
  a.profile_state = st;
  return mrc_ctl_modify_ev_fmt_profile(s->mctx, id, &a,
                                       MRC_CTL_EV_FMT_PROFILE_STATE);
}

static int cc_state(struct side *s, uint64_t id, enum mrc_ctl_profile_state st) {
  struct mrc_ctl_cc_profile_attr a;
  memset(&a, 0, sizeof(a));
  a.profile_state = st;
  return mrc_ctl_modify_cc_profile(s->mctx, id, &a, MRC_CTL_CC_PROFILE_STATE);
}

/* One EV operation of one entry on profile id. */
static int ev_op(struct side *s, uint64_t id, enum mrc_ctl_ev_op op,
                 struct mrc_ctl_ev_op_entry *e) {
  struct mrc_ctl_ev_profile_attr a;
  memset(&a, 0, sizeof(a));
  a.ev_op.op = op;
  a.ev_op.entries = e;
  a.ev_op.entry_count = 1;
  return mrc_ctl_modify_ev_profile(s->mctx, id, &a, MRC_CTL_EV_PROFILE_EV_OP);
}

static int set_ev(struct side *s, uint64_t id, uint32_t value,
                  enum mrc_ctl_ev_state st) {
  struct mrc_ctl_ev_op_entry e;
  memset(&e, 0, sizeof(e));
  e.ev = ev_of(value);
  e.state = st;
  return ev_op(s, id, MRC_CTL_EV_OP_MODIFY_EV_STATE, &e);
}

/* A UDP format of fields 8 + 8 on profile FMT, ONLINE. */
static void format_profile(struct side *s) {
  struct mrc_ctl_ev_fmt_field f[2] = {{8}, {8}};
  struct mrc_ctl_ev_fmt_profile_attr a;
  memset(&a, 0, sizeof(a));
  a.profile_state = MRC_CTL_PROFILE_OFFLINE;
  a.ev_fmt_mode = MRC_CTL_EV_FMT_MODE_UDP;
  a.ev_fmt_op.op = MRC_CTL_EV_FMT_OP_MODIFY_FIELDS;
  a.ev_fmt_op.fmt_fields = f;
  a.ev_fmt_op.fmt_field_count = 2;
  int mask = MRC_CTL_EV_FMT_PROFILE_STATE | MRC_CTL_EV_FMT_PROFILE_MODE |
             MRC_CTL_EV_FMT_PROFILE_OP;
  CHECK(mrc_ctl_modify_ev_fmt_profile(s->mctx, FMT, &a, mask) == 0);
  CHECK(fmt_state(s, FMT, MRC_CTL_PROFILE_ONLINE) == 0);
}

/* Events of ev_cq (1.0.1 layout) until `want` of state st (and EV value,
 * if not 0) came, or WAIT_MS; how many came, each event checked to be of
 * profile and port 1. Others may come meanwhile: on a loaded machine an
 * RTO can expire before its ACK is read and mark an EV ASSUMED_BAD, which
 * the event masks here ask for. */
static int wait_events(struct mrc_cq *ev_cq, uint64_t profile,
                       enum mrc_ctl_ev_state st, int want, uint32_t value) {
  struct mrc_ctl_ev_event evs[16];
  int got = 0;
  for (int i = 0; i < WAIT_MS && got < want; i++) {
    int k = mrc_ctl_poll_ev_event(ev_cq, 16, evs);
    for (int j = 0; j < k; j++) {
      CHECK(evs[j].profile_id == profile && evs[j].ev.port == 1 &&
            evs[j].drop_count == 0);
      got += evs[j].state == st && (!value || value_of(&evs[j].ev) == value);
    }
    if (k == 0)
      sleep_ms(1);
  }
  return got;
}

/* The events ev_cq holds: none of them DENIED. */
static int no_denied_events(struct mrc_cq *ev_cq) {
  struct mrc_ctl_ev_event evs[16];
  int k, denied = 0;
  while ((k = mrc_ctl_poll_ev_event(ev_cq, 16, evs)) > 0)
    for (int j = 0; j < k; j++)
      denied += evs[j].state == MRC_CTL_EV_DENIED;
  return k == 0 && denied == 0;
}

static void device_and_ports(struct side *a) {
  uint32_t cur = 0, last = 1, vend = 0, last_vend = 1;
  mrc_ctl_query_version(&cur, &last, &vend, &last_vend);
  CHECK(cur == MRC_CTL_API_VER(1, 0, 1) && cur == MRC_CTL_API_CURRENT_VERSION &&
        last == 0 && vend == MRC_CTL_API_VER(1, 0, 0) && last_vend == 0);
  mrc_ctl_query_version(NULL, NULL, NULL, NULL); /* any may be NULL */

  struct mrc_ctl_device_attr da;
  CHECK(mrc_ctl_query_device(a->ctx, &da) == 0);
  CHECK(da.mrc_ctl_protocol_version == MRC_CTL_PROTOCOL_VERSION_1 &&
        da.ev.ev_max_count_profile == 128 && da.ev.ev_max_width == 16 &&
        da.ev.ev_fmt_mode_mask == MRC_CTL_EV_FMT_MODE_UDP &&
        da.ev.ev_mode_mask == (MRC_CTL_EV_MODE_AUTO | MRC_CTL_EV_MODE_EXP |
                               MRC_CTL_EV_MODE_GEN) &&
        da.ev.ev_count_align == 1 && da.ev.ev_free_count == da.ev.ev_max_count &&
        da.cc.algorithms && !strcmp(da.cc.algorithms[0], "uet-1.0-nscc") &&
        !da.cc.algorithms[1] && da.phy_port_mask == PORT1_UP &&
        da.opt_attr == (MRC_CTL_OPT_CAP_EV_EVENT | MRC_CTL_OPT_CAP_EP_OP_EV_PROBE));
  REFUSED(mrc_ctl_query_device(a->ctx, NULL), EINVAL);
  REFUSED(mrc_ctl_query_device(NULL, &da), EINVAL);
  int supported = 0;
  CHECK(mrc_ctl_query_device_ex(a->ctx, a->mctx, &da, &supported) == 0 &&
        supported == 1 && da.ev.ev_max_profiles == 256);
  REFUSED(mrc_ctl_query_device_ex(a->ctx, a->mctx, &da, NULL), EINVAL);

  struct mrc_ctl_port_attr pa = {MRC_CTL_PORT_ADMIN_DISABLED};
  CHECK(mrc_ctl_query_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0 &&
        pa.port_admin_state == MRC_CTL_PORT_ADMIN_ENABLED);
  REFUSED(mrc_ctl_query_port(a->mctx, 2, &pa, MRC_CTL_PORT_ADMIN_STATE), EINVAL);
  REFUSED(mrc_ctl_query_port(a->mctx, 0, &pa, MRC_CTL_PORT_ADMIN_STATE), EINVAL);
  REFUSED(mrc_ctl_query_port(a->mctx, 1, NULL, MRC_CTL_PORT_ADMIN_STATE), EINVAL);
  REFUSED(mrc_ctl_query_port(a->mctx, 1, &pa, 1 << 4), EINVAL);
  REFUSED(mrc_ctl_query_port(NULL, 1, &pa, MRC_CTL_PORT_ADMIN_STATE), EINVAL);
  pa.port_admin_state = MRC_CTL_PORT_ADMIN_ENABLED;
  CHECK(mrc_ctl_modify_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0);
  REFUSED(mrc_ctl_modify_port(a->mctx, 2, &pa, MRC_CTL_PORT_ADMIN_STATE), EINVAL);
  REFUSED(mrc_ctl_modify_port(NULL, 1, &pa, MRC_CTL_PORT_ADMIN_STATE), EINVAL);
  pa.port_admin_state = (enum mrc_ctl_port_admin_state)7;
  REFUSED(mrc_ctl_modify_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE), EINVAL);
}

static void format_profiles(struct side *a) {
  struct mrc_ctl_ev_fmt_field f[3] = {{8}, {9}, {0}};
  struct mrc_ctl_ev_fmt_profile_attr fa;
  memset(&fa, 0, sizeof(fa));
  int mask = MRC_CTL_EV_FMT_PROFILE_STATE | MRC_CTL_EV_FMT_PROFILE_MODE |
             MRC_CTL_EV_FMT_PROFILE_OP;
  fa.profile_state = MRC_CTL_PROFILE_ONLINE; /* INIT -> ONLINE */
  fa.ev_fmt_mode = MRC_CTL_EV_FMT_MODE_UDP;
  fa.ev_fmt_op.op = MRC_CTL_EV_FMT_OP_MODIFY_FIELDS;
  fa.ev_fmt_op.fmt_fields = f;
  fa.ev_fmt_op.fmt_field_count = 2;
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa, mask), EINVAL);
  fa.profile_state = MRC_CTL_PROFILE_OFFLINE;
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa, mask), E2BIG); /* 17 bits */
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, 0, &fa, mask), EINVAL);
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, 257, &fa, mask), EINVAL);
  REFUSED(mrc_ctl_modify_ev_fmt_profile(NULL, FMT, &fa, mask), EINVAL);
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa,
                                        mask | MRC_CTL_EV_FMT_PROFILE_CUR_STATE),
          EINVAL);
  fa.vendor_cfg[0] = 1; /* no vendor options here */
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa,
                                        mask | MRC_CTL_EV_FMT_VENDOR_CFG),
          EINVAL);
  fa.vendor_cfg[0] = 0;
  fa.ev_fmt_mode = MRC_CTL_EV_FMT_MODE_STEV; /* no flow label here */
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa, mask), EINVAL);
  fa.ev_fmt_mode = MRC_CTL_EV_FMT_MODE_UDP;
  /* OFFLINE with the mode alone; ONLINE only once it has fields. */
  CHECK(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa,
                                      MRC_CTL_EV_FMT_PROFILE_STATE |
                                          MRC_CTL_EV_FMT_PROFILE_MODE) == 0);
  REFUSED(fmt_state(a, FMT, MRC_CTL_PROFILE_ONLINE), EINVAL);
  f[1].width = 8;
  CHECK(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa,
                                      MRC_CTL_EV_FMT_PROFILE_OP |
                                          MRC_CTL_EV_FMT_PROFILE_CUR_STATE) == -1);
  CHECK(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa,
                                      MRC_CTL_EV_FMT_PROFILE_OP) == 0);
  CHECK(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa,
                                      MRC_CTL_EV_FMT_PROFILE_STATE) == 0 &&
        fa.cur_profile_state == MRC_CTL_PROFILE_OFFLINE);
  CHECK(fmt_state(a, FMT, MRC_CTL_PROFILE_ONLINE) == 0);
  /* ONLINE: fields are not modified. */
  REFUSED(mrc_ctl_modify_ev_fmt_profile(a->mctx, FMT, &fa,
                                        MRC_CTL_EV_FMT_PROFILE_OP),
          EINVAL);
  /* Queries: a short array (E2BIG, the count needed), then all. */
  struct mrc_ctl_ev_fmt_field q[3];
  struct mrc_ctl_ev_fmt_profile_attr qa;
  memset(&qa, 0, sizeof(qa));
  qa.ev_fmt_op.op = MRC_CTL_EV_FMT_OP_QUERY_FIELDS;
  qa.ev_fmt_op.fmt_fields = q;
  qa.ev_fmt_op.fmt_field_count = 1;
  int qmask = MRC_CTL_EV_FMT_PROFILE_STATE | MRC_CTL_EV_FMT_PROFILE_CUR_STATE |
              MRC_CTL_EV_FMT_PROFILE_MODE | MRC_CTL_EV_FMT_PROFILE_OP |
              MRC_CTL_EV_FMT_VENDOR_CFG;
  REFUSED(mrc_ctl_query_ev_fmt_profile(a->mctx, FMT, &qa, qmask), E2BIG);
  CHECK(qa.ev_fmt_op.fmt_field_count == 2);
  qa.ev_fmt_op.fmt_field_count = 3;
  CHECK(mrc_ctl_query_ev_fmt_profile(a->mctx, FMT, &qa, qmask) == 0 &&
        qa.cur_profile_state == MRC_CTL_PROFILE_ONLINE &&
        qa.profile_state == MRC_CTL_PROFILE_ONLINE &&
        qa.ev_fmt_mode == MRC_CTL_EV_FMT_MODE_UDP &&
        qa.ev_fmt_op.fmt_field_count == 2 && q[0].width == 8 && q[1].width == 8);
  qa.ev_fmt_op.op = MRC_CTL_EV_FMT_OP_MODIFY_FIELDS;
  REFUSED(mrc_ctl_query_ev_fmt_profile(a->mctx, FMT, &qa, qmask), EINVAL);
  REFUSED(mrc_ctl_query_ev_fmt_profile(NULL, FMT, &qa, qmask), EINVAL);
  /* A profile never configured is INIT. */
  memset(&qa, 0, sizeof(qa));
  qa.cur_profile_state = MRC_CTL_PROFILE_ONLINE;
  CHECK(mrc_ctl_query_ev_fmt_profile(a->mctx, UNUSED, &qa,
                                     MRC_CTL_EV_FMT_PROFILE_CUR_STATE) == 0 &&
        qa.cur_profile_state == MRC_CTL_PROFILE_INIT);
}

/* A's explicit profile EXP (EVS), through its refusals. */
static void explicit_profile(struct side *a) {
  struct mrc_ctl_ev_profile_attr ea;
  memset(&ea, 0, sizeof(ea));
  ea.profile_state = MRC_CTL_PROFILE_OFFLINE;
  ea.ev_mode = MRC_CTL_EV_MODE_EXP;
  ea.ev_fmt_profile_id = FMT;
  ea.ev_count = NEVS;
  ea.ev_min_active = NEVS + 1; /* above the count */
  ea.ev_event_mask = MRC_CTL_EV_GOOD | MRC_CTL_EV_ASSUMED_BAD;
  int mask = MRC_CTL_EV_PROFILE_STATE | MRC_CTL_EV_PROFILE_MODE |
             MRC_CTL_EV_PROFILE_FMT_ID | MRC_CTL_EV_PROFILE_COUNT |
             MRC_CTL_EV_PROFILE_MIN_ACTIVE | MRC_CTL_EV_PROFILE_EVENT_MASK;
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea, mask), EINVAL);
  ea.ev_min_active = 1;
  ea.ev_event_mask = MRC_CTL_EV_DENIED; /* not one an event mask names */
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea, mask), EINVAL);
  ea.ev_event_mask = MRC_CTL_EV_GOOD | MRC_CTL_EV_ASSUMED_BAD;
  ea.ev_count = 129; /* beyond the device's EVs per profile */
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea, mask), EINVAL);
  ea.ev_count = NEVS;
  ea.ev_fmt_profile_id = UNUSED; /* a format never configured */
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea, mask), EINVAL);
  ea.ev_fmt_profile_id = FMT;
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea,
                                    mask & ~MRC_CTL_EV_PROFILE_COUNT),
          EINVAL);
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea,
                                    mask | MRC_CTL_EV_PROFILE_EV_OP |
                                        MRC_CTL_EV_PROFILE_EV_FIELDS_OP),
          EINVAL);
  REFUSED(mrc_ctl_modify_ev_profile(NULL, EXP, &ea, mask), EINVAL);
  CHECK(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea, mask) == 0 &&
        ea.cur_profile_state == MRC_CTL_PROFILE_OFFLINE);
  /* The array starts unpopulated; not ONLINE until every EV is given. */
  struct mrc_ctl_ev_op_entry arr[NEVS + 1];
  struct mrc_ctl_ev_profile_attr qa;
  memset(&qa, 0, sizeof(qa));
  qa.ev_op.op = MRC_CTL_EV_OP_QUERY_EV_ARRAY;
  qa.ev_op.entries = arr;
  qa.ev_op.entry_count = 2;
  REFUSED(mrc_ctl_query_ev_profile(a->mctx, EXP, &qa, MRC_CTL_EV_PROFILE_EV_OP), E2BIG);
  CHECK(qa.ev_op.entry_count == NEVS);
  qa.ev_op.entry_count = NEVS + 1;
  CHECK(mrc_ctl_query_ev_profile(a->mctx, EXP, &qa, MRC_CTL_EV_PROFILE_EV_OP) == 0 &&
        qa.ev_op.entry_count == NEVS && arr[0].ev.port == 0 &&
        value_of(&arr[0].ev) == 0 && arr[0].state == MRC_CTL_EV_UNKNOWN);
  REFUSED(ev_state(a, EXP, MRC_CTL_PROFILE_ONLINE), EINVAL);
  struct mrc_ctl_ev_op_entry e;
  memset(&e, 0, sizeof(e));
  e.ev = MRC_CTL_EV_UNPOPULATED;
  e.ev_new = ev_of(0xD001);
  e.state = MRC_CTL_EV_GOOD;
  REFUSED(ev_op(a, EXP, MRC_CTL_EV_OP_QUERY_EV_ARRAY + 1, &e), EINVAL);
  struct mrc_ctl_ev_op_entry two[2] = {e, e}; /* one value twice */
  struct mrc_ctl_ev_profile_attr ra;
  memset(&ra, 0, sizeof(ra));
  ra.ev_op.op = MRC_CTL_EV_OP_REPLACE_EV;
  ra.ev_op.entries = two;
  ra.ev_op.entry_count = 2;
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ra, MRC_CTL_EV_PROFILE_EV_OP), EINVAL);
  e.ev_new = ev_of(0x10000); /* 17 bits */
  REFUSED(ev_op(a, EXP, MRC_CTL_EV_OP_REPLACE_EV, &e), EINVAL);
  e.ev_new = ev_of(0xD001);
  e.ev_new.port = 2; /* no such port */
  REFUSED(ev_op(a, EXP, MRC_CTL_EV_OP_REPLACE_EV, &e), EINVAL);
  /* Replacing through a query is not a query. */
  REFUSED(mrc_ctl_query_ev_profile(a->mctx, EXP, &ra, MRC_CTL_EV_PROFILE_EV_OP), EINVAL);
  for (int i = 0; i < NEVS; i++) {
    e.ev = MRC_CTL_EV_UNPOPULATED;
    e.ev_new = ev_of(EVS[i]);
    CHECK(ev_op(a, EXP, MRC_CTL_EV_OP_REPLACE_EV, &e) == 0);
  }
  e.ev = ev_of(0xBEEF); /* not in the array */
  e.ev_new = ev_of(0xD009);
  REFUSED(ev_op(a, EXP, MRC_CTL_EV_OP_REPLACE_EV, &e), ENOENT);
  CHECK(ev_state(a, EXP, MRC_CTL_PROFILE_ONLINE) == 0);
  /* ONLINE: replaced no more (no MODIFY_ONLINE), attributes neither. */
  e.ev = ev_of(EVS[0]);
  REFUSED(ev_op(a, EXP, MRC_CTL_EV_OP_REPLACE_EV, &e), EINVAL);
  ea.ev_min_active = 2;
  REFUSED(mrc_ctl_modify_ev_profile(a->mctx, EXP, &ea, MRC_CTL_EV_PROFILE_MIN_ACTIVE),
          EINVAL);
  memset(&qa, 0, sizeof(qa));
  qa.ev_op.op = MRC_CTL_EV_OP_QUERY_EV_ARRAY;
  qa.ev_op.entries = arr;
  qa.ev_op.entry_count = NEVS;
  CHECK(mrc_ctl_query_ev_profile(a->mctx, EXP, &qa,
                                 MRC_CTL_EV_PROFILE_EV_OP | mask |
                                     MRC_CTL_EV_PROFILE_CUR_STATE) == 0 &&
        qa.cur_profile_state == MRC_CTL_PROFILE_ONLINE &&
        qa.ev_mode == MRC_CTL_EV_MODE_EXP && qa.ev_fmt_profile_id == FMT &&
        qa.ev_count == NEVS && qa.ev_min_active == 1 &&
        qa.ev_event_mask == (MRC_CTL_EV_GOOD | MRC_CTL_EV_ASSUMED_BAD) &&
        value_of(&arr[1].ev) == EVS[1] && arr[1].ev.port == 1 &&
        arr[1].state == MRC_CTL_EV_GOOD);
  /* The format is held ONLINE by it. */
  REFUSED(fmt_state(a, FMT, MRC_CTL_PROFILE_OFFLINE), EBUSY);
}

/* A generated profile GEN on s: 0xE1 then 1..4 in the low nibble. */
static void generated_profile(struct side *s) {
  struct mrc_ctl_ev_field f[2] = {
      {.width = 8, .init_val = 0xE1},
      {.width = 8, .init_val = 0, .min_val = 1, .max_val = NEVS, .mask = 0x0F}};
  struct mrc_ctl_ev_profile_attr ga;
  memset(&ga, 0, sizeof(ga));
  ga.profile_state = MRC_CTL_PROFILE_OFFLINE;
  ga.ev_mode = MRC_CTL_EV_MODE_GEN;
  ga.ev_fmt_profile_id = FMT;
  ga.ev_count = NEVS + 1; /* one more than the fields generate */
  ga.ev_min_active = 2;
  ga.ev_event_mask = MRC_CTL_EV_GOOD;
  ga.ev_fields_op.op = MRC_CTL_EV_FIELDS_OP_MODIFY_FIELDS;
  ga.ev_fields_op.fields = f;
  ga.ev_fields_op.field_count = 2;
  int mask = MRC_CTL_EV_PROFILE_STATE | MRC_CTL_EV_PROFILE_MODE |
             MRC_CTL_EV_PROFILE_FMT_ID | MRC_CTL_EV_PROFILE_COUNT |
             MRC_CTL_EV_PROFILE_MIN_ACTIVE | MRC_CTL_EV_PROFILE_EVENT_MASK |
             MRC_CTL_EV_PROFILE_EV_FIELDS_OP;
  REFUSED(mrc_ctl_modify_ev_profile(s->mctx, GEN, &ga, mask), EINVAL);
  ga.ev_count = NEVS;
  f[1].max_val = 16; /* wider than its mask */
  REFUSED(mrc_ctl_modify_ev_profile(s->mctx, GEN, &ga, mask), EINVAL);
  f[1].max_val = NEVS;
  REFUSED(mrc_ctl_modify_ev_profile(s->mctx, GEN, &ga,
                                    mask & ~MRC_CTL_EV_PROFILE_EV_FIELDS_OP),
          EINVAL);
  CHECK(mrc_ctl_modify_ev_profile(s->mctx, GEN, &ga, mask) == 0);
  CHECK(ev_state(s, GEN, MRC_CTL_PROFILE_ONLINE) == 0);
  struct mrc_ctl_ev_op_entry arr[NEVS];
  struct mrc_ctl_ev_profile_attr qa;
  memset(&qa, 0, sizeof(qa));
  qa.ev_op.op = MRC_CTL_EV_OP_QUERY_EV_ARRAY;
  qa.ev_op.entries = arr;
  qa.ev_op.entry_count = NEVS;
  CHECK(mrc_ctl_query_ev_profile(s->mctx, GEN, &qa, MRC_CTL_EV_PROFILE_EV_OP) == 0);
  for (int i = 0; i < NEVS; i++)
    CHECK(value_of(&arr[i].ev) == GEN_EVS[i] && arr[i].ev.port == 1);
  struct mrc_ctl_ev_field q[2];
  memset(&qa, 0, sizeof(qa));
  qa.ev_fields_op.op = MRC_CTL_EV_FIELDS_OP_QUERY_FIELDS;
  qa.ev_fields_op.fields = q;
  qa.ev_fields_op.field_count = 1;
  REFUSED(mrc_ctl_query_ev_profile(s->mctx, GEN, &qa, MRC_CTL_EV_PROFILE_EV_FIELDS_OP),
          E2BIG);
  CHECK(qa.ev_fields_op.field_count == 2);
  qa.ev_fields_op.field_count = 2;
  CHECK(mrc_ctl_query_ev_profile(s->mctx, GEN, &qa, MRC_CTL_EV_PROFILE_EV_FIELDS_OP) == 0 &&
        q[0].init_val == 0xE1 && q[1].mask == 0x0F && q[1].max_val == NEVS);
  qa.ev_fields_op.op = MRC_CTL_EV_FIELDS_OP_MODIFY_FIELDS;
  REFUSED(mrc_ctl_query_ev_profile(s->mctx, GEN, &qa, MRC_CTL_EV_PROFILE_EV_FIELDS_OP),
          EINVAL);
}

static void auto_and_cc_profiles(struct side *a) {
  /* AUTO: the device picks the EVs; a count is optional. */
  struct mrc_ctl_ev_profile_attr aa;
  memset(&aa, 0, sizeof(aa));
  aa.profile_state = MRC_CTL_PROFILE_OFFLINE;
  aa.ev_mode = MRC_CTL_EV_MODE_AUTO;
  aa.ev_min_active = 1;
  aa.ev_event_mask = MRC_CTL_EV_ASSUMED_BAD;
  CHECK(mrc_ctl_modify_ev_profile(a->mctx, AUTO, &aa,
                                  MRC_CTL_EV_PROFILE_STATE | MRC_CTL_EV_PROFILE_MODE) == 0);
  REFUSED(ev_state(a, AUTO, MRC_CTL_PROFILE_ONLINE), EINVAL); /* no floor, no mask */
  aa.profile_state = MRC_CTL_PROFILE_ONLINE;
  CHECK(mrc_ctl_modify_ev_profile(a->mctx, AUTO, &aa,
                                  MRC_CTL_EV_PROFILE_STATE | MRC_CTL_EV_PROFILE_MIN_ACTIVE |
                                      MRC_CTL_EV_PROFILE_EVENT_MASK) == 0);
  memset(&aa, 0, sizeof(aa));
  CHECK(mrc_ctl_query_ev_profile(a->mctx, AUTO, &aa,
                                 MRC_CTL_EV_PROFILE_COUNT | MRC_CTL_EV_PROFILE_MODE) == 0 &&
        aa.ev_count == 128 && aa.ev_mode == MRC_CTL_EV_MODE_AUTO);
  struct mrc_ctl_device_attr da;
  CHECK(mrc_ctl_query_device(a->ctx, &da) == 0 &&
        da.ev.ev_free_count == da.ev.ev_max_count - NEVS - 128);
  CHECK(ev_state(a, AUTO, MRC_CTL_PROFILE_OFFLINE) == 0);
  CHECK(ev_state(a, AUTO, MRC_CTL_PROFILE_INIT) == 0);
  REFUSED(ev_state(a, AUTO, MRC_CTL_PROFILE_ONLINE), EINVAL); /* INIT -> ONLINE */

  /* CC: NSCC with its parameters. */
  struct mrc_ctl_cc_nscc_cfg nscc;
  memset(&nscc, 0, sizeof(nscc));
  nscc.base_rtt = 4000;
  nscc.target_delay = 8000;
  nscc.eta = 0.5f;
  struct mrc_ctl_cc_profile_attr ca;
  memset(&ca, 0, sizeof(ca));
  ca.profile_state = MRC_CTL_PROFILE_OFFLINE;
  ca.algorithm = "dcqcn";
  REFUSED(mrc_ctl_modify_cc_profile(a->mctx, CC, &ca,
                                    MRC_CTL_CC_PROFILE_STATE | MRC_CTL_CC_PROFILE_ALGORITHM),
          EINVAL);
  REFUSED(mrc_ctl_modify_cc_profile(a->mctx, CC, &ca, MRC_CTL_CC_PROFILE_STATE), EINVAL);
  REFUSED(mrc_ctl_modify_cc_profile(NULL, CC, &ca, MRC_CTL_CC_PROFILE_STATE), EINVAL);
  ca.algorithm = "uet-1.0-nscc";
  CHECK(mrc_ctl_modify_cc_profile(a->mctx, CC, &ca,
                                  MRC_CTL_CC_PROFILE_STATE | MRC_CTL_CC_PROFILE_ALGORITHM) == 0);
  REFUSED(cc_state(a, CC, MRC_CTL_PROFILE_ONLINE), EINVAL); /* no parameters */
  ca.cc_config = &nscc; /* max_cwnd 0 */
  REFUSED(mrc_ctl_modify_cc_profile(a->mctx, CC, &ca, MRC_CTL_CC_PROFILE_CONFIG), EINVAL);
  nscc.max_cwnd = 1 << 20;
  ca.profile_state = MRC_CTL_PROFILE_ONLINE;
  CHECK(mrc_ctl_modify_cc_profile(a->mctx, CC, &ca,
                                  MRC_CTL_CC_PROFILE_CONFIG | MRC_CTL_CC_PROFILE_STATE) == 0 &&
        ca.cur_profile_state == MRC_CTL_PROFILE_ONLINE);
  REFUSED(mrc_ctl_modify_cc_profile(a->mctx, CC, &ca, MRC_CTL_CC_PROFILE_CONFIG), EINVAL);
  struct mrc_ctl_cc_profile_attr got;
  memset(&got, 0, sizeof(got));
  CHECK(mrc_ctl_query_cc_profile(a->mctx, CC, &got,
                                 MRC_CTL_CC_PROFILE_STATE | MRC_CTL_CC_PROFILE_ALGORITHM |
                                     MRC_CTL_CC_PROFILE_CONFIG) == 0 &&
        got.cur_profile_state == MRC_CTL_PROFILE_ONLINE && got.algorithm &&
        !strcmp(got.algorithm, "uet-1.0-nscc") && got.cc_config);
  if (got.cc_config) {
    const struct mrc_ctl_cc_nscc_cfg *g = got.cc_config;
    CHECK(g->max_cwnd == 1u << 20 && g->base_rtt == 4000 && g->eta == 0.5f);
  }
  REFUSED(mrc_ctl_query_cc_profile(a->mctx, 0, &got, MRC_CTL_CC_PROFILE_STATE), EINVAL);
  REFUSED(mrc_ctl_query_cc_profile(NULL, CC, &got, MRC_CTL_CC_PROFILE_STATE), EINVAL);
}

static void endpoint_ops(struct side *a, struct side *b) {
  struct mrc_ctl_ep_req req[3];
  struct mrc_ctl_ep_rsp rsp[3];
  int n = -1;
  req[0] = probe_req(a, &b->gid, 11, 0xD001);
  req[1] = probe_req(a, &b->gid, 12, 0xD005);
  CHECK(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, req, 2,
                                   EP_WAIT_NS, rsp, &n) == 0 && n == 2);
  /* Each answered once, RTT with the responder's time taken out (a soft
   * NIC answers in the step the request arrived in: its time is 0). */
  int seen11 = 0, seen12 = 0;
  for (int i = 0; i < n && i < 2; i++) {
    seen11 += rsp[i].req_id == 11;
    seen12 += rsp[i].req_id == 12;
    CHECK(rsp[i].port == 1 && rsp[i].rtt > 0 && rsp[i].adj_svc_time == 1);
  }
  CHECK(seen11 == 1 && seen12 == 1);
  req[2] = probe_req(a, &b->gid, 13, 0xD003);
  CHECK(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_PORT_STATUS_UPDATE,
                                   &req[2], 1, EP_WAIT_NS, rsp, &n) == 0 &&
        n == 1 && rsp[0].req_id == 13);
  /* Refusals: a mask other than the port's own, another source GID, an
   * id twice, an unknown kind, another format, port, traffic class. */
  req[2].op.port_status_update.port_status = 0;
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_PORT_STATUS_UPDATE,
                                     &req[2], 1, EP_WAIT_NS, rsp, &n),
          ENOTSUP);
  struct mrc_ctl_ep_req bad = probe_req(a, &b->gid, 1, 0xD001);
  bad.sgid = b->gid;
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, &bad, 1,
                                     EP_WAIT_NS, rsp, &n),
          EINVAL);
  struct mrc_ctl_ep_req same[2] = {probe_req(a, &b->gid, 5, 0xD001),
                                   probe_req(a, &b->gid, 5, 0xD003)};
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, same, 2,
                                     EP_WAIT_NS, rsp, &n),
          EINVAL);
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, (enum mrc_ctl_ep_op_type)7, req, 1,
                                     EP_WAIT_NS, rsp, &n),
          EINVAL);
  bad = probe_req(a, &b->gid, 1, 0xD001);
  bad.ev_fmt_mode = MRC_CTL_EV_FMT_MODE_STEV;
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, &bad, 1,
                                     EP_WAIT_NS, rsp, &n),
          EINVAL);
  bad = probe_req(a, &b->gid, 1, 0xD001);
  bad.req_ev.port = 2;
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, &bad, 1,
                                     EP_WAIT_NS, rsp, &n),
          EINVAL);
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 64, MRC_CTL_EP_OP_EV_PROBE, req, 1,
                                     EP_WAIT_NS, rsp, &n),
          EINVAL);
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, req, 1,
                                     EP_WAIT_NS, rsp, NULL),
          EINVAL);
  REFUSED(mrc_ctl_ep_batch_send_wait(NULL, 0, MRC_CTL_EP_OP_EV_PROBE, req, 1,
                                     EP_WAIT_NS, rsp, &n),
          EINVAL);
  /* A batch far larger than the requests the device holds awaiting
   * answers (256) and the results it queues (1,024): every one answered. */
  {
    enum { BIG = 3000 };
    struct mrc_ctl_ep_req *many = calloc(BIG, sizeof(*many));
    struct mrc_ctl_ep_rsp *got = calloc(BIG, sizeof(*got));
    for (int i = 0; i < BIG; i++)
      many[i] = probe_req(a, &b->gid, (uint16_t)i, EVS[i % NEVS]);
    n = 0;
    CHECK(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, many, BIG,
                                     EP_WAIT_NS, got, &n) == 0 && n == BIG);
    free(many);
    free(got);
  }
  /* Two threads with batches in flight on one context: each gets its own
   * answers. */
  {
    pthread_t t[2];
    struct batch_args args[2] = {{a, b->gid, 0}, {a, b->gid, 0}};
    for (int i = 0; i < 2; i++)
      pthread_create(&t[i], NULL, probe_batches, &args[i]);
    for (int i = 0; i < 2; i++)
      pthread_join(t[i], NULL);
    CHECK(args[0].answered == THREAD_PROBES && args[1].answered == THREAD_PROBES);
  }
  /* A probe to an address where no NIC listens: no answer, ETIMEDOUT. */
  union ibv_gid nobody = b->gid;
  nobody.raw[15] = 99; /* 127.0.21.99 */
  bad = probe_req(a, &nobody, 1, 0xD001);
  n = -1;
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_EV_PROBE, &bad, 1,
                                     EP_WAIT_NS, rsp, &n),
          ETIMEDOUT);
  CHECK(n == 0);
}

/* A's port goes down (docs/host.md, "Ports") with a WRITE posted: A's
 * EVs are DENIED (no event: the mask names GOOD and ASSUMED_BAD), the
 * port sends and takes nothing (B's Port Status Update to A gets no
 * answer) and the WRITE waits; up again, the EVs are GOOD (an event
 * each), B gets its answer and the WRITE completes, once. */
static void port_cycle(struct side *a, struct side *b, struct mrc_cq *ev_cq) {
  struct mrc_ctl_ev_event evs[16];
  while (mrc_ctl_poll_ev_event(ev_cq, 16, evs) > 0)
    ;
  struct mrc_ctl_port_attr pa = {MRC_CTL_PORT_ADMIN_DISABLED};
  CHECK(mrc_ctl_modify_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0);
  CHECK(mrc_ctl_modify_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0);
  pa.port_admin_state = MRC_CTL_PORT_ADMIN_ENABLED;
  CHECK(mrc_ctl_query_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0 &&
        pa.port_admin_state == MRC_CTL_PORT_ADMIN_DISABLED);
  struct ibv_port_attr ipa;
  CHECK(ibv_query_port(a->ctx, 1, &ipa) == 0 && ipa.state == IBV_PORT_DOWN);
  CHECK(mrc_ctl_query_port(b->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0 &&
        pa.port_admin_state == MRC_CTL_PORT_ADMIN_ENABLED);
  memset(b->buf, 0, MSG);
  CHECK(post_write(a, b, 40) == 0);
  struct mrc_ctl_ep_req st = probe_req(b, &a->gid, 77, 0xE101);
  struct mrc_ctl_ep_rsp rsp;
  int n = -1;
  REFUSED(mrc_ctl_ep_batch_send_wait(b->mctx, 0, MRC_CTL_EP_OP_PORT_STATUS_UPDATE,
                                     &st, 1, EP_WAIT_NS, &rsp, &n),
          ETIMEDOUT);
  CHECK(n == 0);
  /* With A's port down, an update naming it up is not what A has. */
  struct mrc_ctl_ep_req own = probe_req(a, &b->gid, 78, 0xD001);
  REFUSED(mrc_ctl_ep_batch_send_wait(a->mctx, 0, MRC_CTL_EP_OP_PORT_STATUS_UPDATE,
                                     &own, 1, EP_WAIT_NS, &rsp, &n),
          ENOTSUP);
  CHECK(no_denied_events(ev_cq)); /* DENIED: not asked for */
  struct ibv_wc wc;
  CHECK(mrc_poll_cq(a->cq, 1, &wc) == 0); /* held, a second later */
  CHECK(b->buf[MSG - 1] == 0);
  pa.port_admin_state = MRC_CTL_PORT_ADMIN_ENABLED;
  CHECK(mrc_ctl_modify_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0);
  CHECK(mrc_ctl_query_port(a->mctx, 1, &pa, MRC_CTL_PORT_ADMIN_STATE) == 0 &&
        pa.port_admin_state == MRC_CTL_PORT_ADMIN_ENABLED);
  CHECK(wait_events(ev_cq, EXP, MRC_CTL_EV_GOOD, NEVS, 0) == NEVS);
  n = 0;
  for (int i = 0; i < WAIT_MS && n == 0; i++) {
    n = mrc_poll_cq(a->cq, 1, &wc);
    if (n == 0)
      sleep_ms(1);
  }
  CHECK(n == 1 && wc.wr_id == 40 && wc.status == IBV_WC_SUCCESS);
  CHECK(memcmp(a->buf, b->buf, MSG) == 0);
  sleep_ms(50);
  CHECK(mrc_poll_cq(a->cq, 1, &wc) == 0); /* once */
  CHECK(mrc_ctl_ep_batch_send_wait(b->mctx, 0, MRC_CTL_EP_OP_PORT_STATUS_UPDATE,
                                   &st, 1, EP_WAIT_NS, &rsp, &n) == 0 &&
        n == 1 && rsp.req_id == 77);
}

int main(void) {
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  if (!list || n != 2) {
    fprintf(stderr, "ctl.c: MRC_DEVICE must name two devices\n");
    return 100;
  }
  struct side a, b;
  if (open_side(list[0], &a) || open_side(list[1], &b)) {
    fprintf(stderr, "ctl.c: setup failed (errno %d)\n", errno);
    return 100;
  }

  device_and_ports(&a); /* announces API 1.0.1 on A's device */
  format_profiles(&a);
  explicit_profile(&a);
  auto_and_cc_profiles(&a);
  format_profile(&b);
  generated_profile(&b);

  /* The EV-event CQs: A's in the 1.0.1 layout, B's (whose program never
   * called mrc_ctl_query_device_ex) in 1.0.0's. */
  int dummy;
  errno = 0;
  CHECK(!mrc_ctl_create_ev_event_cq(a.mctx, 64, NULL,
                                    (struct mrc_comp_channel *)&dummy, 0) &&
        errno == EOPNOTSUPP);
  errno = 0;
  CHECK(!mrc_ctl_create_ev_event_cq(a.mctx, 0, NULL, NULL, 0) && errno == EINVAL);
  errno = 0;
  CHECK(!mrc_ctl_create_ev_event_cq(NULL, 64, NULL, NULL, 0) && errno == EINVAL);
  struct mrc_cq *ev_cq = mrc_ctl_create_ev_event_cq(a.mctx, 64, NULL, NULL, 0);
  CHECK(ev_cq != NULL);
  errno = 0;
  CHECK(!mrc_ctl_create_ev_event_cq(a.mctx, 64, NULL, NULL, 0) && errno == EBUSY);
  struct mrc_cq *ev_cq_b = mrc_ctl_create_ev_event_cq(b.mctx, 64, NULL, NULL, 0);
  CHECK(ev_cq_b != NULL);
  struct mrc_ctl_ev_event evs[8];
  CHECK(mrc_ctl_poll_ev_event(a.cq, 8, evs) == -EINVAL); /* not an EV CQ */
  CHECK(mrc_ctl_poll_ev_event(ev_cq, -1, evs) == -EINVAL);
  CHECK(mrc_ctl_poll_ev_event(ev_cq, 8, NULL) == -EINVAL);
  CHECK(mrc_ctl_poll_ev_event(NULL, 8, evs) == -EINVAL);
  CHECK(mrc_ctl_poll_ev_event(ev_cq, 8, evs) == 0);

  /* A QP binds ONLINE profiles only: one never configured, one OFFLINE. */
  CHECK(to_init(&a, UNUSED, 0) != 0);
  CHECK(ev_state(&a, EXP, MRC_CTL_PROFILE_OFFLINE) == 0);
  CHECK(to_init(&a, EXP, 0) != 0);
  CHECK(ev_state(&a, EXP, MRC_CTL_PROFILE_ONLINE) == 0);
  /* A on its explicit profile and NSCC, B on its generated one, whose
   * last EV the controller DENIED before B's QP took the profile: data
   * flows from exactly the profiles' EVs, B's DENIED one left out. */
  CHECK(set_ev(&b, GEN, GEN_EVS[NEVS - 1], MRC_CTL_EV_DENIED) == 0);
  CHECK(connect_to(&a, &b, EXP, CC) == 0);
  CHECK(connect_to(&b, &a, GEN, 0) == 0);
  for (int i = 0; i < MSG; i++)
    a.buf[i] = (char)(i * 13 + 5);
  CHECK(write_and_wait(&a, &b, 1) == 0);
  CHECK(memcmp(a.buf, b.buf, MSG) == 0);
  CHECK(write_and_wait(&b, &a, 2) == 0);
  CHECK(sprays_from(&a, EVS, NEVS));
  CHECK(sprays_from(&b, GEN_EVS, NEVS - 1));
  /* In use: neither profile leaves ONLINE. */
  REFUSED(ev_state(&a, EXP, MRC_CTL_PROFILE_OFFLINE), EBUSY);
  REFUSED(cc_state(&a, CC, MRC_CTL_PROFILE_OFFLINE), EBUSY);
  REFUSED(ev_state(&b, GEN, MRC_CTL_PROFILE_OFFLINE), EBUSY);

  /* The controller denies an EV: recorded (QUERY_EV_STATE), no event
   * (DENIED is not in the mask), data still flows on the rest; allowed
   * again, the GOOD event names the profile and the EV. */
  REFUSED(set_ev(&a, EXP, 0xD003, MRC_CTL_EV_ASSUMED_BAD), EINVAL);
  REFUSED(set_ev(&a, EXP, 0xBEEF, MRC_CTL_EV_DENIED), ENOENT);
  CHECK(set_ev(&a, EXP, 0xD003, MRC_CTL_EV_DENIED) == 0);
  struct mrc_ctl_ev_op_entry q;
  memset(&q, 0, sizeof(q));
  q.ev = ev_of(0xD003);
  struct mrc_ctl_ev_profile_attr qa;
  memset(&qa, 0, sizeof(qa));
  qa.ev_op.op = MRC_CTL_EV_OP_QUERY_EV_STATE;
  qa.ev_op.entries = &q;
  qa.ev_op.entry_count = 1;
  CHECK(mrc_ctl_query_ev_profile(a.mctx, EXP, &qa, MRC_CTL_EV_PROFILE_EV_OP) == 0 &&
        q.state == MRC_CTL_EV_DENIED);
  q.ev = ev_of(0xBEEF);
  REFUSED(mrc_ctl_query_ev_profile(a.mctx, EXP, &qa, MRC_CTL_EV_PROFILE_EV_OP), ENOENT);
  CHECK(write_and_wait(&a, &b, 3) == 0);
  CHECK(no_denied_events(ev_cq));
  CHECK(set_ev(&a, EXP, 0xD003, MRC_CTL_EV_GOOD) == 0);
  CHECK(wait_events(ev_cq, EXP, MRC_CTL_EV_GOOD, 1, 0xD003) == 1);
  /* B's events in the 1.0.0 layout (no state): entries of that size,
   * nothing written past the last one returned. */
  {
    struct ev_event_1_0_0 {
      uint64_t profile_id;
      struct mrc_ctl_ev ev;
      uint32_t drop_count;
    } old[4];
    enum { SENTINEL = 0xA5 };
    CHECK(set_ev(&b, GEN, GEN_EVS[NEVS - 1], MRC_CTL_EV_GOOD) == 0);
    int found = 0;
    for (int i = 0; i < WAIT_MS && !found; i++) {
      memset(old, SENTINEL, sizeof(old));
      int got = mrc_ctl_poll_ev_event(ev_cq_b, 3, (struct mrc_ctl_ev_event *)old);
      CHECK(got >= 0 && got <= 3);
      if (got <= 0) {
        sleep_ms(1);
        continue;
      }
      CHECK(((unsigned char *)&old[got])[0] == SENTINEL);
      for (int j = 0; j < got; j++) {
        CHECK(old[j].profile_id == GEN && old[j].ev.port == 1 &&
              old[j].drop_count == 0);
        found += value_of(&old[j].ev) == GEN_EVS[NEVS - 1];
      }
    }
    CHECK(found == 1);
  }

  endpoint_ops(&a, &b);
  port_cycle(&a, &b, ev_cq);

  /* Everything goes: the QPs, then the profiles, back to INIT. */
  CHECK(ibv_close_device(a.ctx) == EBUSY);
  CHECK(mrc_destroy_cq(ev_cq) == 0);
  /* Destroyed, the context may have a new one. */
  ev_cq = mrc_ctl_create_ev_event_cq(a.mctx, 8, NULL, NULL, 0);
  CHECK(ev_cq != NULL && mrc_destroy_cq(ev_cq) == 0);
  CHECK(mrc_destroy_cq(ev_cq_b) == 0);
  struct side *sides[] = {&a, &b};
  for (int i = 0; i < 2; i++) {
    struct side *s = sides[i];
    CHECK(mrc_destroy_qp(s->qp) == 0);
    CHECK(mrc_destroy_cq(s->cq) == 0);
  }
  CHECK(ev_state(&a, EXP, MRC_CTL_PROFILE_OFFLINE) == 0);
  REFUSED(ev_state(&a, EXP, MRC_CTL_PROFILE_ONLINE + 1), EINVAL);
  REFUSED(fmt_state(&a, FMT, MRC_CTL_PROFILE_INIT), EINVAL); /* ONLINE -> INIT */
  CHECK(fmt_state(&a, FMT, MRC_CTL_PROFILE_OFFLINE) == 0);
  REFUSED(fmt_state(&a, FMT, MRC_CTL_PROFILE_INIT), EBUSY); /* EXP names it */
  CHECK(ev_state(&a, EXP, MRC_CTL_PROFILE_INIT) == 0);
  CHECK(fmt_state(&a, FMT, MRC_CTL_PROFILE_INIT) == 0);
  CHECK(cc_state(&a, CC, MRC_CTL_PROFILE_OFFLINE) == 0);
  CHECK(cc_state(&a, CC, MRC_CTL_PROFILE_INIT) == 0);
  CHECK(ev_state(&b, GEN, MRC_CTL_PROFILE_OFFLINE) == 0);
  CHECK(ev_state(&b, GEN, MRC_CTL_PROFILE_INIT) == 0);
  memset(&qa, 0, sizeof(qa));
  qa.cur_profile_state = MRC_CTL_PROFILE_ONLINE;
  CHECK(mrc_ctl_query_ev_profile(a.mctx, EXP, &qa, MRC_CTL_EV_PROFILE_CUR_STATE) == 0 &&
        qa.cur_profile_state == MRC_CTL_PROFILE_INIT);
  for (int i = 0; i < 2; i++) {
    struct side *s = sides[i];
    CHECK(ibv_dereg_mr(s->mr) == 0);
    CHECK(ibv_dealloc_pd(s->pd) == 0);
    CHECK(mrc_destroy_context(s->mctx) == 0);
    CHECK(ibv_close_device(s->ctx) == 0);
    free(s->buf);
  }
  ibv_free_device_list(list);
  if (failed == 0)
    printf("ctl: all checks passed\n");
  return failed;
}
