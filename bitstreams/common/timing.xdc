# Board-independent timing constraints for mrc_alveo_top.
#
# Clocks: the PCIe and QSFP reference clocks are created in each board's
# XDC; the XDMA (axi_aclk, 250 MHz) and the CMAC (gt_txusrclk2,
# 322.265625 MHz, the core clock) create their generated clocks in their
# own IP constraints.
#
# Crossings between those two domains go only through the AXI clock
# converters (axi_cc_dma, axi_cc_csr), whose IP constraints bound the
# synchronizer paths with set_max_delay -datapath_only. No set_clock_groups
# here on purpose: it would take precedence over those max-delay
# constraints and leave the Gray-coded pointers unconstrained.
#
# The CMAC's sys_reset is driven from the 250 MHz domain (~axi_aresetn) and
# is an asynchronous reset input of the IP (PG203); it is not timed.
set_false_path -through [get_nets cmac_sys_reset]
