# IP generation for the Alveo builds (non-project mode). Sourced by
# build.tcl after board.tcl has set:
#   mrc_part, mrc_pcie_blk_locn, mrc_pcie_quad, mrc_cmac_site,
#   mrc_cmac_gt_group, mrc_cmac_lanes (list of 4 GT channels)
# and `ip_dir` (where the generated IP goes).
#
# PCIe DMA: XDMA in AXI-bridge mode (PG194), not QDMA. Why: the core is a
# bus master with its own descriptors (it decides what to read and write
# in host memory: WQEs, payload, completions), so it needs a plain "memory
# window onto the host" (the bridge's S_AXI_B slave: an AXI transaction at
# address A becomes a PCIe memory request at A), and BAR0 as an AXI master
# for its CSRs (M_AXI_B). XDMA's DMA mode and QDMA bring their own
# descriptor engines and queues, which the core would have to drive through
# a second descriptor format; the bridge has none. QDMA's bridge mode would
# do as well, but XDMA exists for every Vivado version and card here.
#
# 100G MAC: CMAC USPlus (PG203) on QSFP0, CAUI-4 (4x25G), 512-bit AXI4-Stream
# user interface (USER_INTERFACE AXIS, one frame byte 0 in tdata[7:0], the
# same order as the core), RS-FEC (clause 91) included and enabled at
# runtime by the top: 100GBASE-SR4/CR4 links need it and most switches
# enable it by default on 100G ports. 161.1328125 MHz reference (every card
# here can provide it on QSFP0, see the XDCs).
#
# board.tcl sets mrc_pcie_blk_locn to "" when the card's document does not
# confirm the block; the XDMA's default block for the part then applies.
#
# Parameter names are those of XDMA 4.1 and CMAC USPlus 3.1 as shipped with
# Vivado 2023.2 (the version the Makefile checks); they were not validated
# by Vivado here (no Vivado on this machine): see docs/bitstreams.md.

proc mrc_ip {name module} {
    global ip_dir
    create_ip -name $name -vendor xilinx.com -library ip -module_name $module -dir $ip_dir
}

# ---- XDMA, AXI bridge, Gen3 x16, 512-bit AXI at 250 MHz ----------------
mrc_ip xdma xdma_0
set_property -dict [list \
    CONFIG.functional_mode            {AXI_Bridge} \
    CONFIG.mode_selection             {Advanced} \
    CONFIG.device_port_type           {PCI_Express_Endpoint_device} \
    CONFIG.pl_link_cap_max_link_width {X16} \
    CONFIG.pl_link_cap_max_link_speed {8.0_GT/s} \
    CONFIG.axi_data_width             {512_bit} \
    CONFIG.axisten_freq               {250} \
    CONFIG.axi_addr_width             {64} \
    CONFIG.ref_clk_freq               {100_MHz} \
    CONFIG.pf0_device_id              {9038} \
    CONFIG.pf0_base_class_menu        {Network_controller} \
    CONFIG.pf0_sub_class_interface_menu {Ethernet_controller} \
    CONFIG.pf0_bar0_enabled           {true} \
    CONFIG.pf0_bar0_64bit             {true} \
    CONFIG.pf0_bar0_scale             {Kilobytes} \
    CONFIG.pf0_bar0_size              {64} \
    CONFIG.pciebar2axibar_0           {0x0000000000000000} \
    CONFIG.en_axi_slave_if            {true} \
    CONFIG.en_axi_master_if           {true} \
    CONFIG.axibar_num                 {1} \
    CONFIG.axibar_0                   {0x0000000000000000} \
    CONFIG.axibar_highaddr_0          {0xFFFFFFFFFFFFFFFF} \
    CONFIG.axibar2pciebar_0           {0x0000000000000000} \
    CONFIG.pf0_msi_enabled            {false} \
    CONFIG.pf0_msix_enabled           {false} \
] [get_ips xdma_0]
# The PCIe hard block and first GT quad: only where the board file names
# them (otherwise the IP's default for the part is used; see board.tcl).
if {$mrc_pcie_blk_locn ne ""} {
    set_property -dict [list \
        CONFIG.en_gt_selection {true} \
        CONFIG.pcie_blk_locn   $mrc_pcie_blk_locn \
        CONFIG.select_quad     $mrc_pcie_quad \
    ] [get_ips xdma_0]
}

