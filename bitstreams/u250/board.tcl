# Alveo U250 (UG1289, "Alveo U200 and U250 Data Center Accelerator Cards
# User Guide"). Sourced by common/build.tcl.
set mrc_board   u250
set mrc_part    xcu250-figd2104-2L-e
set mrc_defines {MRC_BOARD_U250}
set mrc_xdc     [list u250.xdc]
# PCIe: Gen3 x16 on GTY quads 224-227, reference clock on quad 226 (see
# u250.xdc). TODO (UG1289 "PCI Express Interface" / the card's board
# files): the PCIe hard block site is not confirmed here, so the XDMA's
# default block for the part is used.
set mrc_pcie_blk_locn ""
set mrc_pcie_quad     ""
# QSFP0 = GTY quad 231, channels X1Y44-X1Y47, next to CMACE4_X0Y8
# (UG1289 QSFP28 section; the same site/group as Corundum's AU250 100G
# build).
set mrc_cmac_site     CMACE4_X0Y8
set mrc_cmac_gt_group {X1Y44~X1Y47}
set mrc_cmac_lanes    {X1Y44 X1Y45 X1Y46 X1Y47}
