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
void *mrcx_create_cq(const void *ctx, int entries);
int mrcx_destroy_cq(const void *ctx, void *cq);
void *mrcx_create_qp(const void *ctx, const void *pd, const void *send_cq,
                     const void *recv_cq, uint32_t max_send_wr);
uint32_t mrcx_qpn(const void *qp);
int mrcx_destroy_qp(void *qp);
int mrcx_to_init(const void *qp);
int mrcx_to_rtr(const void *qp, uint32_t dest_qp, uint32_t rq_psn,
                const uint8_t *gid16, uint8_t log2_mtu);
int mrcx_to_rts(const void *qp, uint32_t sq_psn, uint8_t timeout,
                uint8_t retry);
int mrcx_post_write(const void *qp, uint64_t wr_id, uint64_t laddr,
                    uint32_t len, uint32_t lkey, uint64_t raddr,
                    uint32_t rkey, int signaled, int has_imm, uint32_t imm);
int mrcx_post_recv(const void *qp, uint64_t wr_id);
int mrcx_poll(const void *ctx, const void *cq, int max, struct mrcx_wc *out);

/* The verbs objects of our devices (verbs.c), as mrc.c needs them. */
struct mrc_ibv_context {
  struct ibv_context ctx;
  uint32_t magic;
  void *rs;
};
struct mrc_ibv_pd {
  struct ibv_pd pd;
  void *rs;
};
#define MRC_CONTEXT_MAGIC 0x4d524331u /* "MRC1" */

#endif
