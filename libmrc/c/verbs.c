/*
 * The libibverbs objects libmrc needs, for our devices: device list and
 * names, open/close, device, port and GID queries, PD, MR registration,
 * completion channels, ibv_wc_status_str.
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
  /* Readable while an asynchronous event is queued (mrc_get_async_event). */
  c->ctx.async_fd = mrcx_async_fd(rs);
  c->ctx.num_comp_vectors = 1;
  pthread_mutex_init(&c->ctx.mutex, NULL);
  c->magic = MRC_CONTEXT_MAGIC;
  c->rs = rs;
  return &c->ctx;
}

int ibv_close_device(struct ibv_context *context) {
  struct mrc_ibv_context *c = mrc_ours(context);
  if (!c)
    return EINVAL;
  if (mrc_refs(&c->refs))
    return EBUSY;
  c->magic = 0;
  mrcx_close(c->rs);
  pthread_mutex_destroy(&c->ctx.mutex);
  free(c);
  return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
                  union ibv_gid *gid) {
  /* One port; every GID index names the device's address (RoCE v2). */
  struct mrc_ibv_context *c = mrc_ours(context);
  if (!c || !gid || port_num != 1 || index < 0 || index > 255)
    return EINVAL;
  return mrcx_gid(c->rs, gid->raw);
}

/* What the device offers (the driver's limits; mrc.c has the MRC ones). */
enum {
  DEV_MAX_CQE = 1 << 16,
  DEV_MAX_MR = 1 << 16,
  DEV_MAX_PD = 1 << 16,
  DEV_MAX_MR_SIZE_LOG2 = 40,
  DEV_MAX_MSG_SZ = 1u << 31,
};

int ibv_query_device(struct ibv_context *context,
                     struct ibv_device_attr *attr) {
  struct mrc_ibv_context *c = mrc_ours(context);
  if (!c || !attr)
    return EINVAL;
  memset(attr, 0, sizeof(*attr));
  snprintf(attr->fw_ver, sizeof(attr->fw_ver), "open-mrc");
  attr->max_mr_size = 1ull << DEV_MAX_MR_SIZE_LOG2;
  attr->page_size_cap = 4096;
  attr->max_qp = MRC_DEV_MAX_QP;
  attr->max_qp_wr = MRC_DEV_MAX_QP_WR;
  attr->max_sge = 1;
  attr->max_cq = MRC_DEV_MAX_CQ;
  attr->max_cqe = DEV_MAX_CQE;
  attr->max_mr = DEV_MAX_MR;
  attr->max_pd = DEV_MAX_PD;
  attr->max_pkeys = 1;
  attr->phys_port_cnt = 1;
  return 0;
}

/* The largest verbs MTU whose packets fit the network's: the MTU of the
 * interface holding the device's address, less the IP, UDP and MRC
 * headers (the core measures it). */
static enum ibv_mtu ib_mtu(int bytes) {
  if (bytes >= 4096)
    return IBV_MTU_4096;
  if (bytes >= 2048)
    return IBV_MTU_2048;
  if (bytes >= 1024)
    return IBV_MTU_1024;
  if (bytes >= 512)
    return IBV_MTU_512;
  return IBV_MTU_256;
}

/* Called through ___ibv_query_port (verbs.h) with a zeroed struct
 * ibv_port_attr: only its leading (compat) fields are written, up to
 * link_layer. */
#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                   struct _compat_ibv_port_attr *compat) {
  struct ibv_port_attr *attr = (struct ibv_port_attr *)compat;
  struct mrc_ibv_context *c = mrc_ours(context);
  if (!c || !attr || port_num != 1)
    return EINVAL;
  /* Administratively down (mrc_ctl_modify_port): DOWN, and
     its physical state Disabled. */
  int up = mrcx_port_up(c->rs, 0);
  if (up < 0)
    return -up;
  attr->state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = ib_mtu(mrcx_port_mtu(c->rs));
  attr->gid_tbl_len = 1;
  attr->max_msg_sz = DEV_MAX_MSG_SZ;
  attr->pkey_tbl_len = 1;
  attr->max_vl_num = 1;
  attr->active_width = 2; /* 4x */
  attr->active_speed = 32; /* EDR lanes: 4 x 25 Gb/s */
  attr->phys_state = up ? 5 : 3; /* LinkUp, Disabled */
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;
  return 0;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context) {
  struct mrc_ibv_context *c = mrc_ours(context);
  if (!c) {
    errno = EINVAL;
    return NULL;
  }
  struct mrc_ibv_comp_channel *ch = calloc(1, sizeof(*ch));
  if (!ch) {
    errno = ENOMEM;
    return NULL;
  }
  ch->rs = mrcx_channel_create();
  if (!ch->rs) {
    free(ch);
    errno = EMFILE;
    return NULL;
  }
  ch->ch.context = context;
  ch->ch.fd = mrcx_channel_fd(ch->rs);
  mrc_ref(&c->refs);
  return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel) {
  if (!channel)
    return EINVAL;
  struct mrc_ibv_comp_channel *ch = (struct mrc_ibv_comp_channel *)channel;
  if (mrc_refs(&ch->refs))
    return EBUSY;
  mrc_unref(&((struct mrc_ibv_context *)channel->context)->refs);
  mrcx_channel_destroy(ch->rs);
  free(ch);
  return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context) {
  struct mrc_ibv_context *c = mrc_ours(context);
  if (!c) {
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
  mrc_ref(&c->refs);
  return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd) {
  if (!pd)
    return EINVAL;
  struct mrc_ibv_pd *p = (struct mrc_ibv_pd *)pd;
  if (mrc_refs(&p->refs))
    return EBUSY;
  mrc_unref(&((struct mrc_ibv_context *)pd->context)->refs);
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
  mrc_ref(&p->refs);
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
  if (rc) /* EBUSY: WRITEs not yet complete still read it */
    return rc;
  mrc_unref(&((struct mrc_ibv_pd *)mr->pd)->refs);
  free(m);
  return 0;
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
