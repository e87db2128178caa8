/*
 * mrc_ctl_api_ver.h - version numbers of the MRC control API (mrc_ctl.h),
 * libmrc as implemented by the Open MRC project (lib_mrc.so).
 *
 * Written for this project from the public facts of the OCP MRC API
 * (macro names and values); see docs/host.md, "mrc_ctl.h".
 *
 * A version is MAJOR.MINOR.SUBMINOR packed into 32 bits. A program picks
 * the version it is written for with MRC_CTL_API_VER_USED before
 * including mrc_ctl.h (default: the current one); the layout of some
 * structures depends on it.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#ifndef MRC_CTL_API_VER_H
#define MRC_CTL_API_VER_H

#define MRC_CTL_API_VER_MAJOR_OFFSET 24
#define MRC_CTL_API_VER_MINOR_OFFSET 16
#define MRC_CTL_API_VER_SUBMINOR_OFFSET 0

#define MRC_CTL_API_VER(major, minor, subminor)                                \
  (((major) << MRC_CTL_API_VER_MAJOR_OFFSET) |                                 \
   ((minor) << MRC_CTL_API_VER_MINOR_OFFSET) |                                 \
   ((subminor) << MRC_CTL_API_VER_SUBMINOR_OFFSET))

/* "Whatever this header's current version is." */
#define MRC_CTL_API_VER_LATEST MRC_CTL_API_VER(0xFF, 0xFF, 0xFFFF)

#define MRC_CTL_API_CURRENT_VERSION MRC_CTL_API_VER(1, 0, 1)
#define MRC_CTL_API_LAST_SUPPORTED_VERSION MRC_CTL_API_VER(0, 0, 0)

#ifndef MRC_CTL_API_VER_USED
#define MRC_CTL_API_VER_USED MRC_CTL_API_CURRENT_VERSION
#elif MRC_CTL_API_VER_USED == MRC_CTL_API_VER_LATEST
#undef MRC_CTL_API_VER_USED
#define MRC_CTL_API_VER_USED MRC_CTL_API_CURRENT_VERSION
#endif

#if MRC_CTL_API_VER_USED > MRC_CTL_API_CURRENT_VERSION
#error "mrc_ctl_api_ver.h: MRC_CTL_API_VER_USED is newer than this header"
#elif MRC_CTL_API_VER_USED < MRC_CTL_API_LAST_SUPPORTED_VERSION
#error "mrc_ctl_api_ver.h: MRC_CTL_API_VER_USED is older than supported"
#elif MRC_CTL_API_VER_USED == MRC_CTL_API_LAST_SUPPORTED_VERSION
#warning "mrc_ctl_api_ver.h: MRC_CTL_API_VER_USED is the oldest version supported"
#endif

/* The vendor's own control API, versioned the same way. */
#define MRC_CTL_VENDOR_API_CURRENT_VERSION MRC_CTL_API_VER(1, 0, 0)
#define MRC_CTL_VENDOR_API_LAST_SUPPORTED_VERSION MRC_CTL_API_VER(0, 0, 0)

#ifndef MRC_CTL_VENDOR_API_VER_USED
#define MRC_CTL_VENDOR_API_VER_USED MRC_CTL_VENDOR_API_CURRENT_VERSION
#elif MRC_CTL_VENDOR_API_VER_USED == MRC_CTL_API_VER_LATEST
#undef MRC_CTL_VENDOR_API_VER_USED
#define MRC_CTL_VENDOR_API_VER_USED MRC_CTL_VENDOR_API_CURRENT_VERSION
#endif

#if MRC_CTL_VENDOR_API_VER_USED > MRC_CTL_VENDOR_API_CURRENT_VERSION
#error "mrc_ctl_api_ver.h: MRC_CTL_VENDOR_API_VER_USED is newer than this header"
#elif MRC_CTL_VENDOR_API_VER_USED < MRC_CTL_VENDOR_API_LAST_SUPPORTED_VERSION
#error "mrc_ctl_api_ver.h: MRC_CTL_VENDOR_API_VER_USED is older than supported"
#elif MRC_CTL_VENDOR_API_VER_USED == MRC_CTL_VENDOR_API_LAST_SUPPORTED_VERSION
#warning "mrc_ctl_api_ver.h: MRC_CTL_VENDOR_API_VER_USED is the oldest version supported"
#endif

#endif /* MRC_CTL_API_VER_H */
