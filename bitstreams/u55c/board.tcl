# Alveo U55C (UG1469, "Alveo U55C Data Center Accelerator Card User
# Guide"). Sourced by common/build.tcl.
set mrc_board   u55c
set mrc_part    xcu55c-fsvh2892-2L-e
set mrc_defines {MRC_BOARD_U55C}
set mrc_xdc     [list u55c.xdc]
# PCIe: Gen3 x16, reference clock on quad 225 (u55c.xdc). TODO (UG1469
# "PCIe"): hard block site not confirmed here; XDMA default used.
set mrc_pcie_blk_locn ""
set mrc_pcie_quad     ""
# QSFP0 = GTY quad 130 (reference clock MGTREFCLK0_130, u55c.xdc), channels
# X0Y24-X0Y27 (quad 134 is X0Y40 on this die, four channels per quad
# below it), CMACE4_X0Y3. Only one public design confirms the CMAC site and
# the channel range for this card: TODO verify against UG1469's QSFP28
# section or Vivado's CMAC site list for xcu55c before the first build.
set mrc_cmac_site     CMACE4_X0Y3
set mrc_cmac_gt_group {X0Y24~X0Y27}
set mrc_cmac_lanes    {X0Y24 X0Y25 X0Y26 X0Y27}
