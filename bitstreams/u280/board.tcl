# Alveo U280 (UG1314, "Alveo U280 Data Center Accelerator Card User
# Guide"). Sourced by common/build.tcl.
set mrc_board   u280
set mrc_part    xcu280-fsvh2892-2L-e
# No user LEDs confirmed for this card (see u280.xdc).
set mrc_defines {MRC_BOARD_U280 MRC_NO_LEDS}
set mrc_xdc     [list u280.xdc]
# PCIe: Gen3 x16 on GTY quads 224-227, reference clock PCIE_CLK1 on quad
# 225 (u280.xdc). TODO (UG1314 "PCI Express"): hard block site not
# confirmed here; the XDMA's default for the part is used.
set mrc_pcie_blk_locn ""
set mrc_pcie_quad     ""
# QSFP0 = GTY quad 134, channels X0Y40-X0Y43 (UG1314 board XDC: QSFP0 on
# bank 134), CMACE4_X0Y6 (as in Corundum's AU280 100G build).
set mrc_cmac_site     CMACE4_X0Y6
set mrc_cmac_gt_group {X0Y40~X0Y43}
set mrc_cmac_lanes    {X0Y40 X0Y41 X0Y42 X0Y43}
