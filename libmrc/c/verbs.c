/*
 * The libibverbs objects libmrc needs, for our devices: device list and
 * names, open/close, GID query, PD, MR registration, ibv_wc_status_str.
 * Compiled against the system's <infiniband/verbs.h>, so every struct has
 * the layout programs were compiled with; exported with the symbol
 * versions of rdma-core's libibverbs (libmrc/libmrc.map). Other verbs
 * (QPs, CQs of libibverbs itself) are not provided: MRC QPs and CQs are
 * libmrc's.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

struct mrc_ibv_device {
  struct ibv_device dev;
  int index;
};

struct mrc_ibv_mr {
  struct ibv_mr mr;
  void *rs;
};

struct ibv_device **ibv_get_device_list(int *num_devices) {
  int n = mrcx_device_count();
  struct ibv_device **list = calloc((size_t)n + 1, sizeof(*list));
  if (!list) {
    errno = ENOMEM;
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    struct mrc_ibv_device *d = calloc(1, sizeof(*d));
    if (!d) {
      for (int j = 0; j < i; j++)
        free(list[j]);
      free(list);
      errno = ENOMEM;
      return NULL;
    }
    d->index = i;
    d->dev.node_type = IBV_NODE_CA;
    d->dev.transport_type = IBV_TRANSPORT_IB;
    mrcx_device_name(i, d->dev.name, sizeof(d->dev.name));
    snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "%s", d->dev.name);
    list[i] = &d->dev;
  }
  if (num_devices)
    *num_devices = n;
  return list;
}

void ibv_free_device_list(struct ibv_device **list) {
  if (!list)
    return;
  for (struct ibv_device **d = list; *d; d++)
    free(*d);
  free(list);
}

const char *ibv_get_device_name(struct ibv_device *device) {
  return device ? device->name : NULL;
}

struct ibv_context *ibv_open_device(struct ibv_device *device) {
  if (!device) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_ibv_device *d = (struct mrc_ibv_device *)device;
  void *rs = mrcx_open(d->index);
  if (!rs) {
    errno = ENODEV;
    return NULL;
  }
  struct mrc_ibv_context *c = calloc(1, sizeof(*c));
  if (!c) {
    mrcx_close(rs);
    errno = ENOMEM;
    return NULL;
  }
  c->ctx.device = device;
  c->ctx.cmd_fd = -1;
  c->ctx.async_fd = -1;
  c->ctx.num_comp_vectors = 1;
  pthread_mutex_init(&c->ctx.mutex, NULL);
  c->magic = MRC_CONTEXT_MAGIC;
  c->rs = rs;
  return &c->ctx;
}

int ibv_close_device(struct ibv_context *context) {
  if (!context)
    return EINVAL;
  struct mrc_ibv_context *c = (struct mrc_ibv_context *)context;
  if (c->magic != MRC_CONTEXT_MAGIC)
    return EINVAL;
  c->magic = 0;
  mrcx_close(c->rs);
  pthread_mutex_destroy(&c->ctx.mutex);
  free(c);
  return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
                  union ibv_gid *gid) {
  /* One port; every GID index names the device's address (RoCE v2). */
  if (!context || !gid || port_num != 1 || index < 0 || index > 255)
    return EINVAL;
  struct mrc_ibv_context *c = (struct mrc_ibv_context *)context;
  if (c->magic != MRC_CONTEXT_MAGIC)
    return EINVAL;
  return mrcx_gid(c->rs, gid->raw);
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context) {
  struct mrc_ibv_context *c = (struct mrc_ibv_context *)context;
  if (!c || c->magic != MRC_CONTEXT_MAGIC) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_ibv_pd *p = calloc(1, sizeof(*p));
  if (!p) {
    errno = ENOMEM;
    return NULL;
  }
  p->rs = mrcx_alloc_pd(c->rs);
  if (!p->rs) {
    free(p);
    errno = ENOMEM;
    return NULL;
  }
  p->pd.context = context;
  return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd) {
  if (!pd)
    return EINVAL;
  struct mrc_ibv_pd *p = (struct mrc_ibv_pd *)pd;
  mrcx_dealloc_pd(p->rs);
  free(p);
  return 0;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length,
                             unsigned int access) {
  if (!pd || !addr || length == 0) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_ibv_pd *p = (struct mrc_ibv_pd *)pd;
  struct mrc_ibv_mr *m = calloc(1, sizeof(*m));
  if (!m) {
    errno = ENOMEM;
    return NULL;
  }
  int remote = (access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                          IBV_ACCESS_REMOTE_ATOMIC)) != 0;
  m->rs = mrcx_reg_mr(p->rs, addr, length, remote, &m->mr.lkey, &m->mr.rkey);
  if (!m->rs) {
    free(m);
    errno = ENOMEM;
    return NULL;
  }
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = m->mr.lkey;
  return &m->mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
                          int access) {
  return reg_mr(pd, addr, length, (unsigned int)access);
}

/* The soft NIC addresses memory by its host address: an IOVA other than
 * `addr` cannot be given. */
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
                                uint64_t iova, unsigned int access) {
  if (iova != (uint64_t)(uintptr_t)addr) {
    errno = EOPNOTSUPP;
    return NULL;
  }
  return reg_mr(pd, addr, length, access);
}

int ibv_dereg_mr(struct ibv_mr *mr) {
  if (!mr)
    return EINVAL;
  struct mrc_ibv_mr *m = (struct mrc_ibv_mr *)mr;
  int rc = mrcx_dereg_mr(m->rs);
  free(m);
  return rc;
}

const char *ibv_wc_status_str(enum ibv_wc_status status) {
  static const char *const names[] = {
      [IBV_WC_SUCCESS] = "success",
      [IBV_WC_LOC_LEN_ERR] = "local length error",
      [IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
      [IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
      [IBV_WC_LOC_PROT_ERR] = "local protection error",
      [IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
      [IBV_WC_MW_BIND_ERR] = "memory management operation error",
      [IBV_WC_BAD_RESP_ERR] = "bad response error",
      [IBV_WC_LOC_ACCESS_ERR] = "local access error",
      [IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
      [IBV_WC_REM_ACCESS_ERR] = "remote access error",
      [IBV_WC_REM_OP_ERR] = "remote operation error",
      [IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
      [IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
      [IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
      [IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
      [IBV_WC_REM_ABORT_ERR] = "aborted error",
      [IBV_WC_INV_EECN_ERR] = "invalid EE context number",
      [IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
      [IBV_WC_FATAL_ERR] = "fatal error",
      [IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
      [IBV_WC_GENERAL_ERR] = "general error",
  };
  if ((unsigned)status < sizeof(names) / sizeof(names[0]) && names[status])
    return names[status];
  return "unknown";
}
