/*
 * mrc_ctl.h between two soft NICs in one process ($MRC_DEVICE names two
 * devices): profiles and their life cycle, a QP bound to an EXPLICIT EV
 * profile spraying from exactly its EVs (the soft NIC binds one UDP
 * source port per EV: /proc/net/udp shows them), a controller denying one
 * EV and seeing the event on the EV-event CQ, and the refusals. Built and
 * run by libmrc/tests/ocp_benchmark.rs. Exit status: the number of failed
 * checks (100: setup failed).
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
      fprintf(stderr, "ctl.c:%d: %s\n", __LINE__, #cond);                      \
      failed++;                                                                \
    }                                                                          \
  } while (0)

/* MSG: 16 packets of 4 KiB, enough to spray over every EV. */
enum { BUF = 1 << 16, MSG = 1 << 16, WAIT_MS = 5000, NEVS = 4, ROCE_PORT = 4791 };
/* The EXPLICIT profile's EVs: not the device's default block (0xC000+). */
static const uint32_t EVS[NEVS] = {0xD001, 0xD003, 0xD005, 0xD007};

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

/* The UDP ports bound on IPv4 address ip_host (/proc/net/udp), up to
 * max of them into ports; how many, or -1. */
static int udp_ports(uint32_t ip_host, uint32_t *ports, int max) {
  FILE *f = fopen("/proc/net/udp", "r");
  if (!f)
    return -1;
  /* local_address is "%08X:%04X": the address as the kernel's raw u32
   * (network byte order read as a host integer), the port in host order. */
  uint32_t be = htonl(ip_host), raw;
  memcpy(&raw, &be, sizeof(raw));
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

/* Probes from one thread: THREAD_BATCHES batches of THREAD_BATCH. */
enum { THREAD_BATCHES = 20, THREAD_BATCH = 50,
       THREAD_PROBES = THREAD_BATCHES * THREAD_BATCH };
struct batch_args {
  struct ibv_context *ctx;
  union ibv_gid peer;
  int answered;
};

static void *probe_batches(void *p) {
  struct batch_args *a = p;
  struct mrc_ctl_endpoint_op ops[THREAD_BATCH];
  for (int k = 0; k < THREAD_BATCHES; k++) {
    memset(ops, 0, sizeof(ops));
    for (int i = 0; i < THREAD_BATCH; i++) {
      ops[i].type = MRC_CTL_ENDPOINT_EV_PROBE;
      ops[i].peer = a->peer;
      ops[i].ev = EVS[i % NEVS];
    }
    if (mrc_ctl_post_endpoint_ops(a->ctx, ops, THREAD_BATCH) != 0)
      continue;
    for (int i = 0; i < THREAD_BATCH; i++)
      a->answered += ops[i].status == 0;
  }
  return NULL;
}

static int open_side(struct ibv_device *dev, struct side *s) {
  memset(s, 0, sizeof(*s));
  s->ctx = ibv_open_device(dev);
  if (!s->ctx)
    return -1;
  struct mrc_context_attr ca = {.mrc_api_version_used = MRC_PROTOCOL_VERSION_1};
  s->mctx = mrc_create_context(s->ctx, &ca);
  s->pd = ibv_alloc_pd(s->ctx);
  s->buf = calloc(1, BUF);
  if (!s->mctx || !s->pd || !s->buf)
    return -1;
  s->mr = ibv_reg_mr(s->pd, s->buf, BUF,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  s->cq = mrc_create_cq(s->mctx, 64, NULL, NULL, 0);
  struct mrc_qp_init_attr qa = {.send_cq = s->cq, .recv_cq = s->cq, .pd = s->pd};
  qa.cap.max_send_wr = 16;
  qa.cap.max_send_sge = 1;
  s->qp = s->cq ? mrc_create_qp(s->mctx, &qa) : NULL;
  if (!s->mr || !s->qp || mrc_get_qpn(s->qp, &s->qpn) ||
      ibv_query_gid(s->ctx, 1, 0, &s->gid))
    return -1;
  return 0;
}

static int connect_to(struct side *s, const struct side *peer, uint32_t ev_id,
                      uint32_t cc_id) {
  struct ibv_qp_attr a = {0};
  struct mrc_qp_attr m = {0};
  a.qp_state = IBV_QPS_INIT;
  m.profile.ev_profile_id = ev_id;
  m.profile.cc_profile_id = cc_id;
  int mask = (ev_id ? MRC_QP_EV_PROFILE_ID : 0) | (cc_id ? MRC_QP_CC_PROFILE_ID : 0);
  int rc = mrc_modify_qp(s->qp, &a, IBV_QP_STATE, &m, mask);
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

static int write_and_wait(struct side *s, const struct side *peer, uint64_t id) {
  struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = MSG, .lkey = s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_RDMA_WRITE,
                           .send_flags = IBV_SEND_SIGNALED};
  wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
  wr.wr.rdma.rkey = peer->mr->rkey;
  struct ibv_send_wr *bad;
  if (mrc_post_send(s->qp, &wr, &bad))
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

  /* Device and port. */
  struct mrc_ctl_device_attr da;
  CHECK(mrc_ctl_query_device(a.ctx, &da) == 0 && da.max_evs_per_profile == 128 &&
        da.ev_bits == 16);
  struct mrc_ctl_port_attr pa;
  CHECK(mrc_ctl_query_port(a.ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE &&
        pa.admin_up == 1);
  CHECK(mrc_ctl_query_port(a.ctx, 2, &pa) == EINVAL);
  CHECK(mrc_ctl_query_port(a.ctx, 0, &pa) == EINVAL);
  CHECK(mrc_ctl_query_port(a.ctx, 1, NULL) == EINVAL);
  CHECK(mrc_ctl_set_port_admin_state(a.ctx, 2, 0) == EINVAL);
  CHECK(mrc_ctl_set_port_admin_state(a.ctx, 0, 1) == EINVAL);
  CHECK(mrc_ctl_set_port_admin_state(NULL, 1, 0) == EINVAL);
  CHECK(mrc_ctl_set_port_admin_state(a.ctx, 1, 1) == 0); /* up already */

  /* EV formats. */
  struct mrc_ctl_ev_format_attr fa = {.num_fields = 3, .field_bits = {8, 8, 16}};
  uint32_t fmt = 0;
  CHECK(mrc_ctl_create_ev_format_profile(a.ctx, &fa, &fmt) == 0 && fmt != 0);
  fa.field_bits[2] = 17; /* 33 bits */
  uint32_t bad_fmt;
  CHECK(mrc_ctl_create_ev_format_profile(a.ctx, &fa, &bad_fmt) == EINVAL);

  /* EV profiles: checked at creation. */
  uint32_t dup[2] = {0xD001, 0xD001};
  struct mrc_ctl_ev_profile_attr ea = {
      .type = MRC_CTL_EV_PROFILE_EXPLICIT, .ev_format_id = fmt, .ev_count = 2,
      .ev_min_active = 1, .evs = dup,
      .event_mask = MRC_CTL_EV_EVENT(MRC_CTL_EV_DENIED) |
                    MRC_CTL_EV_EVENT(MRC_CTL_EV_GOOD)};
  uint32_t evp = 0;
  CHECK(mrc_ctl_create_ev_profile(a.ctx, &ea, &evp) == EINVAL); /* duplicates */
  uint32_t big[1] = {0x10000};
  ea.evs = big;
  ea.ev_count = 1;
  CHECK(mrc_ctl_create_ev_profile(a.ctx, &ea, &evp) == EINVAL); /* 17 bits */
  /* A GENERATED profile of 2^32 - 1 EVs: refused before it is made. */
  struct mrc_ctl_ev_profile_attr huge = {.type = MRC_CTL_EV_PROFILE_GENERATED,
                                         .ev_count = 0xFFFFFFFFu,
                                         .ev_base = 0xE000};
  CHECK(mrc_ctl_create_ev_profile(a.ctx, &huge, &evp) == EINVAL);
  ea.evs = EVS;
  ea.ev_count = NEVS;
  ea.ev_min_active = NEVS + 1;
  CHECK(mrc_ctl_create_ev_profile(a.ctx, &ea, &evp) == EINVAL);
  ea.ev_min_active = 1;
  CHECK(mrc_ctl_create_ev_profile(a.ctx, &ea, &evp) == 0 && evp != 0);
  CHECK(mrc_ctl_destroy_ev_format_profile(a.ctx, fmt) == EBUSY);

  /* CC profile. */
  struct mrc_ctl_cc_profile_attr cca = {.algorithm = "dcqcn", .max_cwnd = 1 << 20};
  uint32_t ccp = 0;
  CHECK(mrc_ctl_create_cc_profile(a.ctx, &cca, &ccp) == EINVAL);
  strcpy(cca.algorithm, MRC_CTL_CC_NSCC);
  cca.base_rtt = 4000;
  cca.target_delay = 8000;
  CHECK(mrc_ctl_create_cc_profile(a.ctx, &cca, &ccp) == 0 && ccp != 0);

  /* A QP may not bind profiles that are not ONLINE. */
  struct ibv_qp_attr qa = {.qp_state = IBV_QPS_INIT};
  struct mrc_qp_attr m = {.profile.ev_profile_id = evp};
  CHECK(mrc_modify_qp(a.qp, &qa, IBV_QP_STATE, &m, MRC_QP_EV_PROFILE_ID) == EINVAL);
  CHECK(mrc_ctl_modify_ev_profile_state(a.ctx, evp, MRC_CTL_PROFILE_ONLINE) == EINVAL);
  CHECK(mrc_ctl_modify_ev_profile_state(a.ctx, evp, MRC_CTL_PROFILE_OFFLINE) == 0);
  CHECK(mrc_ctl_modify_ev_profile_state(a.ctx, evp, MRC_CTL_PROFILE_ONLINE) == 0);
  CHECK(mrc_ctl_modify_cc_profile_state(a.ctx, ccp, MRC_CTL_PROFILE_OFFLINE) == 0);
  CHECK(mrc_ctl_modify_cc_profile_state(a.ctx, ccp, MRC_CTL_PROFILE_ONLINE) == 0);
  struct mrc_ctl_ev_profile_attr got;
  enum mrc_ctl_profile_state st;
  uint32_t vals[8], nvals = 0;
  CHECK(mrc_ctl_query_ev_profile(a.ctx, evp, &got, &st, vals, 8, &nvals) == 0 &&
        st == MRC_CTL_PROFILE_ONLINE && got.ev_count == NEVS && nvals == NEVS &&
        memcmp(vals, EVS, sizeof(EVS)) == 0 && got.ev_format_id == fmt);
  struct mrc_ctl_cc_profile_attr ccgot;
  CHECK(mrc_ctl_query_cc_profile(a.ctx, ccp, &ccgot, &st) == 0 &&
        ccgot.max_cwnd == 1u << 20 && ccgot.base_rtt == 4000 &&
        !strcmp(ccgot.algorithm, MRC_CTL_CC_NSCC) && st == MRC_CTL_PROFILE_ONLINE);

  /* The EV-event CQ, before anything moves. */
  struct mrc_ctl_ev_cq *evcq = mrc_ctl_create_ev_cq(a.ctx, 64);
  CHECK(evcq != NULL);
  errno = 0;
  CHECK(mrc_ctl_create_ev_cq(a.ctx, 64) == NULL && errno == EBUSY);

  /* A bound to both profiles, B to the defaults; data flows. */
  CHECK(connect_to(&a, &b, evp, ccp) == 0);
  CHECK(connect_to(&b, &a, 0, 0) == 0);
  struct ibv_qp_attr qout;
  struct mrc_qp_attr mout;
  CHECK(mrc_query_qp(a.qp, &qout, IBV_QP_STATE, &mout,
                     MRC_QP_EV_PROFILE_ID | MRC_QP_CC_PROFILE_ID, NULL) == 0 &&
        qout.qp_state == IBV_QPS_RTS && mout.profile.ev_profile_id == evp &&
        mout.profile.cc_profile_id == ccp);
  for (int i = 0; i < MSG; i++)
    a.buf[i] = (char)(i * 13 + 5);
  CHECK(write_and_wait(&a, &b, 1) == 0);
  CHECK(memcmp(a.buf, b.buf, MSG) == 0);
  /* A's packets left from its profile's EVs (one socket per EV source
   * port, bound when first used) and from no other port but its own. */
  uint32_t a_ip;
  memcpy(&a_ip, &a.gid.raw[12], 4);
  a_ip = ntohl(a_ip);
  uint32_t ports[64];
  int np = udp_ports(a_ip, ports, 64), from_evs = 0, other = 0;
  for (int i = 0; i < np; i++) {
    int in_profile = 0;
    for (int k = 0; k < NEVS; k++)
      in_profile |= ports[i] == EVS[k];
    from_evs += in_profile;
    other += !in_profile && ports[i] != ROCE_PORT;
  }
  CHECK(np > 0 && from_evs == NEVS && other == 0);
  /* In use: neither profile goes. */
  CHECK(mrc_ctl_destroy_ev_profile(a.ctx, evp) == EBUSY);
  CHECK(mrc_ctl_destroy_cc_profile(a.ctx, ccp) == EBUSY);
  CHECK(mrc_ctl_replace_evs(a.ctx, evp, EVS, 2) == EBUSY);

  /* Deny one EV: the event comes, named by profile and value; data still
   * flows on the rest. */
  CHECK(mrc_ctl_set_ev_state(a.ctx, evp, 0xD003, MRC_CTL_EV_ASSUMED_BAD) == EINVAL);
  CHECK(mrc_ctl_set_ev_state(a.ctx, evp, 0xBEEF, MRC_CTL_EV_DENIED) == ENOENT);
  CHECK(mrc_ctl_set_ev_state(a.ctx, evp, 0xD003, MRC_CTL_EV_DENIED) == 0);
  struct mrc_ctl_ev_event ev[8];
  int got_n = 0;
  for (int i = 0; i < WAIT_MS && got_n == 0; i++) {
    got_n = mrc_ctl_poll_ev_cq(evcq, 8, ev);
    if (got_n == 0)
      sleep_ms(1);
  }
  CHECK(got_n == 1 && ev[0].ev_profile_id == evp && ev[0].ev == 0xD003 &&
        ev[0].qp_num == a.qpn && ev[0].new_state == MRC_CTL_EV_DENIED &&
        ev[0].reason == MRC_CTL_EV_REASON_CONTROL);
  CHECK(write_and_wait(&a, &b, 2) == 0);
  /* Nine regions registered inside A's buffer, none holding the WRITE's
   * whole range: the WRITE through A's own region still finds its memory. */
  {
    struct ibv_mr *sub[9];
    for (int i = 0; i < 9; i++)
      sub[i] = ibv_reg_mr(a.pd, a.buf + 256 * i, 128, IBV_ACCESS_LOCAL_WRITE);
    memset(b.buf, 0, MSG);
    CHECK(write_and_wait(&a, &b, 3) == 0);
    CHECK(memcmp(a.buf, b.buf, MSG) == 0);
    for (int i = 0; i < 9; i++)
      CHECK(sub[i] && ibv_dereg_mr(sub[i]) == 0);
  }
  CHECK(mrc_ctl_set_ev_state(a.ctx, evp, 0xD003, MRC_CTL_EV_GOOD) == 0);
  got_n = 0;
  for (int i = 0; i < WAIT_MS && got_n == 0; i++) {
    got_n = mrc_ctl_poll_ev_cq(evcq, 8, ev);
    if (got_n == 0)
      sleep_ms(1);
  }
  CHECK(got_n == 1 && ev[0].ev == 0xD003 && ev[0].new_state == MRC_CTL_EV_GOOD);
  /* Endpoint operations to B's NIC (its QPN 0x2): two EV probes (one on
   * an EV of A's profile) and a Port Status Update, in one batch. */
  struct mrc_ctl_endpoint_op ops[3] = {
      {.type = MRC_CTL_ENDPOINT_EV_PROBE, .peer = b.gid, .ev = 0xD001},
      {.type = MRC_CTL_ENDPOINT_EV_PROBE, .peer = b.gid, .ev = 0xD005},
      {.type = MRC_CTL_ENDPOINT_PORT_STATUS_UPDATE, .peer = b.gid, .ev = 0xD003},
  };
  CHECK(mrc_ctl_post_endpoint_ops(a.ctx, ops, 3) == 0);
  /* A soft NIC answers in the step the request arrives in: its service
   * time is 0 (docs/host.md). */
  CHECK(ops[0].status == 0 && ops[0].rtt_ns > 0 && ops[1].status == 0 &&
        ops[1].rtt_ns > 0 && ops[0].service_time_ns == 0);
  CHECK(ops[2].status == 0 && ops[2].peer_ports_up == 1);
  /* A batch far larger than the requests the device holds awaiting
   * answers (256) and the results it queues (1,024): every op answered. */
  {
    enum { BIG = 3000 };
    struct mrc_ctl_endpoint_op *many = calloc(BIG, sizeof(*many));
    for (int i = 0; i < BIG; i++) {
      many[i].type = MRC_CTL_ENDPOINT_EV_PROBE;
      many[i].peer = b.gid;
      many[i].ev = EVS[i % NEVS];
    }
    CHECK(mrc_ctl_post_endpoint_ops(a.ctx, many, BIG) == 0);
    int answered = 0;
    for (int i = 0; i < BIG; i++)
      answered += many[i].status == 0 && many[i].rtt_ns > 0;
    CHECK(answered == BIG);
    free(many);
  }
  /* Two threads with batches in flight on one context: each gets its own
   * answers. */
  {
    pthread_t t[2];
    struct batch_args args[2] = {{a.ctx, b.gid, 0}, {a.ctx, b.gid, 0}};
    for (int i = 0; i < 2; i++)
      pthread_create(&t[i], NULL, probe_batches, &args[i]);
    for (int i = 0; i < 2; i++)
      pthread_join(t[i], NULL);
    CHECK(args[0].answered == THREAD_PROBES && args[1].answered == THREAD_PROBES);
  }
  /* A probe to an address where no NIC listens: no answer. */
  union ibv_gid nobody = b.gid;
  nobody.raw[15] = 99; /* 127.0.21.99 */
  struct mrc_ctl_endpoint_op lost = {.type = MRC_CTL_ENDPOINT_EV_PROBE,
                                     .peer = nobody, .ev = 0xD001};
  CHECK(mrc_ctl_post_endpoint_ops(a.ctx, &lost, 1) == 0 &&
        lost.status == ETIMEDOUT);
  struct mrc_ctl_endpoint_op bad = {.type = 7};
  CHECK(mrc_ctl_post_endpoint_ops(a.ctx, &bad, 1) == EINVAL);

  /* A's port goes down (docs/host.md, "Ports") with a WRITE posted: A
   * tells B, its QP's EVs are DENIED (events on the EV-event CQ), the
   * port sends and takes nothing (B's Port Status Update to A gets no
   * answer, after 1 s) and the WRITE waits; up again, the EVs are GOOD,
   * B gets its answer and the WRITE completes, once. */
  {
    struct mrc_ctl_ev_event evs[16];
    while (mrc_ctl_poll_ev_cq(evcq, 16, evs) > 0)
      ;
    CHECK(mrc_ctl_set_port_admin_state(a.ctx, 1, 0) == 0);
    CHECK(mrc_ctl_set_port_admin_state(a.ctx, 1, 0) == 0); /* down already */
    CHECK(mrc_ctl_query_port(a.ctx, 1, &pa) == 0 && pa.state == IBV_PORT_DOWN &&
          pa.admin_up == 0);
    struct ibv_port_attr ipa;
    CHECK(ibv_query_port(a.ctx, 1, &ipa) == 0 && ipa.state == IBV_PORT_DOWN);
    CHECK(mrc_ctl_query_port(b.ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE &&
          pa.admin_up == 1);
    int denied = 0;
    for (int i = 0; i < WAIT_MS && denied < NEVS; i++) {
      int k = mrc_ctl_poll_ev_cq(evcq, 16, evs);
      for (int j = 0; j < k; j++)
        denied += evs[j].new_state == MRC_CTL_EV_DENIED &&
                  evs[j].reason == MRC_CTL_EV_REASON_CONTROL &&
                  evs[j].qp_num == a.qpn;
      if (k == 0)
        sleep_ms(1);
    }
    CHECK(denied == NEVS);
    struct ibv_sge sge = {.addr = (uintptr_t)a.buf, .length = MSG, .lkey = a.mr->lkey};
    struct ibv_send_wr wr = {.wr_id = 40, .sg_list = &sge, .num_sge = 1,
                             .opcode = IBV_WR_RDMA_WRITE,
                             .send_flags = IBV_SEND_SIGNALED};
    wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
    wr.wr.rdma.rkey = b.mr->rkey;
    struct ibv_send_wr *badwr;
    memset(b.buf, 0, MSG);
    CHECK(mrc_post_send(a.qp, &wr, &badwr) == 0);
    struct mrc_ctl_endpoint_op st = {.type = MRC_CTL_ENDPOINT_PORT_STATUS_UPDATE,
                                     .peer = a.gid, .ev = 0xD003};
    CHECK(mrc_ctl_post_endpoint_ops(b.ctx, &st, 1) == 0 && st.status == ETIMEDOUT);
    struct ibv_wc wc;
    CHECK(mrc_poll_cq(a.cq, 1, &wc) == 0); /* held, a second later */
    CHECK(b.buf[MSG - 1] == 0);
    CHECK(mrc_ctl_set_port_admin_state(a.ctx, 1, 1) == 0);
    CHECK(mrc_ctl_query_port(a.ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE &&
          pa.admin_up == 1);
    int good = 0;
    for (int i = 0; i < WAIT_MS && good < NEVS; i++) {
      int k = mrc_ctl_poll_ev_cq(evcq, 16, evs);
      for (int j = 0; j < k; j++)
        good += evs[j].new_state == MRC_CTL_EV_GOOD &&
                evs[j].reason == MRC_CTL_EV_REASON_CONTROL && evs[j].qp_num == a.qpn;
      if (k == 0)
        sleep_ms(1);
    }
    CHECK(good == NEVS);
    int n = 0;
    for (int i = 0; i < WAIT_MS && n == 0; i++) {
      n = mrc_poll_cq(a.cq, 1, &wc);
      if (n == 0)
        sleep_ms(1);
    }
    CHECK(n == 1 && wc.wr_id == 40 && wc.status == IBV_WC_SUCCESS);
    CHECK(memcmp(a.buf, b.buf, MSG) == 0);
    sleep_ms(50);
    CHECK(mrc_poll_cq(a.cq, 1, &wc) == 0); /* once */
    st.status = -1;
    CHECK(mrc_ctl_post_endpoint_ops(b.ctx, &st, 1) == 0 && st.status == 0 &&
          st.peer_ports_up == 1);
  }

  /* Everything goes; the profiles once their QP has. */
  CHECK(ibv_close_device(a.ctx) == EBUSY);
  CHECK(mrc_ctl_destroy_ev_cq(evcq) == 0);
  struct side *sides[] = {&a, &b};
  for (int i = 0; i < 2; i++) {
    struct side *s = sides[i];
    CHECK(mrc_destroy_qp(s->qp) == 0);
    CHECK(mrc_destroy_cq(s->cq) == 0);
    CHECK(ibv_dereg_mr(s->mr) == 0);
    CHECK(ibv_dealloc_pd(s->pd) == 0);
    CHECK(mrc_destroy_context(s->mctx) == 0);
  }
  CHECK(mrc_ctl_replace_evs(a.ctx, evp, EVS, 2) == EBUSY); /* still ONLINE */
  CHECK(mrc_ctl_modify_ev_profile_state(a.ctx, evp, MRC_CTL_PROFILE_OFFLINE) == 0);
  CHECK(mrc_ctl_replace_evs(a.ctx, evp, EVS, 2) == 0);
  CHECK(mrc_ctl_destroy_ev_profile(a.ctx, evp) == 0);
  CHECK(mrc_ctl_destroy_cc_profile(a.ctx, ccp) == 0);
  CHECK(mrc_ctl_destroy_ev_format_profile(a.ctx, fmt) == 0);
  CHECK(mrc_ctl_destroy_ev_profile(a.ctx, evp) == ENOENT);
  for (int i = 0; i < 2; i++) {
    CHECK(ibv_close_device(sides[i]->ctx) == 0);
    free(sides[i]->buf);
  }
  ibv_free_device_list(list);
  if (failed == 0)
    printf("ctl: all checks passed\n");
  return failed;
}
