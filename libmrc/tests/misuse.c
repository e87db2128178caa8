/*
 * Misuse of libmrc and of its verbs objects: every refusal is the API's
 * error code, nothing crashes. Built and run by libmrc/tests/ocp_benchmark.rs
 * on a soft NIC ($MRC_DEVICE). Exit status: the number of failed checks.
 */
#include <errno.h>
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
  errno = 0;
  CHECK(mrc_create_cq(mctx, 16, NULL, (struct ibv_comp_channel *)buf, 0) == NULL &&
        errno == EOPNOTSUPP);
  struct mrc_cq *cq = mrc_create_cq(mctx, 16, NULL, NULL, 0);
  CHECK(cq != NULL);
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
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, MRC_QP_EV_PROFILE) == EOPNOTSUPP);

  /* Posting before RTS: refused, bad_wr names the WR. */
  struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1,
                           .opcode = IBV_WR_RDMA_WRITE};
  wr.wr.rdma.remote_addr = (uintptr_t)buf;
  wr.wr.rdma.rkey = mr->rkey;
  struct ibv_send_wr *bad = NULL;
  CHECK(mrc_post_send(qp, &wr, &bad) == EINVAL && bad == &wr);
  wr.opcode = IBV_WR_SEND;
  bad = NULL;
  CHECK(mrc_post_send(qp, &wr, &bad) == EINVAL && bad == &wr);
  CHECK(mrc_post_send(NULL, &wr, &bad) == EINVAL);

  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == 0);
  CHECK(mrc_modify_qp(qp, &a, IBV_QP_STATE, &m, 0) == EINVAL); /* INIT -> INIT */

  CHECK(strcmp(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "unknown") != 0);
  CHECK(strcmp(ibv_wc_status_str((enum ibv_wc_status)9999), "unknown") == 0);

  CHECK(mrc_destroy_qp(qp) == 0);
  CHECK(mrc_destroy_qp(NULL) == EINVAL);
  CHECK(mrc_destroy_cq(cq) == 0);
  CHECK(ibv_dereg_mr(mr) == 0);
  CHECK(ibv_dealloc_pd(pd) == 0);
  CHECK(mrc_destroy_context(mctx) == 0);
  CHECK(ibv_close_device(ctx) == 0);
  ibv_free_device_list(list);
  if (failed == 0)
    printf("misuse: all checks passed\n");
  return failed;
}
