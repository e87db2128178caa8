/*
 * Misuse of libmrc and of its verbs objects: every refusal is the API's
 * error code, nothing crashes. Built and run by libmrc/tests/ocp_benchmark.rs
 * on a soft NIC ($MRC_DEVICE). Exit status: the number of failed checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc.h"

static int failed;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "misuse.c:%d: %s\n", __LINE__, #cond);                   \
      failed++;                                                                \
    }                                                                          \
  } while (0)

int main(void) {
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  CHECK(list && n == 1 && !strcmp(ibv_get_device_name(list[0]), "mrc0"));
  if (!list || n < 1)
    return 100;
  struct ibv_context *ctx = ibv_open_device(list[0]);
  CHECK(ctx != NULL);
  if (!ctx)
    return 100;

  union ibv_gid gid;
  CHECK(ibv_query_gid(ctx, 2, 0, &gid) == EINVAL);
  CHECK(ibv_query_gid(ctx, 1, 3, &gid) == 0 && gid.raw[10] == 0xff);
  CHECK(ibv_query_gid(NULL, 1, 0, &gid) == EINVAL);

  struct ibv_port_attr pa;
  CHECK(ibv_query_port(ctx, 2, &pa) == EINVAL);
  CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE &&
        pa.link_layer == IBV_LINK_LAYER_ETHERNET &&
        pa.active_mtu == IBV_MTU_4096 /* loopback: 64 KiB frames */);
  struct ibv_device_attr dev_attr;
  CHECK(ibv_query_device(NULL, &dev_attr) == EINVAL);
  CHECK(ibv_query_device(ctx, &dev_attr) == 0 && dev_attr.phys_port_cnt == 1 &&
        dev_attr.max_sge == 1);

  struct mrc_device_attr da;
  int supported = -1;
  errno = 0;
  CHECK(mrc_query_device(NULL, &da, &supported) == -1 && errno == EINVAL);
  CHECK(mrc_query_device(ctx, &da, &supported) == 0 && supported == 1 &&
        da.mrc_protocol_version == MRC_PROTOCOL_VERSION_1 &&
        da.wimm_attr.max_wimm > 0 && da.mpr_attr.max_mpr > 0 &&
        da.mpr_attr.mpr_resolution > 0 && da.qp_attr.max_qp_hint > 0 &&
        (da.cap & MRC_DEVICE_CAP_TRIM_NACK));

  uint32_t cur = 0, oldest = 1, vendor = 0, vendor_oldest = 1;
  mrc_query_version(&cur, &oldest, &vendor, &vendor_oldest);
  CHECK(cur == MRC_API_VER(1, 0, 1) && oldest == 0 &&
        vendor == MRC_VENDOR_API_CURRENT_VERSION && vendor_oldest == 0);
  mrc_query_version(NULL, NULL, NULL, NULL); /* any pointer may be NULL */

  /* A version newer than the library's is refused; 0, a NULL attr and
   * older versions are served. */
  struct mrc_context_attr bad_ver = {.mrc_api_version_used = MRC_API_VER(1, 0, 2)};
  errno = 0;
  CHECK(mrc_create_context(ctx, &bad_ver) == NULL && errno == EPROTONOSUPPORT);
  struct mrc_context_attr bad_vendor = {.mrc_vendor_api_version_used =
                                            MRC_API_VER(9, 0, 0)};
  errno = 0;
  CHECK(mrc_create_context(ctx, &bad_vendor) == NULL && errno == EPROTONOSUPPORT);
  struct mrc_context *other = mrc_create_context(ctx, NULL);
  CHECK(other != NULL);
  struct mrc_context_attr ca = {.mrc_api_version_used = MRC_PROTOCOL_VERSION_1};
  struct mrc_context *mctx = mrc_create_context(ctx, &ca);
  CHECK(mctx != NULL);
  CHECK(mrc_query_device_ex(ctx, mctx, &da, &supported) == 0 && supported == 1);
  CHECK(mrc_query_device_ex(ctx, NULL, &da, &supported) == 0 && supported == 1);

  struct ibv_pd *pd = ibv_alloc_pd(ctx);
  CHECK(pd != NULL);
  static char buf[8192];
  errno = 0;
  CHECK(ibv_reg_mr_iova2(pd, buf, sizeof(buf), 0x1000, IBV_ACCESS_LOCAL_WRITE) == NULL &&
        errno == EOPNOTSUPP);
  errno = 0;
  CHECK(ibv_reg_mr(pd, NULL, 16, IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EINVAL);
  struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf),
                                 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  CHECK(mr != NULL && mr->addr == buf && mr->length == sizeof(buf));

  errno = 0;
  CHECK(mrc_create_cq(mctx, 0, NULL, NULL, 0) == NULL && errno == EINVAL);
  /* A channel of another MRC context is refused. */
  struct mrc_comp_channel *foreign = NULL;
  CHECK(mrc_create_comp_channel(other, &foreign) == 0 && foreign != NULL);
  errno = 0;
  CHECK(mrc_create_cq(mctx, 16, NULL, foreign, 0) == NULL && errno == EINVAL);
  CHECK(mrc_destroy_context(other) == -1 && errno == EBUSY); /* its channel */
  CHECK(mrc_destroy_comp_channel(foreign) == 0);
  CHECK(mrc_destroy_context(other) == 0);
  struct mrc_cq *cq = mrc_create_cq(mctx, 16, NULL, NULL, 0);
  CHECK(cq != NULL);
  CHECK(mrc_req_notify_cq(cq, 0) == EINVAL); /* no channel */
  CHECK(mrc_req_notify_cq(NULL, 0) == EINVAL);

  /* A channel with no event: a non-blocking read says EAGAIN. */
  struct mrc_comp_channel *ch = NULL;
  int ch_fd = -1;
  CHECK(mrc_create_comp_channel(NULL, &ch) == EINVAL);
  CHECK(mrc_create_comp_channel(mctx, NULL) == EINVAL);
  CHECK(mrc_create_comp_channel(mctx, &ch) == 0 && ch != NULL);
  CHECK(mrc_get_comp_channel_fd(ch, NULL) == -1 && errno == EINVAL);
  CHECK(mrc_get_comp_channel_fd(ch, &ch_fd) == 0 && ch_fd >= 0);
  CHECK(fcntl(ch_fd, F_SETFL, fcntl(ch_fd, F_GETFL) | O_NONBLOCK) == 0);
  struct mrc_cq *ch_cq = mrc_create_cq(mctx, 16, (void *)0x5eed, ch, 0);
  CHECK(ch_cq != NULL);
  CHECK(mrc_req_notify_cq(ch_cq, 0) == 0);
  struct mrc_cq *ev_cq = NULL;
  void *ev_ctx = NULL;
  errno = 0;
  CHECK(mrc_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);
  CHECK(mrc_get_cq_event(NULL, &ev_cq, &ev_ctx) == -1 && errno == EINVAL);
  CHECK(mrc_destroy_comp_channel(ch) == EBUSY); /* a CQ uses it */
  CHECK(mrc_destroy_comp_channel(NULL) == EINVAL);

  /* No asynchronous event yet: non-blocking, EAGAIN. */
  struct mrc_async_event ae;
  CHECK(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0);
  errno = 0;
  CHECK(mrc_get_async_event(mctx, &ae) == -1 && errno == EAGAIN);
  CHECK(mrc_get_async_event(NULL, &ae) == -1 && errno == EINVAL);
  struct ibv_wc wc[4];
  errno = 0;
  CHECK(mrc_poll_cq(NULL, 4, wc) == -1 && errno == EINVAL);
  errno = 0;
  CHECK(mrc_poll_cq(cq, -1, wc) == -1 && errno == EINVAL);
  CHECK(mrc_poll_cq(cq, 4, wc) == 0);

  struct mrc_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .pd = pd};
  qa.cap.max_send_wr = 16;
  qa.cap.max_send_sge = 2;
  errno = 0;
  CHECK(mrc_create_qp(mctx, &qa) == NULL && errno == EINVAL);
  qa.cap.max_send_sge = 1;
  qa.send_ops_flags = IBV_QP_EX_WITH_SEND; /* MRC has WRITEs only */
  errno = 0;
  CHECK(mrc_create_qp(mctx, &qa) == NULL && errno == EINVAL);
  qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
  qa.protocol_version = (enum mrc_protocol_version)(1 << 1); /* no such version */
  errno = 0;
  CHECK(mrc_create_qp(mctx, &qa) == NULL && errno == EINVAL);
  qa.protocol_version = MRC_PROTOCOL_VERSION_0; /* the device's */
  qa.sq_sig_all = 1;
  qa.qp_context = (void *)0xc0de;
  struct mrc_qp *qp = mrc_create_qp(mctx, &qa);
  CHECK(qp != NULL);
  uint32_t qpn = 0;
  errno = 0;
  CHECK(mrc_get_qpn(NULL, &qpn) == -1 && errno == EINVAL);
  CHECK(mrc_get_qpn(qp, &qpn) == 0);

  struct ibv_qp_attr a = {0};
  struct mrc_qp_attr m = {0};
  a.qp_state = IBV_QPS_INIT;
  CHECK(mrc_modify_qp(qp, &a, 0, &m, 0) == EINVAL); /* no IBV_QP_STATE */
  a.qp_state = IBV_QPS_RTR;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == EINVAL); /* RST -> RTR */
  a.qp_state = IBV_QPS_INIT;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ALT_PATH, &m, 0) == EINVAL);
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_EV_PROFILE_ID) == EINVAL); /* id 0 */
  m.profile.ev_profile_id = 4242;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_EV_PROFILE_ID) == ENOENT);
  m.profile.ev_profile_id = 1ull << 40; /* beyond this device's ids */
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_EV_PROFILE_ID) == EINVAL);
  m.profile.ev_profile_id = 0;
  m.vendor_cfg[7] = 1; /* data for another provider */
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_VENDOR_CFG) == EINVAL);
  m.vendor_cfg[7] = 0;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_TIMEOUT) == EINVAL); /* RTS's */
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_CAP) == EINVAL);     /* RTR's */
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_MAX_WIMM) == EINVAL); /* an RTS attribute */
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, NULL, MRC_QP_MAX_WIMM) == EINVAL);
  a.cur_qp_state = IBV_QPS_RTS;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE, &m, 0) == EINVAL);

  /* Query: the state and the capabilities the QP was made with. */
  struct ibv_qp_attr qa_out;
  struct mrc_qp_init_attr qi_out;
  struct mrc_qp_attr m_out;
  CHECK(mrc_query_qp(NULL, &qa_out, 0, NULL, 0, NULL) == EINVAL);
  CHECK(mrc_query_qp(qp, &qa_out, IBV_QP_STATE, &m_out, 0, &qi_out) == 0 &&
        qa_out.qp_state == IBV_QPS_RESET && qa_out.cap.max_send_wr == 16 &&
        qi_out.cap.max_send_wr == 16 && qi_out.send_cq == cq &&
        qi_out.pd == pd && qi_out.sq_sig_all == 1 &&
        qi_out.qp_context == (void *)0xc0de &&
        qi_out.protocol_version == MRC_PROTOCOL_VERSION_1 &&
        m_out.qp_hint == NULL);

  /* QP hints: counts >= 0, no other provider's data; query and modify
   * by mask; a hint a QP names cannot go until the QP lets go of it. */
  struct mrc_qp_hint_init_attr hi = {.attr = {.num_qps_per_peer = 2,
                                              .num_send_peers = 8,
                                              .num_remote_recv_peers = 16}};
  errno = 0;
  CHECK(mrc_create_qp_hint(NULL, &hi) == NULL && errno == EINVAL);
  hi.attr.num_send_peers = -1;
  errno = 0;
  CHECK(mrc_create_qp_hint(mctx, &hi) == NULL && errno == EINVAL);
  hi.attr.num_send_peers = 8;
  hi.attr.vendor_cfg[0] = 0x5a;
  errno = 0;
  CHECK(mrc_create_qp_hint(mctx, &hi) == NULL && errno == EINVAL);
  hi.attr.vendor_cfg[0] = 0;
  struct mrc_qp_hint *hint = mrc_create_qp_hint(mctx, &hi);
  CHECK(hint != NULL);
  struct mrc_qp_hint_attr ho = {0};
  CHECK(mrc_query_qp_hint(hint, &ho, MRC_QP_HINT_NUM_SEND_PEERS) == 0 &&
        ho.num_send_peers == 8 && ho.num_qps_per_peer == 0);
  CHECK(mrc_query_qp_hint(hint, &ho, 1 << 5) == -1 && errno == EINVAL);
  struct mrc_qp_hint_attr hm = {.num_qps_per_peer = 4, .num_send_peers = -3};
  CHECK(mrc_modify_qp_hint(hint, &hm, MRC_QP_HINT_NUM_QPS_PER_PEER |
                                          MRC_QP_HINT_NUM_SEND_PEERS) == -1 &&
        errno == EINVAL);
  CHECK(mrc_modify_qp_hint(hint, &hm, MRC_QP_HINT_NUM_QPS_PER_PEER) == 0);
  CHECK(mrc_query_qp_hint(hint, &ho,
                          MRC_QP_HINT_NUM_QPS_PER_PEER | MRC_QP_HINT_NUM_SEND_PEERS |
                              MRC_QP_HINT_NUM_REMOTE_RECV_PEERS) == 0 &&
        ho.num_qps_per_peer == 4 && ho.num_send_peers == 8 &&
        ho.num_remote_recv_peers == 16);
  CHECK(mrc_destroy_qp_hint(NULL) == -1 && errno == EINVAL);

  /* Freeing what others depend on: EBUSY, and everything still works. */
  CHECK(mrc_destroy_cq(cq) == EBUSY);
  CHECK(ibv_dealloc_pd(pd) == EBUSY);
  errno = 0;
  CHECK(mrc_destroy_context(mctx) == -1 && errno == EBUSY);
  CHECK(ibv_close_device(ctx) == EBUSY);
  CHECK(mrc_poll_cq(cq, 4, wc) == 0);

  /* Posting before RTS: refused, bad_wr names the WR. */
  struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_RDMA_WRITE};
  wr.wr.rdma.remote_addr = (uintptr_t)buf;
  wr.wr.rdma.rkey = mr->rkey;
  struct ibv_send_wr *bad = NULL;
  CHECK(mrc_post_send(qp, &wr, &bad) == EINVAL && bad == &wr);
  wr.num_sge = -1; /* refused, not read */
  wr.sg_list = NULL;
  bad = NULL;
  CHECK(mrc_post_send(qp, &wr, &bad) == EINVAL && bad == &wr);
  wr.num_sge = 1;
  wr.sg_list = &sge;
  wr.opcode = IBV_WR_SEND;
  bad = NULL;
  CHECK(mrc_post_send(qp, &wr, &bad) == EINVAL && bad == &wr);
  CHECK(mrc_post_send(NULL, &wr, &bad) == EINVAL);

  m.qp_hint = hint;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_HINT) == 0);
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == EINVAL); /* INIT -> INIT */
  CHECK(mrc_query_qp(qp, &qa_out, IBV_QP_STATE, &m_out, MRC_QP_HINT, NULL) == 0 &&
        qa_out.qp_state == IBV_QPS_INIT && m_out.qp_hint == hint);
  errno = 0;
  CHECK(mrc_destroy_qp_hint(hint) == -1 && errno == EBUSY); /* the QP names it */
  m.qp_hint = NULL;
  /* INIT -> ERR -> RST -> INIT. */
  a.qp_state = IBV_QPS_ERR;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == 0);
  CHECK(mrc_query_qp(qp, &qa_out, IBV_QP_STATE, NULL, 0, NULL) == 0 &&
        qa_out.qp_state == IBV_QPS_ERR);
  a.qp_state = IBV_QPS_INIT;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == EINVAL); /* ERR -> INIT */
  a.qp_state = IBV_QPS_RESET;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == 0);
  CHECK(mrc_destroy_qp_hint(hint) == 0); /* RST let go of it */
  a.qp_state = IBV_QPS_INIT;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == 0);

  /* An MR whose data a WRITE still reads (the peer, 127.0.19.99, never
   * answers) cannot be deregistered; once the QP is in ERR it can. */
  {
    static char src[16384];
    struct ibv_mr *smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
    /* The same memory registered again, after: the NIC may read the
     * WRITE's data through either registration. */
    struct ibv_mr *smr2 = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
    CHECK(smr != NULL && smr2 != NULL);
    struct ibv_qp_attr r = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096,
                            .dest_qp_num = 0x10};
    r.ah_attr.is_global = 1;
    r.ah_attr.grh.dgid = gid;
    r.ah_attr.grh.dgid.raw[15] = 99;
    const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_PATH_MTU;
    struct mrc_qp_attr rm = {.wimm.max_wimm_dest = 300}; /* beyond the device */
    CHECK(mrc_modify_qp(qp, &r, rtr_mask, &rm, MRC_QP_MAX_WIMM_DEST) == EINVAL);
    rm.wimm.max_wimm_dest = 32;
    rm.cap = 1u << 7; /* no such capability */
    CHECK(mrc_modify_qp(qp, &r, rtr_mask, &rm, MRC_QP_MAX_WIMM_DEST | MRC_QP_CAP) ==
          EINVAL);
    rm.cap = MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED;
    rm.mpr.mpr_dest = 4;
    CHECK(mrc_modify_qp(qp, &r, rtr_mask, &rm,
                        MRC_QP_MAX_WIMM_DEST | MRC_QP_CAP | MRC_QP_MPR_DEST) == 0);
    struct ibv_qp_attr t = {.qp_state = IBV_QPS_RTS};
    struct mrc_qp_attr tm = {.timeout = 25}; /* beyond 2^24 x 1.024 us */
    CHECK(mrc_modify_qp(qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN, &tm, MRC_QP_TIMEOUT) ==
          EINVAL);
    tm.timeout = 14;
    tm.retry.linear_cnt = 8; /* at most 7 */
    CHECK(mrc_modify_qp(qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN, &tm,
                        MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT) == EINVAL);
    tm.retry.linear_cnt = 3;
    tm.retry.exp_cnt = 26; /* at most 25 */
    CHECK(mrc_modify_qp(qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN, &tm,
                        MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT) == EINVAL);
    tm.retry.exp_cnt = 25;
    tm.mpr.mpr = 8;
    tm.wimm.max_wimm = 64;
    CHECK(mrc_modify_qp(qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN, &tm,
                        MRC_QP_TIMEOUT | MRC_QP_RETRY_CNT | MRC_QP_MPR |
                            MRC_QP_MAX_WIMM) == 0);
    CHECK(mrc_query_qp(qp, &qa_out, IBV_QP_STATE, &m_out, 0, NULL) == 0 &&
          qa_out.qp_state == IBV_QPS_RTS && m_out.timeout == 14 &&
          m_out.retry.linear_cnt == 3 && m_out.retry.exp_cnt == 25 &&
          m_out.mpr.mpr == 8 && m_out.mpr.mpr_dest == 4 &&
          m_out.wimm.max_wimm == 64 && m_out.wimm.max_wimm_dest == 32 &&
          m_out.cap == MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED);
    struct ibv_sge s2 = {.addr = (uintptr_t)src, .length = sizeof(src), .lkey = smr->lkey};
    struct ibv_send_wr w2 = {.wr_id = 3, .sg_list = &s2, .num_sge = 1,
                             .opcode = IBV_WR_RDMA_WRITE,
                             .send_flags = IBV_SEND_SIGNALED};
    w2.wr.rdma.remote_addr = 0x1000;
    w2.wr.rdma.rkey = 0x100;
    struct ibv_send_wr *b2;
    CHECK(mrc_post_send(qp, &w2, &b2) == 0);
    CHECK(ibv_dereg_mr(smr) == EBUSY);
    CHECK(ibv_dereg_mr(smr2) == EBUSY);
    struct ibv_qp_attr e = {.qp_state = IBV_QPS_ERR};
    CHECK(mrc_modify_qp(qp, &e, IBV_QP_STATE, NULL, 0) == 0);
    CHECK(ibv_dereg_mr(smr) == 0);
    CHECK(ibv_dereg_mr(smr2) == 0);
    struct ibv_qp_attr z = {.qp_state = IBV_QPS_RESET};
    CHECK(mrc_modify_qp(qp, &z, IBV_QP_STATE, NULL, 0) == 0);
    while (mrc_poll_cq(cq, 4, wc) > 0) /* the flushed WRITE */
      ;
  }

  CHECK(strcmp(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "unknown") != 0);
  CHECK(strcmp(ibv_wc_status_str((enum ibv_wc_status)9999), "unknown") == 0);

  CHECK(mrc_destroy_qp(qp) == 0);
  CHECK(mrc_destroy_qp(NULL) == EINVAL);
  CHECK(mrc_destroy_cq(cq) == 0);
  CHECK(mrc_destroy_cq(ch_cq) == 0);
  CHECK(mrc_destroy_comp_channel(ch) == 0);
  CHECK(ibv_dereg_mr(mr) == 0);
  CHECK(ibv_dealloc_pd(pd) == 0);
  CHECK(mrc_destroy_context(mctx) == 0);
  CHECK(ibv_close_device(ctx) == 0);
  ibv_free_device_list(list);
  if (failed == 0)
    printf("misuse: all checks passed\n");
  return failed;
}