# ---- CMAC USPlus on QSFP0 ----------------------------------------------
mrc_ip cmac_usplus cmac_0
set_property -dict [list \
    CONFIG.CMAC_CAUI4_MODE     {1} \
    CONFIG.NUM_LANES           {4x25} \
    CONFIG.GT_REF_CLK_FREQ     {161.1328125} \
    CONFIG.USER_INTERFACE      {AXIS} \
    CONFIG.GT_DRP_CLK          {250} \
    CONFIG.INCLUDE_RS_FEC      {1} \
    CONFIG.TX_FLOW_CONTROL     {0} \
    CONFIG.RX_FLOW_CONTROL     {0} \
    CONFIG.ENABLE_PIPELINE_REG {1} \
    CONFIG.CMAC_CORE_SELECT    $mrc_cmac_site \
    CONFIG.GT_GROUP_SELECT     $mrc_cmac_gt_group \
    CONFIG.LANE1_GT_LOC        [lindex $mrc_cmac_lanes 0] \
    CONFIG.LANE2_GT_LOC        [lindex $mrc_cmac_lanes 1] \
    CONFIG.LANE3_GT_LOC        [lindex $mrc_cmac_lanes 2] \
    CONFIG.LANE4_GT_LOC        [lindex $mrc_cmac_lanes 3] \
] [get_ips cmac_0]

# ---- AXI4 clock converter for the DMA path (core clock -> 250 MHz) ------
mrc_ip axi_clock_converter axi_cc_dma
set_property -dict [list \
    CONFIG.PROTOCOL       {AXI4} \
    CONFIG.DATA_WIDTH     {512} \
    CONFIG.ADDR_WIDTH     {64} \
    CONFIG.ID_WIDTH       {4} \
    CONFIG.ACLK_ASYNC     {1} \
    CONFIG.SYNCHRONIZATION_STAGES {3} \
] [get_ips axi_cc_dma]

# ---- BAR0: AXI4 (32-bit, after axi_dw_bar) -> AXI4-Lite at 250 MHz ------
mrc_ip axi_protocol_converter axi_pc_bar
set_property -dict [list \
    CONFIG.SI_PROTOCOL {AXI4} \
    CONFIG.MI_PROTOCOL {AXI4LITE} \
    CONFIG.DATA_WIDTH  {32} \
    CONFIG.ADDR_WIDTH  {32} \
    CONFIG.ID_WIDTH    {0} \
    CONFIG.TRANSLATION_MODE {2} \
] [get_ips axi_pc_bar]
# The XDMA master is 512 bits wide: a data-width converter sits between it
# and the protocol converter.
mrc_ip axi_dwidth_converter axi_dw_bar
set_property -dict [list \
    CONFIG.PROTOCOL    {AXI4} \
    CONFIG.SI_DATA_WIDTH {512} \
    CONFIG.MI_DATA_WIDTH {32} \
    CONFIG.ADDR_WIDTH  {32} \
    CONFIG.SI_ID_WIDTH {4} \
] [get_ips axi_dw_bar]

# ---- AXI4-Lite clock converter for the CSRs (250 MHz -> core clock) -----
mrc_ip axi_clock_converter axi_cc_csr
set_property -dict [list \
    CONFIG.PROTOCOL   {AXI4LITE} \
    CONFIG.DATA_WIDTH {32} \
    CONFIG.ADDR_WIDTH {32} \
    CONFIG.ACLK_ASYNC {1} \
] [get_ips axi_cc_csr]

# Generate and synthesize every IP out of context (non-project flow).
set mrc_ips [get_ips]
generate_target all $mrc_ips
synth_ip $mrc_ips
