/*
 * The binary interface of mrc.h: struct sizes, field offsets and the
 * values of its enums and macros, as the public OCP MRC API lays them out
 * (a program compiled against another libmrc's header must find the same
 * bytes here). Checked at compile time on LP64 targets; built and run by
 * libmrc/tests/ocp_benchmark.rs. Exit status 0.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mrc.h"

#define ABI(cond) _Static_assert(cond, #cond)

#if defined(__LP64__)
ABI(sizeof(struct mrc_device_attr) == 20);
ABI(offsetof(struct mrc_device_attr, mrc_protocol_version) == 0);
ABI(offsetof(struct mrc_device_attr, wimm_attr.max_wimm) == 4);
ABI(offsetof(struct mrc_device_attr, wimm_attr.max_wimm_dest) == 6);
ABI(offsetof(struct mrc_device_attr, mpr_attr.max_mpr) == 8);
ABI(offsetof(struct mrc_device_attr, mpr_attr.mpr_resolution) == 9);
ABI(offsetof(struct mrc_device_attr, qp_attr.max_qp_hint) == 12);
ABI(offsetof(struct mrc_device_attr, cap) == 16);
ABI(sizeof(struct mrc_context_attr) == 8);
ABI(offsetof(struct mrc_context_attr, mrc_api_version_used) == 0);
ABI(offsetof(struct mrc_context_attr, mrc_vendor_api_version_used) == 4);
ABI(sizeof(struct mrc_qp_hint_attr) == 140);
ABI(offsetof(struct mrc_qp_hint_attr, num_qps_per_peer) == 0);
ABI(offsetof(struct mrc_qp_hint_attr, num_send_peers) == 4);
ABI(offsetof(struct mrc_qp_hint_attr, num_remote_recv_peers) == 8);
ABI(offsetof(struct mrc_qp_hint_attr, vendor_cfg) == 12);
ABI(sizeof(struct mrc_qp_hint_init_attr) == 140);
ABI(sizeof(struct mrc_qp_init_attr) == 72);
ABI(offsetof(struct mrc_qp_init_attr, qp_context) == 0);
ABI(offsetof(struct mrc_qp_init_attr, send_cq) == 8);
ABI(offsetof(struct mrc_qp_init_attr, recv_cq) == 16);
ABI(offsetof(struct mrc_qp_init_attr, cap) == 24);
ABI(offsetof(struct mrc_qp_init_attr, sq_sig_all) == 44);
ABI(offsetof(struct mrc_qp_init_attr, pd) == 48);
ABI(offsetof(struct mrc_qp_init_attr, send_ops_flags) == 56);
ABI(offsetof(struct mrc_qp_init_attr, protocol_version) == 64);
ABI(sizeof(struct mrc_qp_attr) == 176);
ABI(offsetof(struct mrc_qp_attr, mpr.mpr) == 0);
ABI(offsetof(struct mrc_qp_attr, mpr.mpr_dest) == 1);
ABI(offsetof(struct mrc_qp_attr, wimm.max_wimm) == 2);
ABI(offsetof(struct mrc_qp_attr, wimm.max_wimm_dest) == 4);
ABI(offsetof(struct mrc_qp_attr, timeout) == 6);
ABI(offsetof(struct mrc_qp_attr, profile.ev_profile_id) == 8);
ABI(offsetof(struct mrc_qp_attr, profile.cc_profile_id) == 16);
ABI(offsetof(struct mrc_qp_attr, retry.linear_cnt) == 24);
ABI(offsetof(struct mrc_qp_attr, retry.exp_cnt) == 25);
ABI(offsetof(struct mrc_qp_attr, qp_hint) == 32);
ABI(offsetof(struct mrc_qp_attr, cap) == 40);
ABI(offsetof(struct mrc_qp_attr, vendor_cfg) == 44);
ABI(sizeof(struct mrc_async_event) == 16);
ABI(offsetof(struct mrc_async_event, element) == 0);
ABI(offsetof(struct mrc_async_event, event_type) == 8);
ABI(MRC_MAX_VENDOR_CFG_SIZE == 128);
ABI(MRC_PROTOCOL_VERSION_0 == 0);
ABI(MRC_PROTOCOL_VERSION_1 == 1);
ABI(MRC_DEVICE_CAP_TRIM_NACK == 1);
ABI(MRC_DEVICE_CAP_DYNAMIC_MPR == 2);
ABI(MRC_DEVICE_CAP_SVC_TIME == 4);
ABI(MRC_QP_HINT_NUM_QPS_PER_PEER == 1);
ABI(MRC_QP_HINT_NUM_SEND_PEERS == 2);
ABI(MRC_QP_HINT_NUM_REMOTE_RECV_PEERS == 4);
ABI((uint32_t)MRC_QP_HINT_VENDOR_CFG == 1u << 31);
ABI(MRC_QP_MAX_WIMM == 1);
ABI(MRC_QP_MAX_WIMM_DEST == 2);
ABI(MRC_QP_MPR == 4);
ABI(MRC_QP_MPR_DEST == 8);
ABI(MRC_QP_TIMEOUT == 16);
ABI(MRC_QP_EV_PROFILE_ID == 32);
ABI(MRC_QP_CC_PROFILE_ID == 64);
ABI(MRC_QP_HINT == 128);
ABI(MRC_QP_RETRY_CNT == 256);
ABI(MRC_QP_CAP == 512);
ABI((uint32_t)MRC_QP_VENDOR_CFG == 1u << 31);
ABI(MRC_QP_CAP_TRIM_NACK_DEST_UNSUPPORTED == 1);
ABI(MRC_QP_CAP_DYNAMIC_MPR == 2);
ABI(MRC_QP_CAP_SVC_TIME_DEST_UNSUPPORTED == 4);
ABI(MRC_API_CURRENT_VERSION == 16777217);
ABI(MRC_API_LAST_SUPPORTED_VERSION == 0);
ABI(MRC_VENDOR_API_CURRENT_VERSION == 16777216);
ABI(MRC_VENDOR_API_LAST_SUPPORTED_VERSION == 0);
ABI(MRC_API_VER_LATEST == 0xFFFFFFFFu);
ABI(MRC_API_VER(1, 2, 3) == 0x01020003);
#endif

int main(void) {
  printf("abi: mrc.h lays out as the public API\n");
  return 0;
}
