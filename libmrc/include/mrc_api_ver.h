/*
 * mrc_api_ver.h - libmrc API version numbers, as implemented by the Open
 * MRC project (lib_mrc.so). Written for this project from the public
 * facts of the OCP MRC API (macro names and values); see docs/host.md.
 *
 * A version is MAJOR.MINOR.SUBMINOR packed into 32 bits (8.8.16). A
 * program may define MRC_API_VER_USED before including mrc.h to compile
 * against an older API; by default it gets the newest this library has.
 *
 * SPDX-License-Identifier: Apache-2.0 OR MIT
 */
#ifndef MRC_API_VER_H
#define MRC_API_VER_H

#define MRC_API_VER_MAJOR_OFFSET 24
#define MRC_API_VER_MINOR_OFFSET 16
#define MRC_API_VER_SUBMINOR_OFFSET 0

#define MRC_API_VER(major, minor, subminor)                                    \
  (((major) << MRC_API_VER_MAJOR_OFFSET) |                                     \
   ((minor) << MRC_API_VER_MINOR_OFFSET) |                                     \
   ((subminor) << MRC_API_VER_SUBMINOR_OFFSET))

/* "Whatever is newest": resolved to the current version below. */
#define MRC_API_VER_LATEST MRC_API_VER(0xFF, 0xFF, 0xFFFF)

/* The API this library implements, and the oldest it still accepts. */
#define MRC_API_CURRENT_VERSION MRC_API_VER(1, 0, 1)
#define MRC_API_LAST_SUPPORTED_VERSION MRC_API_VER(0, 0, 0)

#if !defined(MRC_API_VER_USED) || MRC_API_VER_USED == MRC_API_VER_LATEST
#undef MRC_API_VER_USED
#define MRC_API_VER_USED MRC_API_CURRENT_VERSION
#endif
#if MRC_API_VER_USED > MRC_API_CURRENT_VERSION
#error "MRC_API_VER_USED is newer than this libmrc (MRC_API_CURRENT_VERSION)"
#endif

/* Provider ("vendor") extensions: this library has none beyond the
 * version number itself. */
#define MRC_VENDOR_API_CURRENT_VERSION MRC_API_VER(1, 0, 0)
#define MRC_VENDOR_API_LAST_SUPPORTED_VERSION MRC_API_VER(0, 0, 0)

#if !defined(MRC_VENDOR_API_VER_USED) ||                                       \
    MRC_VENDOR_API_VER_USED == MRC_API_VER_LATEST
#undef MRC_VENDOR_API_VER_USED
#define MRC_VENDOR_API_VER_USED MRC_VENDOR_API_CURRENT_VERSION
#endif
#if MRC_VENDOR_API_VER_USED > MRC_VENDOR_API_CURRENT_VERSION
#error "MRC_VENDOR_API_VER_USED is newer than this libmrc"
#endif

#endif /* MRC_API_VER_H */
