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
  CHECK(mrc_query_device(NULL, &da, &supported) == EINVAL);
  CHECK(mrc_query_device(ctx, &da, &supported) == 0 && supported == 1);

  struct mrc_context_attr bad_ver = {.mrc_api_version_used = 99};
  errno = 0;
  CHECK(mrc_create_context(ctx, &bad_ver) == NULL && errno == EPROTONOSUPPORT);
  struct mrc_context_attr ca = {.mrc_api_version_used = MRC_PROTOCOL_VERSION_1};
  struct mrc_context *mctx = mrc_create_context(ctx, &ca);
  CHECK(mctx != NULL);

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
  /* A channel of another device (here: zeroed memory) is refused. */
  static struct ibv_comp_channel foreign;
  errno = 0;
  CHECK(mrc_create_cq(mctx, 16, NULL, &foreign, 0) == NULL && errno == EINVAL);
  struct mrc_cq *cq = mrc_create_cq(mctx, 16, NULL, NULL, 0);
  CHECK(cq != NULL);
  CHECK(mrc_req_notify_cq(cq, 0) == EINVAL); /* no channel */
  CHECK(mrc_req_notify_cq(NULL, 0) == EINVAL);

  /* A channel with no event: a non-blocking read says EAGAIN. */
  struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
  CHECK(ch != NULL && ch->fd >= 0 && ch->context == ctx);
  CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
  struct mrc_cq *ch_cq = mrc_create_cq(mctx, 16, (void *)0x5eed, ch, 0);
  CHECK(ch_cq != NULL);
  CHECK(mrc_req_notify_cq(ch_cq, 0) == 0);
  struct mrc_cq *ev_cq = NULL;
  void *ev_ctx = NULL;
  errno = 0;
  CHECK(mrc_get_cq_event(ch, &ev_cq, &ev_ctx) == -1 && errno == EAGAIN);
  CHECK(mrc_get_cq_event(NULL, &ev_cq, &ev_ctx) == -1 && errno == EINVAL);
  CHECK(ibv_destroy_comp_channel(ch) == EBUSY); /* a CQ uses it */

  /* No asynchronous event yet: non-blocking, EAGAIN. */
  struct mrc_async_event ae;
  CHECK(fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0);
  errno = 0;
  CHECK(mrc_get_async_event(mctx, &ae) == -1 && errno == EAGAIN);
  CHECK(mrc_get_async_event(NULL, &ae) == -1 && errno == EINVAL);
  struct ibv_wc wc[4];
  CHECK(mrc_poll_cq(NULL, 4, wc) == -EINVAL);
  CHECK(mrc_poll_cq(cq, -1, wc) == -EINVAL);
  CHECK(mrc_poll_cq(cq, 4, wc) == 0);

  struct mrc_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .pd = pd};
  qa.cap.max_send_wr = 16;
  qa.cap.max_send_sge = 2;
  errno = 0;
  CHECK(mrc_create_qp(mctx, &qa) == NULL && errno == EINVAL);
  qa.cap.max_send_sge = 1;
  struct mrc_qp *qp = mrc_create_qp(mctx, &qa);
  CHECK(qp != NULL);
  uint32_t qpn = 0;
  CHECK(mrc_get_qpn(NULL, &qpn) == EINVAL);
  CHECK(mrc_get_qpn(qp, &qpn) == 0);

  struct ibv_qp_attr a = {0};
  struct mrc_qp_attr m = {0};
  a.qp_state = IBV_QPS_INIT;
  CHECK(mrc_modify_qp(qp, &a, 0, &m, 0) == EINVAL); /* no IBV_QP_STATE */
  a.qp_state = IBV_QPS_RTR;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == EINVAL); /* RST -> RTR */
  a.qp_state = IBV_QPS_INIT;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ALT_PATH, &m, 0) == EINVAL);
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_EV_PROFILE) == EINVAL); /* id 0 */
  m.ev_profile_id = 4242;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_EV_PROFILE) == ENOENT);
  m.ev_profile_id = 0;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_MAX_WIMM) == EINVAL); /* an RTS attribute */
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, NULL, MRC_QP_MAX_WIMM) == EINVAL);
  a.cur_qp_state = IBV_QPS_RTS;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE, &m, 0) == EINVAL);

  /* Query: the state and the capabilities the QP was made with. */
  struct ibv_qp_attr qa_out;
  struct ibv_qp_init_attr qi_out;
  struct mrc_qp_attr m_out;
  CHECK(mrc_query_qp(NULL, &qa_out, 0, NULL, NULL, 0) == EINVAL);
  CHECK(mrc_query_qp(qp, &qa_out, IBV_QP_STATE, &qi_out, &m_out, 0) == 0 &&
        qa_out.qp_state == IBV_QPS_RESET && qa_out.cap.max_send_wr == 16 &&
        qi_out.cap.max_send_wr == 16 && qi_out.qp_type == IBV_QPT_RC);

  /* Freeing what others depend on: EBUSY, and everything still works. */
  CHECK(mrc_destroy_cq(cq) == EBUSY);
  CHECK(ibv_dealloc_pd(pd) == EBUSY);
  CHECK(mrc_destroy_context(mctx) == EBUSY);
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

  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == 0);
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == EINVAL); /* INIT -> INIT */
  CHECK(mrc_query_qp(qp, &qa_out, IBV_QP_STATE, NULL, NULL, 0) == 0 &&
        qa_out.qp_state == IBV_QPS_INIT);
  /* INIT -> ERR -> RST -> INIT. */
  a.qp_state = IBV_QPS_ERR;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == 0);
  CHECK(mrc_query_qp(qp, &qa_out, IBV_QP_STATE, NULL, NULL, 0) == 0 &&
        qa_out.qp_state == IBV_QPS_ERR);
  a.qp_state = IBV_QPS_INIT;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == EINVAL); /* ERR -> INIT */
  a.qp_state = IBV_QPS_RESET;
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == 0);
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
    CHECK(mrc_modify_qp(qp, &r,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN |
                            IBV_QP_RQ_PSN | IBV_QP_PATH_MTU,
                        NULL, 0) == 0);
    struct ibv_qp_attr t = {.qp_state = IBV_QPS_RTS};
    CHECK(mrc_modify_qp(qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN, NULL, 0) == 0);
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
  CHECK(ibv_destroy_comp_channel(ch) == 0);
  CHECK(ibv_dereg_mr(mr) == 0);
  CHECK(ibv_dealloc_pd(pd) == 0);
  CHECK(mrc_destroy_context(mctx) == 0);
  CHECK(ibv_close_device(ctx) == 0);
  ibv_free_device_list(list);
  if (failed == 0)
    printf("misuse: all checks passed\n");
  return failed;
}
