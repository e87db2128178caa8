/*
 * Completion channels and asynchronous events between two soft NICs in
 * one process ($MRC_DEVICE names two devices): a program that sleeps on
 * a channel's descriptor wakes for its completions, an unarmed CQ stays
 * silent, and a WRITE refused by the peer (bad rkey) moves the QP to ERR
 * with IBV_EVENT_QP_FATAL on its context. Built and run by
 * libmrc/tests/ocp_benchmark.rs. Exit status: the number of failed checks
 * (100: setup failed).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc.h"

static int failed;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "events.c:%d: %s\n", __LINE__, #cond);                   \
      failed++;                                                                \
    }                                                                          \
  } while (0)

/* How long a wake-up may take before the test calls it lost. */
enum { WAIT_MS = 5000, BUF = 1 << 16, MSG = 4096 };

struct side {
  struct ibv_context *ctx;
  struct mrc_context *mctx;
  struct ibv_pd *pd;
  struct ibv_mr *mr;
  struct mrc_comp_channel *ch;
  int ch_fd; /* the channel's descriptor */
  struct mrc_cq *cq;
  struct mrc_qp *qp;
  uint32_t qpn;
  union ibv_gid gid;
  char *buf;
};

static int readable(int fd, int ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  return poll(&p, 1, ms) == 1;
}

/* sig_all: the QP's sq_sig_all (every send completes, signaled or not). */
static int open_side(struct ibv_device *dev, struct side *s, int sig_all) {
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
  if (!s->mr || mrc_create_comp_channel(s->mctx, &s->ch) ||
      mrc_get_comp_channel_fd(s->ch, &s->ch_fd))
    return -1;
  s->cq = mrc_create_cq(s->mctx, 64, s, s->ch, 0);
  if (!s->cq)
    return -1;
  struct mrc_qp_init_attr qa = {.send_cq = s->cq, .recv_cq = s->cq, .pd = s->pd};
  qa.cap.max_send_wr = 16;
  qa.sq_sig_all = sig_all;
  qa.cap.max_recv_wr = 16;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  s->qp = mrc_create_qp(s->mctx, &qa);
  if (!s->qp || mrc_get_qpn(s->qp, &s->qpn) || ibv_query_gid(s->ctx, 1, 0, &s->gid))
    return -1;
  return 0;
}

static int connect_to(struct side *s, const struct side *peer) {
  struct ibv_qp_attr a = {0};
  a.qp_state = IBV_QPS_INIT;
  if (mrc_modify_qp(s->qp, &a, IBV_QP_STATE, NULL, 0))
    return -1;
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_4096;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer->gid;
  a.dest_qp_num = peer->qpn;
  a.rq_psn = 100;
  if (mrc_modify_qp(s->qp, &a,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN |
                        IBV_QP_RQ_PSN | IBV_QP_PATH_MTU,
                    NULL, 0))
    return -1;
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 100;
  a.timeout = 14;
  a.retry_cnt = 7;
  return mrc_modify_qp(s->qp, &a,
                       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                           IBV_QP_RETRY_CNT,
                       NULL, 0);
}

static int post_write(struct side *s, const struct side *peer, uint64_t id,
                      uint32_t rkey, int imm) {
  struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = MSG, .lkey = s->mr->lkey};
  struct ibv_send_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1,
                           .send_flags = IBV_SEND_SIGNALED};
  wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  wr.imm_data = htonl(0xC0FFEE);
  wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
  wr.wr.rdma.rkey = rkey;
  struct ibv_send_wr *bad;
  return mrc_post_send(s->qp, &wr, &bad);
}

/* Sleep on the side's channel for one event of its CQ, ack it, and take
 * one completion. */
static int wake_for_completion(struct side *s, struct ibv_wc *wc) {
  if (!readable(s->ch_fd, WAIT_MS))
    return -1;
  struct mrc_cq *cq;
  void *cq_ctx;
  if (mrc_get_cq_event(s->ch, &cq, &cq_ctx) || cq != s->cq || cq_ctx != s)
    return -2;
  mrc_ack_cq_events(cq, 1);
  return mrc_poll_cq(s->cq, 1, wc) == 1 ? 0 : -3;
}

/* Spin on the CQ (the program drives the NIC) for one completion. */
static int spin_for_completion(struct side *s, struct ibv_wc *wc) {
  for (int i = 0; i < WAIT_MS * 100; i++) {
    int n = mrc_poll_cq(s->cq, 1, wc);
    if (n)
      return n == 1 ? 0 : -1;
    if (i % 100 == 0) {
      struct pollfd none;
      poll(&none, 0, 1);
    }
  }
  return -1;
}

int main(void) {
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  if (!list || n != 2) {
    fprintf(stderr, "events.c: MRC_DEVICE must name two devices\n");
    return 100;
  }
  struct side a, b;
  if (open_side(list[0], &a, 0) || open_side(list[1], &b, 1) || connect_to(&a, &b) ||
      connect_to(&b, &a)) {
    fprintf(stderr, "events.c: setup failed (errno %d)\n", errno);
    return 100;
  }
  for (int i = 0; i < MSG; i++)
    a.buf[i] = (char)(i * 7 + 1);

  /* 1. Both sides armed, both asleep: the receiver wakes for the
   * WRITE-with-immediate's receive, the sender for its completion. */
  struct ibv_recv_wr rwr = {.wr_id = 77};
  struct ibv_recv_wr *rbad;
  CHECK(mrc_post_recv(b.qp, &rwr, &rbad) == 0);
  CHECK(mrc_req_notify_cq(a.cq, 0) == 0);
  CHECK(mrc_req_notify_cq(b.cq, 0) == 0);
  CHECK(post_write(&a, &b, 1, b.mr->rkey, 1) == 0);
  struct ibv_wc wc;
  CHECK(wake_for_completion(&b, &wc) == 0);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
        wc.wr_id == 77 && ntohl(wc.imm_data) == 0xC0FFEE && wc.qp_num == b.qpn);
  CHECK(memcmp(a.buf, b.buf, MSG) == 0);
  CHECK(wake_for_completion(&a, &wc) == 0);
  CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && wc.opcode == IBV_WC_RDMA_WRITE);

  /* 1b. A WRITE-with-immediate of no bytes and no SGE (the immediate
   * alone): the receiver gets the immediate, byte_len 0. */
  CHECK(mrc_post_recv(b.qp, &rwr, &rbad) == 0);
  {
    struct ibv_send_wr z = {.wr_id = 9, .num_sge = 0,
                            .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                            .send_flags = IBV_SEND_SIGNALED};
    z.imm_data = htonl(0xABCD);
    z.wr.rdma.remote_addr = (uintptr_t)b.buf;
    z.wr.rdma.rkey = b.mr->rkey;
    struct ibv_send_wr *zbad;
    CHECK(mrc_post_send(a.qp, &z, &zbad) == 0);
    CHECK(spin_for_completion(&b, &wc) == 0 &&
          wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == 0 &&
          ntohl(wc.imm_data) == 0xABCD);
    CHECK(spin_for_completion(&a, &wc) == 0 && wc.wr_id == 9 &&
          wc.status == IBV_WC_SUCCESS);
  }

  /* 1c. Signaling: on A (sq_sig_all 0) an unsignaled WRITE completes
   * silently, so the next completion is the signaled one after it; on B
   * (sq_sig_all 1) an unsignaled WRITE completes. */
  {
    struct ibv_sge sge = {.addr = (uintptr_t)a.buf, .length = 64, .lkey = a.mr->lkey};
    struct ibv_send_wr quiet = {.wr_id = 31, .sg_list = &sge, .num_sge = 1,
                                .opcode = IBV_WR_RDMA_WRITE};
    quiet.wr.rdma.remote_addr = (uintptr_t)b.buf;
    quiet.wr.rdma.rkey = b.mr->rkey;
    struct ibv_send_wr loud = quiet;
    loud.wr_id = 32;
    loud.send_flags = IBV_SEND_SIGNALED;
    quiet.next = &loud;
    struct ibv_send_wr *qbad;
    CHECK(mrc_post_send(a.qp, &quiet, &qbad) == 0);
    CHECK(spin_for_completion(&a, &wc) == 0 && wc.wr_id == 32 &&
          wc.status == IBV_WC_SUCCESS);
    struct ibv_sge bsge = {.addr = (uintptr_t)b.buf, .length = 64, .lkey = b.mr->lkey};
    struct ibv_send_wr bquiet = {.wr_id = 33, .sg_list = &bsge, .num_sge = 1,
                                 .opcode = IBV_WR_RDMA_WRITE};
    bquiet.wr.rdma.remote_addr = (uintptr_t)a.buf;
    bquiet.wr.rdma.rkey = a.mr->rkey;
    CHECK(mrc_post_send(b.qp, &bquiet, &qbad) == 0);
    CHECK(spin_for_completion(&b, &wc) == 0 && wc.wr_id == 33 &&
          wc.status == IBV_WC_SUCCESS);
  }

  /* 1d. The extended device query refuses another device's MRC context. */
  {
    struct mrc_device_attr da;
    int sup = 0;
    errno = 0;
    CHECK(mrc_query_device_ex(a.ctx, b.mctx, &da, &sup) == -1 && errno == EINVAL);
    CHECK(mrc_query_device_ex(a.ctx, a.mctx, &da, &sup) == 0 && sup == 1);
  }

  /* 2. Not armed: the completion comes, no event does. */
  CHECK(post_write(&a, &b, 2, b.mr->rkey, 0) == 0);
  CHECK(spin_for_completion(&a, &wc) == 0 && wc.wr_id == 2 &&
        wc.status == IBV_WC_SUCCESS);
  CHECK(!readable(a.ch_fd, 50));

  /* 3. Armed after the completion arrived: the event fires at once. */
  CHECK(post_write(&a, &b, 3, b.mr->rkey, 0) == 0);
  CHECK(readable(a.ch_fd, 0) == 0);
  /* Wait for the completion to be queued without taking it. */
  for (int i = 0; i < WAIT_MS && !readable(a.ch_fd, 0); i++) {
    CHECK(mrc_req_notify_cq(a.cq, 0) == 0);
    if (readable(a.ch_fd, 1))
      break;
  }
  CHECK(wake_for_completion(&a, &wc) == 0 && wc.wr_id == 3);
  /* Repeated arming left at most one more event queued: drain it. */
  while (readable(a.ch_fd, 0)) {
    struct mrc_cq *cq;
    void *cq_ctx;
    if (mrc_get_cq_event(a.ch, &cq, &cq_ctx))
      break;
    mrc_ack_cq_events(cq, 1);
  }

  /* 4. A WRITE the peer refuses (bad rkey): an error completion, the QP
   * in ERR, and IBV_EVENT_QP_FATAL on A's context. */
  CHECK(post_write(&a, &b, 4, b.mr->rkey ^ 0x5a5a00, 0) == 0);
  CHECK(spin_for_completion(&a, &wc) == 0 && wc.wr_id == 4 &&
        wc.status == IBV_WC_REM_ACCESS_ERR);
  CHECK(readable(a.ctx->async_fd, WAIT_MS));
  struct mrc_async_event ae;
  CHECK(mrc_get_async_event(a.mctx, &ae) == 0 &&
        ae.event_type == IBV_EVENT_QP_FATAL && ae.element.qp == a.qp);
  struct ibv_qp_attr qa;
  CHECK(mrc_query_qp(a.qp, &qa, IBV_QP_STATE, NULL, 0, NULL) == 0 &&
        qa.qp_state == IBV_QPS_ERR);
  CHECK(mrc_destroy_qp(a.qp) == EBUSY); /* the event is not acked */
  mrc_ack_async_event(&ae);
  CHECK(!readable(a.ctx->async_fd, 0)); /* once, not per completion */

  /* 5. Objects destroyed with events still queued: the events go with
   * them, and nothing hands out the freed objects afterwards. Both QPs
   * back through RST to RTS first. */
  qa.qp_state = IBV_QPS_RESET;
  CHECK(mrc_modify_qp(a.qp, &qa, IBV_QP_STATE, NULL, 0) == 0);
  CHECK(mrc_modify_qp(b.qp, &qa, IBV_QP_STATE, NULL, 0) == 0);
  CHECK(connect_to(&a, &b) == 0 && connect_to(&b, &a) == 0);
  /* B: a receive's event on its channel, not taken. */
  CHECK(mrc_req_notify_cq(b.cq, 0) == 0);
  CHECK(mrc_post_recv(b.qp, &rwr, &rbad) == 0);
  CHECK(post_write(&a, &b, 5, b.mr->rkey, 1) == 0);
  CHECK(readable(b.ch_fd, WAIT_MS));
  CHECK(spin_for_completion(&b, &wc) == 0 && wc.wr_id == 77);
  CHECK(spin_for_completion(&a, &wc) == 0 && wc.wr_id == 5);
  /* A: another refused WRITE, its QP_FATAL not taken when the QP goes. */
  CHECK(post_write(&a, &b, 6, b.mr->rkey ^ 0x5a5a00, 0) == 0);
  CHECK(spin_for_completion(&a, &wc) == 0 && wc.status == IBV_WC_REM_ACCESS_ERR);
  CHECK(readable(a.ctx->async_fd, WAIT_MS));
  CHECK(mrc_destroy_qp(a.qp) == 0);
  CHECK(fcntl(a.ctx->async_fd, F_SETFL, fcntl(a.ctx->async_fd, F_GETFL) | O_NONBLOCK) == 0);
  errno = 0;
  CHECK(mrc_get_async_event(a.mctx, &ae) == -1 && errno == EAGAIN);
  /* B's QP and CQ go with the event still on the channel. */
  CHECK(mrc_destroy_qp(b.qp) == 0);
  CHECK(mrc_destroy_cq(b.cq) == 0);
  CHECK(fcntl(b.ch_fd, F_SETFL, fcntl(b.ch_fd, F_GETFL) | O_NONBLOCK) == 0);
  struct mrc_cq *gone_cq = NULL;
  void *gone_ctx = NULL;
  errno = 0;
  CHECK(mrc_get_cq_event(b.ch, &gone_cq, &gone_ctx) == -1 && errno == EAGAIN);

  /* Everything else goes, in order. */
  struct side *sides[] = {&a, &b};
  for (int i = 0; i < 2; i++) {
    struct side *s = sides[i];
    if (s == &a)
      CHECK(mrc_destroy_cq(s->cq) == 0);
    CHECK(mrc_destroy_comp_channel(s->ch) == 0);
    CHECK(ibv_dereg_mr(s->mr) == 0);
    CHECK(ibv_dealloc_pd(s->pd) == 0);
    CHECK(mrc_destroy_context(s->mctx) == 0);
    CHECK(ibv_close_device(s->ctx) == 0);
    free(s->buf);
  }
  ibv_free_device_list(list);
  if (failed == 0)
    printf("events: all checks passed\n");
  return failed;
}
