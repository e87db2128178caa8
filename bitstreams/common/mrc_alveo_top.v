// Board top for the Alveo U250 / U280 / U55C builds (one file for the
// three cards: the port names are the same and each card's XDC places
// them). It joins:
//
//   PCIe  <-> xdma_0 (XDMA in AXI-bridge mode, 512-bit AXI at 250 MHz)
//             S_AXI_B : host memory, mastered by the core through
//                       mrc_dma_axi and an AXI clock converter;
//             M_AXI_B : BAR0 (64 KiB), converted to AXI4-Lite and to the
//                       core clock, to the core's CSR slave.
//   QSFP0 <-> cmac_0 (CMAC USPlus, 100GBASE-R4 with RS-FEC, 512-bit AXIS)
//             <-> the core's MAC RX / MAC TX streams.
//
// Clocking (one core domain): the core, mrc_dma_axi and the CMAC user
// side run on the CMAC's gt_txusrclk2 (322.265625 MHz); the CMAC RX user
// side is clocked by the same clock (rx_clk = gt_txusrclk2, the RX path
// has its own FIFO in the CMAC). The XDMA AXI side runs at 250 MHz
// (axi_aclk); the two AXI clock converters are the only crossings. Their
// async paths are covered by the IPs' own constraints; timing.xdc declares
// the clock groups.
//
// Not here (see docs/bitstreams.md): the CMAC RX stream has no tready, so
// a beat arriving while the core's s_rx$tready is low is lost; it is
// counted as a sticky overrun on a status LED. A packet FIFO in front of
// the core is the fix.
`default_nettype none

module mrc_alveo_top (
    // Board housekeeping, per card (build.tcl defines MRC_BOARD_<CARD>;
    // every port that exists has a pin in that card's XDC).
`ifdef MRC_BOARD_U250
    // QSFP0 reference clock select / reset and module control.
    output wire [1:0]  qsfp0_fs,
    output wire        qsfp0_refclk_reset,
    output wire        qsfp0_resetl,
    output wire        qsfp0_lpmode,
    output wire        qsfp0_modsell,
`endif
`ifdef MRC_BOARD_U280
    // QSFP0 reference clock output enable (low) and frequency select.
    output wire        qsfp0_refclk_oe_b,
    output wire        qsfp0_refclk_fs,
`endif
`ifndef MRC_BOARD_U250
    // HBM catastrophic-temperature output to the satellite controller:
    // must be driven low (high powers the card down).
    output wire        hbm_cattrip,
`endif
    // Status: [0] PCIe link up, [1] CMAC RX aligned, [2] RX overrun. The
    // U280 build defines MRC_NO_LEDS: its user LEDs are not confirmed
    // (docs/bitstreams.md), and a port without a pin fails Vivado's DRC.
`ifndef MRC_NO_LEDS
    output wire [2:0]  led,
`endif
    // PCIe x16 (the serial lanes are placed by the XDMA IP's GT selection)
    input  wire        pcie_refclk_p,
    input  wire        pcie_refclk_n,
    input  wire        pcie_perst_n,
    input  wire [15:0] pcie_rx_p,
    input  wire [15:0] pcie_rx_n,
    output wire [15:0] pcie_tx_p,
    output wire [15:0] pcie_tx_n,
    // QSFP28 cage 0 (four 25G lanes, placed by the CMAC IP's GT selection)
    input  wire        qsfp0_refclk_p,
    input  wire        qsfp0_refclk_n,
    input  wire [3:0]  qsfp0_rx_p,
    input  wire [3:0]  qsfp0_rx_n,
    output wire [3:0]  qsfp0_tx_p,
    output wire [3:0]  qsfp0_tx_n
);

    // ------------------------------------------------------------------
    // Constant board outputs
    // ------------------------------------------------------------------
`ifdef MRC_BOARD_U250
    // UG1289 board XDC: QSFP0 reference from the SI5335, FS = 2'b10
    // selects 161.1328125 MHz; clock chip and module out of reset, full
    // power, module selected.
    assign qsfp0_fs             = 2'b10;
    assign qsfp0_refclk_reset   = 1'b0;
    assign qsfp0_resetl         = 1'b1;
    assign qsfp0_lpmode         = 1'b0;
    assign qsfp0_modsell        = 1'b0;
`endif
`ifdef MRC_BOARD_U280
    // UG1314 board XDC: QSFP0_FS = 0 selects 161.132812 MHz, QSFP0_OEB low
    // enables the clock output.
    assign qsfp0_refclk_oe_b    = 1'b0;
    assign qsfp0_refclk_fs      = 1'b0;
`endif
`ifndef MRC_BOARD_U250
    assign hbm_cattrip          = 1'b0;
`endif

    // ------------------------------------------------------------------
    // PCIe reference clock and reset
    // ------------------------------------------------------------------
    wire pcie_sys_clk;     // ODIV2 copy for the fabric side of the IP
    wire pcie_sys_clk_gt;  // full-rate copy for the GTs
    wire pcie_perst_n_buf;

    IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) pcie_refclk_buf (
        .I(pcie_refclk_p), .IB(pcie_refclk_n), .CEB(1'b0),
        .O(pcie_sys_clk_gt), .ODIV2(pcie_sys_clk)
    );
    IBUF pcie_perst_buf (.I(pcie_perst_n), .O(pcie_perst_n_buf));

    // ------------------------------------------------------------------
    // XDMA (AXI bridge)
    // ------------------------------------------------------------------
    wire         axi_aclk;
    wire         axi_aresetn;
    wire         user_lnk_up;

    // S_AXI_B (slave: host memory), 250 MHz side of the converter.
    wire [3:0]   sb_awid,  sb_arid,  sb_bid,  sb_rid;
    wire [63:0]  sb_awaddr, sb_araddr;
    wire [7:0]   sb_awlen, sb_arlen;
    wire [2:0]   sb_awsize, sb_arsize;
    wire [1:0]   sb_awburst, sb_arburst;
    wire         sb_awvalid, sb_awready, sb_arvalid, sb_arready;
    wire [511:0] sb_wdata, sb_rdata;
    wire [63:0]  sb_wstrb;
    wire         sb_wlast, sb_wvalid, sb_wready;
    wire [1:0]   sb_bresp, sb_rresp;
    wire         sb_bvalid, sb_bready, sb_rlast, sb_rvalid, sb_rready;

    // M_AXI_B (master: BAR0), 250 MHz.
    wire [3:0]   mb_awid, mb_arid, mb_bid, mb_rid;
    wire [63:0]  mb_awaddr, mb_araddr;
    wire [7:0]   mb_awlen, mb_arlen;
    wire [2:0]   mb_awsize, mb_arsize;
    wire [1:0]   mb_awburst, mb_arburst;
    wire [2:0]   mb_awprot, mb_arprot;
    wire         mb_awvalid, mb_awready, mb_arvalid, mb_arready;
    wire [511:0] mb_wdata, mb_rdata;
    wire [63:0]  mb_wstrb;
    wire         mb_wlast, mb_wvalid, mb_wready;
    wire [1:0]   mb_bresp, mb_rresp;
    wire         mb_bvalid, mb_bready, mb_rlast, mb_rvalid, mb_rready;

    xdma_0 pcie (
        .sys_clk(pcie_sys_clk),
        .sys_clk_gt(pcie_sys_clk_gt),
        .sys_rst_n(pcie_perst_n_buf),
        .pci_exp_rxp(pcie_rx_p), .pci_exp_rxn(pcie_rx_n),
        .pci_exp_txp(pcie_tx_p), .pci_exp_txn(pcie_tx_n),
        .user_lnk_up(user_lnk_up),
        .axi_aclk(axi_aclk),
        .axi_aresetn(axi_aresetn),
        .usr_irq_req(1'b0),
        .usr_irq_ack(),
        .msi_enable(),
        .msi_vector_width(),
        // S_AXI_B
        .s_axib_awid(sb_awid), .s_axib_awaddr(sb_awaddr), .s_axib_awregion(4'd0),
        .s_axib_awlen(sb_awlen), .s_axib_awsize(sb_awsize), .s_axib_awburst(sb_awburst),
        .s_axib_awvalid(sb_awvalid), .s_axib_awready(sb_awready),
        .s_axib_wdata(sb_wdata), .s_axib_wstrb(sb_wstrb), .s_axib_wlast(sb_wlast),
        .s_axib_wvalid(sb_wvalid), .s_axib_wready(sb_wready),
        .s_axib_bid(sb_bid), .s_axib_bresp(sb_bresp), .s_axib_bvalid(sb_bvalid), .s_axib_bready(sb_bready),
        .s_axib_arid(sb_arid), .s_axib_araddr(sb_araddr), .s_axib_arregion(4'd0),
        .s_axib_arlen(sb_arlen), .s_axib_arsize(sb_arsize), .s_axib_arburst(sb_arburst),
        .s_axib_arvalid(sb_arvalid), .s_axib_arready(sb_arready),
        .s_axib_rid(sb_rid), .s_axib_rdata(sb_rdata), .s_axib_rresp(sb_rresp), .s_axib_rlast(sb_rlast),
        .s_axib_rvalid(sb_rvalid), .s_axib_rready(sb_rready),
        // M_AXI_B
        .m_axib_awid(mb_awid), .m_axib_awaddr(mb_awaddr), .m_axib_awlen(mb_awlen),
        .m_axib_awsize(mb_awsize), .m_axib_awburst(mb_awburst), .m_axib_awprot(mb_awprot),
        .m_axib_awvalid(mb_awvalid), .m_axib_awready(mb_awready),
        .m_axib_awlock(), .m_axib_awcache(),
        .m_axib_wdata(mb_wdata), .m_axib_wstrb(mb_wstrb), .m_axib_wlast(mb_wlast),
        .m_axib_wvalid(mb_wvalid), .m_axib_wready(mb_wready),
        .m_axib_bid(mb_bid), .m_axib_bresp(mb_bresp), .m_axib_bvalid(mb_bvalid), .m_axib_bready(mb_bready),
        .m_axib_arid(mb_arid), .m_axib_araddr(mb_araddr), .m_axib_arlen(mb_arlen),
        .m_axib_arsize(mb_arsize), .m_axib_arburst(mb_arburst), .m_axib_arprot(mb_arprot),
        .m_axib_arvalid(mb_arvalid), .m_axib_arready(mb_arready),
        .m_axib_arlock(), .m_axib_arcache(),
        .m_axib_rid(mb_rid), .m_axib_rdata(mb_rdata), .m_axib_rresp(mb_rresp), .m_axib_rlast(mb_rlast),
        .m_axib_rvalid(mb_rvalid), .m_axib_rready(mb_rready)
    );

    // ------------------------------------------------------------------
    // CMAC (QSFP0), core clock = gt_txusrclk2
    // ------------------------------------------------------------------
    wire         core_clk;       // 322.265625 MHz
    wire         cmac_tx_reset;  // usr_tx_reset, active high
    wire         cmac_rx_reset;
    wire         stat_rx_aligned;

    wire [511:0] mac_rx_tdata;
    wire [63:0]  mac_rx_tkeep;
    wire         mac_rx_tlast, mac_rx_tvalid;
    wire [511:0] mac_tx_tdata;
    wire [63:0]  mac_tx_tkeep;
    wire         mac_tx_tlast, mac_tx_tvalid, mac_tx_tready;

    // The CMAC's init clock (reset logic and GT DRP): the XDMA's 250 MHz
    // AXI clock, which runs as soon as the PCIe reference clock is present,
    // so no board oscillator pin is needed. TODO (PG203, "Clocking"):
    // confirm 250 MHz is inside init_clk's allowed range for the GTY
    // settings the IP picks; otherwise derive a 100-125 MHz clock with an
    // MMCM from it.
    wire cmac_init_clk = axi_aclk;
    wire cmac_sys_reset = ~axi_aresetn;

    cmac_0 mac (
        .gt_ref_clk_p(qsfp0_refclk_p), .gt_ref_clk_n(qsfp0_refclk_n),
        .gt_rxp_in(qsfp0_rx_p), .gt_rxn_in(qsfp0_rx_n),
        .gt_txp_out(qsfp0_tx_p), .gt_txn_out(qsfp0_tx_n),
        .init_clk(cmac_init_clk),
        .sys_reset(cmac_sys_reset),
        .gt_txusrclk2(core_clk),
        .gt_rxusrclk2(),
        .rx_clk(core_clk),
        .usr_tx_reset(cmac_tx_reset),
        .usr_rx_reset(cmac_rx_reset),
        .core_rx_reset(1'b0), .core_tx_reset(1'b0), .core_drp_reset(1'b0),
        .drp_clk(1'b0), .drp_addr(10'd0), .drp_di(16'd0), .drp_en(1'b0), .drp_we(1'b0),
        .drp_do(), .drp_rdy(),
        .gt_loopback_in(12'd0),
        // RX user interface (no tready: the CMAC cannot be stalled)
        .rx_axis_tvalid(mac_rx_tvalid), .rx_axis_tdata(mac_rx_tdata), .rx_axis_tkeep(mac_rx_tkeep),
        .rx_axis_tlast(mac_rx_tlast), .rx_axis_tuser(),
        // TX user interface
        .tx_axis_tready(mac_tx_tready), .tx_axis_tvalid(mac_tx_tvalid), .tx_axis_tdata(mac_tx_tdata),
        .tx_axis_tkeep(mac_tx_tkeep), .tx_axis_tlast(mac_tx_tlast), .tx_axis_tuser(1'b0),
        .tx_preamblein(56'd0), .rx_preambleout(),
        // Bring-up (PG203 "Core Bring Up Sequence"): RX on; TX sends remote
        // fault indications until RX is aligned, then is enabled.
        .ctl_rx_enable(1'b1),
        .ctl_rx_force_resync(1'b0),
        .ctl_rx_test_pattern(1'b0),
        .ctl_tx_enable(stat_rx_aligned),
        .ctl_tx_send_idle(1'b0),
        .ctl_tx_send_lfi(1'b0),
        .ctl_tx_send_rfi(~stat_rx_aligned),
        .ctl_tx_test_pattern(1'b0),
        // RS-FEC (clause 91) on, IEEE error indication, correction on.
        .ctl_rx_rsfec_enable(1'b1),
        .ctl_rx_rsfec_enable_correction(1'b1),
        .ctl_rx_rsfec_enable_indication(1'b1),
        .ctl_tx_rsfec_enable(1'b1),
        .ctl_rsfec_ieee_error_indication_mode(1'b1),
        .stat_rx_aligned(stat_rx_aligned)
    );

    // Core reset: the CMAC's TX user reset (covers the core clock's
    // startup); the lead's MrcCore has no reset port yet, so it is only
    // used for the top's own registers.
    reg [2:0] core_rst_sync = 3'b111;
    always @(posedge core_clk) core_rst_sync <= {core_rst_sync[1:0], cmac_tx_reset};
    wire core_rst = core_rst_sync[2];

    // ------------------------------------------------------------------
    // AXI clock converters (250 MHz <-> core clock)
    // ------------------------------------------------------------------
    // Core side of the DMA path (mrc_dma_axi <-> converter).
    wire [63:0]  da_awaddr, da_araddr;
    wire [7:0]   da_awlen, da_arlen;
    wire         da_awvalid, da_awready, da_arvalid, da_arready;
    wire [511:0] da_wdata, da_rdata;
    wire [63:0]  da_wstrb;
    wire         da_wlast, da_wvalid, da_wready;
    wire [1:0]   da_bresp, da_rresp;
    wire         da_bvalid, da_bready, da_rlast, da_rvalid, da_rready;

    // One ID (0), 64-byte beats (AxSIZE 6), INCR bursts: mrc_dma_axi's
    // contract (docs/hw/dma_axi.md).
    axi_cc_dma dma_cc (
        .s_axi_aclk(core_clk), .s_axi_aresetn(~core_rst),
        .s_axi_awid(4'd0), .s_axi_awaddr(da_awaddr), .s_axi_awlen(da_awlen), .s_axi_awsize(3'd6),
        .s_axi_awburst(2'b01), .s_axi_awlock(1'b0), .s_axi_awcache(4'b0011), .s_axi_awprot(3'd0),
        .s_axi_awregion(4'd0), .s_axi_awqos(4'd0), .s_axi_awvalid(da_awvalid), .s_axi_awready(da_awready),
        .s_axi_wdata(da_wdata), .s_axi_wstrb(da_wstrb), .s_axi_wlast(da_wlast),
        .s_axi_wvalid(da_wvalid), .s_axi_wready(da_wready),
        .s_axi_bid(), .s_axi_bresp(da_bresp), .s_axi_bvalid(da_bvalid), .s_axi_bready(da_bready),
        .s_axi_arid(4'd0), .s_axi_araddr(da_araddr), .s_axi_arlen(da_arlen), .s_axi_arsize(3'd6),
        .s_axi_arburst(2'b01), .s_axi_arlock(1'b0), .s_axi_arcache(4'b0011), .s_axi_arprot(3'd0),
        .s_axi_arregion(4'd0), .s_axi_arqos(4'd0), .s_axi_arvalid(da_arvalid), .s_axi_arready(da_arready),
        .s_axi_rid(), .s_axi_rdata(da_rdata), .s_axi_rresp(da_rresp), .s_axi_rlast(da_rlast),
        .s_axi_rvalid(da_rvalid), .s_axi_rready(da_rready),
        .m_axi_aclk(axi_aclk), .m_axi_aresetn(axi_aresetn),
        .m_axi_awid(sb_awid), .m_axi_awaddr(sb_awaddr), .m_axi_awlen(sb_awlen), .m_axi_awsize(sb_awsize),
        .m_axi_awburst(sb_awburst), .m_axi_awlock(), .m_axi_awcache(), .m_axi_awprot(),
        .m_axi_awregion(), .m_axi_awqos(), .m_axi_awvalid(sb_awvalid), .m_axi_awready(sb_awready),
        .m_axi_wdata(sb_wdata), .m_axi_wstrb(sb_wstrb), .m_axi_wlast(sb_wlast),
        .m_axi_wvalid(sb_wvalid), .m_axi_wready(sb_wready),
        .m_axi_bid(sb_bid), .m_axi_bresp(sb_bresp), .m_axi_bvalid(sb_bvalid), .m_axi_bready(sb_bready),
        .m_axi_arid(sb_arid), .m_axi_araddr(sb_araddr), .m_axi_arlen(sb_arlen), .m_axi_arsize(sb_arsize),
        .m_axi_arburst(sb_arburst), .m_axi_arlock(), .m_axi_arcache(), .m_axi_arprot(),
        .m_axi_arregion(), .m_axi_arqos(), .m_axi_arvalid(sb_arvalid), .m_axi_arready(sb_arready),
        .m_axi_rid(sb_rid), .m_axi_rdata(sb_rdata), .m_axi_rresp(sb_rresp), .m_axi_rlast(sb_rlast),
        .m_axi_rvalid(sb_rvalid), .m_axi_rready(sb_rready)
    );

    // BAR0 -> AXI4-Lite (250 MHz) -> core clock.
    wire [31:0] bl_awaddr, bl_araddr, cl_awaddr, cl_araddr;
    wire [2:0]  bl_awprot, bl_arprot;
    wire        bl_awvalid, bl_awready, bl_wvalid, bl_wready, bl_bvalid, bl_bready;
    wire        bl_arvalid, bl_arready, bl_rvalid, bl_rready;
    wire [31:0] bl_wdata, bl_rdata, cl_wdata, cl_rdata;
    wire [3:0]  bl_wstrb, cl_wstrb;
    wire [1:0]  bl_bresp, bl_rresp, cl_bresp, cl_rresp;
    wire        cl_awvalid, cl_awready, cl_wvalid, cl_wready, cl_bvalid, cl_bready;
    wire        cl_arvalid, cl_arready, cl_rvalid, cl_rready;

    // 512-bit BAR master -> 32-bit AXI4 (the width converter serializes,
    // so no ID leaves it) -> AXI4-Lite.
    wire [31:0] bw_awaddr, bw_araddr, bw_wdata, bw_rdata;
    wire [7:0]  bw_awlen, bw_arlen;
    wire [2:0]  bw_awsize, bw_arsize, bw_awprot, bw_arprot;
    wire [1:0]  bw_awburst, bw_arburst, bw_bresp, bw_rresp;
    wire [3:0]  bw_wstrb;
    wire        bw_awvalid, bw_awready, bw_wlast, bw_wvalid, bw_wready, bw_bvalid, bw_bready;
    wire        bw_arvalid, bw_arready, bw_rlast, bw_rvalid, bw_rready;

    axi_dw_bar bar_dw (
        .s_axi_aclk(axi_aclk), .s_axi_aresetn(axi_aresetn),
        .s_axi_awid(mb_awid), .s_axi_awaddr(mb_awaddr[31:0]), .s_axi_awlen(mb_awlen), .s_axi_awsize(mb_awsize),
        .s_axi_awburst(mb_awburst), .s_axi_awlock(1'b0), .s_axi_awcache(4'd0), .s_axi_awprot(mb_awprot),
        .s_axi_awregion(4'd0), .s_axi_awqos(4'd0), .s_axi_awvalid(mb_awvalid), .s_axi_awready(mb_awready),
        .s_axi_wdata(mb_wdata), .s_axi_wstrb(mb_wstrb), .s_axi_wlast(mb_wlast),
        .s_axi_wvalid(mb_wvalid), .s_axi_wready(mb_wready),
        .s_axi_bid(mb_bid), .s_axi_bresp(mb_bresp), .s_axi_bvalid(mb_bvalid), .s_axi_bready(mb_bready),
        .s_axi_arid(mb_arid), .s_axi_araddr(mb_araddr[31:0]), .s_axi_arlen(mb_arlen), .s_axi_arsize(mb_arsize),
        .s_axi_arburst(mb_arburst), .s_axi_arlock(1'b0), .s_axi_arcache(4'd0), .s_axi_arprot(mb_arprot),
        .s_axi_arregion(4'd0), .s_axi_arqos(4'd0), .s_axi_arvalid(mb_arvalid), .s_axi_arready(mb_arready),
        .s_axi_rid(mb_rid), .s_axi_rdata(mb_rdata), .s_axi_rresp(mb_rresp), .s_axi_rlast(mb_rlast),
        .s_axi_rvalid(mb_rvalid), .s_axi_rready(mb_rready),
        .m_axi_awaddr(bw_awaddr), .m_axi_awlen(bw_awlen), .m_axi_awsize(bw_awsize), .m_axi_awburst(bw_awburst),
        .m_axi_awlock(), .m_axi_awcache(), .m_axi_awprot(bw_awprot), .m_axi_awregion(), .m_axi_awqos(),
        .m_axi_awvalid(bw_awvalid), .m_axi_awready(bw_awready),
        .m_axi_wdata(bw_wdata), .m_axi_wstrb(bw_wstrb), .m_axi_wlast(bw_wlast),
        .m_axi_wvalid(bw_wvalid), .m_axi_wready(bw_wready),
        .m_axi_bresp(bw_bresp), .m_axi_bvalid(bw_bvalid), .m_axi_bready(bw_bready),
        .m_axi_araddr(bw_araddr), .m_axi_arlen(bw_arlen), .m_axi_arsize(bw_arsize), .m_axi_arburst(bw_arburst),
        .m_axi_arlock(), .m_axi_arcache(), .m_axi_arprot(bw_arprot), .m_axi_arregion(), .m_axi_arqos(),
        .m_axi_arvalid(bw_arvalid), .m_axi_arready(bw_arready),
        .m_axi_rdata(bw_rdata), .m_axi_rresp(bw_rresp), .m_axi_rlast(bw_rlast),
        .m_axi_rvalid(bw_rvalid), .m_axi_rready(bw_rready)
    );

    axi_pc_bar bar_pc (
        .aclk(axi_aclk), .aresetn(axi_aresetn),
        .s_axi_awaddr(bw_awaddr), .s_axi_awlen(bw_awlen), .s_axi_awsize(bw_awsize),
        .s_axi_awburst(bw_awburst), .s_axi_awlock(1'b0), .s_axi_awcache(4'd0), .s_axi_awprot(bw_awprot),
        .s_axi_awregion(4'd0), .s_axi_awqos(4'd0), .s_axi_awvalid(bw_awvalid), .s_axi_awready(bw_awready),
        .s_axi_wdata(bw_wdata), .s_axi_wstrb(bw_wstrb), .s_axi_wlast(bw_wlast),
        .s_axi_wvalid(bw_wvalid), .s_axi_wready(bw_wready),
        .s_axi_bresp(bw_bresp), .s_axi_bvalid(bw_bvalid), .s_axi_bready(bw_bready),
        .s_axi_araddr(bw_araddr), .s_axi_arlen(bw_arlen), .s_axi_arsize(bw_arsize),
        .s_axi_arburst(bw_arburst), .s_axi_arlock(1'b0), .s_axi_arcache(4'd0), .s_axi_arprot(bw_arprot),
        .s_axi_arregion(4'd0), .s_axi_arqos(4'd0), .s_axi_arvalid(bw_arvalid), .s_axi_arready(bw_arready),
        .s_axi_rdata(bw_rdata), .s_axi_rresp(bw_rresp), .s_axi_rlast(bw_rlast),
        .s_axi_rvalid(bw_rvalid), .s_axi_rready(bw_rready),
        .m_axi_awaddr(bl_awaddr), .m_axi_awprot(bl_awprot), .m_axi_awvalid(bl_awvalid), .m_axi_awready(bl_awready),
        .m_axi_wdata(bl_wdata), .m_axi_wstrb(bl_wstrb), .m_axi_wvalid(bl_wvalid), .m_axi_wready(bl_wready),
        .m_axi_bresp(bl_bresp), .m_axi_bvalid(bl_bvalid), .m_axi_bready(bl_bready),
        .m_axi_araddr(bl_araddr), .m_axi_arprot(bl_arprot), .m_axi_arvalid(bl_arvalid), .m_axi_arready(bl_arready),
        .m_axi_rdata(bl_rdata), .m_axi_rresp(bl_rresp), .m_axi_rvalid(bl_rvalid), .m_axi_rready(bl_rready)
    );

    axi_cc_csr csr_cc (
        .s_axi_aclk(axi_aclk), .s_axi_aresetn(axi_aresetn),
        .s_axi_awaddr(bl_awaddr), .s_axi_awprot(bl_awprot), .s_axi_awvalid(bl_awvalid), .s_axi_awready(bl_awready),
        .s_axi_wdata(bl_wdata), .s_axi_wstrb(bl_wstrb), .s_axi_wvalid(bl_wvalid), .s_axi_wready(bl_wready),
        .s_axi_bresp(bl_bresp), .s_axi_bvalid(bl_bvalid), .s_axi_bready(bl_bready),
        .s_axi_araddr(bl_araddr), .s_axi_arprot(bl_arprot), .s_axi_arvalid(bl_arvalid), .s_axi_arready(bl_arready),
        .s_axi_rdata(bl_rdata), .s_axi_rresp(bl_rresp), .s_axi_rvalid(bl_rvalid), .s_axi_rready(bl_rready),
        .m_axi_aclk(core_clk), .m_axi_aresetn(~core_rst),
        .m_axi_awaddr(cl_awaddr), .m_axi_awprot(), .m_axi_awvalid(cl_awvalid), .m_axi_awready(cl_awready),
        .m_axi_wdata(cl_wdata), .m_axi_wstrb(cl_wstrb), .m_axi_wvalid(cl_wvalid), .m_axi_wready(cl_wready),
        .m_axi_bresp(cl_bresp), .m_axi_bvalid(cl_bvalid), .m_axi_bready(cl_bready),
        .m_axi_araddr(cl_araddr), .m_axi_arprot(), .m_axi_arvalid(cl_arvalid), .m_axi_arready(cl_arready),
        .m_axi_rdata(cl_rdata), .m_axi_rresp(cl_rresp), .m_axi_rvalid(cl_rvalid), .m_axi_rready(cl_rready)
    );

    // ------------------------------------------------------------------
    // The core and its DMA adapter
    // ------------------------------------------------------------------
    wire         dma_rd_req_valid, dma_rd_req_ready;
    wire [63:0]  dma_rd_req_addr;
    wire [15:0]  dma_rd_req_len;
    wire [7:0]   dma_rd_req_tag;
    wire         dma_rd_rsp_valid, dma_rd_rsp_ready, dma_rd_rsp_last;
    wire [511:0] dma_rd_rsp_data;
    wire [63:0]  dma_rd_rsp_keep;
    wire [7:0]   dma_rd_rsp_tag;
    wire         dma_wr_req_valid, dma_wr_req_ready;
    wire [63:0]  dma_wr_req_addr;
    wire [15:0]  dma_wr_req_len;
    wire         dma_wr_data_valid, dma_wr_data_ready, dma_wr_last;
    wire [511:0] dma_wr_data;
    wire [63:0]  dma_wr_keep;
    wire         core_rx_tready;

    mrc_core core (
        .clock(core_clk),
        .s_rx$tdata(mac_rx_tdata), .s_rx$tkeep(mac_rx_tkeep), .s_rx$tlast(mac_rx_tlast),
        .s_rx$tvalid(mac_rx_tvalid), .s_rx$tready(core_rx_tready),
        .m_tx$tdata(mac_tx_tdata), .m_tx$tkeep(mac_tx_tkeep), .m_tx$tlast(mac_tx_tlast),
        .m_tx$tvalid(mac_tx_tvalid), .m_tx$tready(mac_tx_tready),
        .dma_rd$req$valid(dma_rd_req_valid), .dma_rd$req$ready(dma_rd_req_ready),
        .dma_rd$req$addr(dma_rd_req_addr), .dma_rd$req$len(dma_rd_req_len), .dma_rd$req$tag(dma_rd_req_tag),
        .dma_rd$rsp$valid(dma_rd_rsp_valid), .dma_rd$rsp$ready(dma_rd_rsp_ready),
        .dma_rd$rsp$data(dma_rd_rsp_data), .dma_rd$rsp$keep(dma_rd_rsp_keep),
        .dma_rd$rsp$last(dma_rd_rsp_last), .dma_rd$rsp$tag(dma_rd_rsp_tag),
        .dma_wr$req$valid(dma_wr_req_valid), .dma_wr$req$ready(dma_wr_req_ready),
        .dma_wr$req$addr(dma_wr_req_addr), .dma_wr$req$len(dma_wr_req_len),
        .dma_wr$beat$valid(dma_wr_data_valid), .dma_wr$beat$ready(dma_wr_data_ready),
        .dma_wr$beat$data(dma_wr_data), .dma_wr$beat$keep(dma_wr_keep), .dma_wr$beat$last(dma_wr_last),
        .s_axil$awaddr(cl_awaddr[15:0]), .s_axil$awvalid(cl_awvalid), .s_axil$awready(cl_awready),
        .s_axil$wdata(cl_wdata), .s_axil$wstrb(cl_wstrb), .s_axil$wvalid(cl_wvalid), .s_axil$wready(cl_wready),
        .s_axil$bresp(cl_bresp), .s_axil$bvalid(cl_bvalid), .s_axil$bready(cl_bready),
        .s_axil$araddr(cl_araddr[15:0]), .s_axil$arvalid(cl_arvalid), .s_axil$arready(cl_arready),
        .s_axil$rdata(cl_rdata), .s_axil$rresp(cl_rresp), .s_axil$rvalid(cl_rvalid), .s_axil$rready(cl_rready)
    );

    mrc_dma_axi dma (
        .clock(core_clk),
        .dma_rd$req$valid(dma_rd_req_valid), .dma_rd$req$ready(dma_rd_req_ready),
        .dma_rd$req$addr(dma_rd_req_addr), .dma_rd$req$len(dma_rd_req_len), .dma_rd$req$tag(dma_rd_req_tag),
        .dma_rd$rsp$valid(dma_rd_rsp_valid), .dma_rd$rsp$ready(dma_rd_rsp_ready),
        .dma_rd$rsp$data(dma_rd_rsp_data), .dma_rd$rsp$keep(dma_rd_rsp_keep),
        .dma_rd$rsp$last(dma_rd_rsp_last), .dma_rd$rsp$tag(dma_rd_rsp_tag),
        .dma_wr$req$valid(dma_wr_req_valid), .dma_wr$req$ready(dma_wr_req_ready),
        .dma_wr$req$addr(dma_wr_req_addr), .dma_wr$req$len(dma_wr_req_len),
        .dma_wr$beat$valid(dma_wr_data_valid), .dma_wr$beat$ready(dma_wr_data_ready),
        .dma_wr$beat$data(dma_wr_data), .dma_wr$beat$keep(dma_wr_keep), .dma_wr$beat$last(dma_wr_last),
        .m_axi_araddr(da_araddr), .m_axi_arlen(da_arlen), .m_axi_arvalid(da_arvalid), .m_axi_arready(da_arready),
        .m_axi_rdata(da_rdata), .m_axi_rresp(da_rresp), .m_axi_rlast(da_rlast),
        .m_axi_rvalid(da_rvalid), .m_axi_rready(da_rready),
        .m_axi_awaddr(da_awaddr), .m_axi_awlen(da_awlen), .m_axi_awvalid(da_awvalid), .m_axi_awready(da_awready),
        .m_axi_wdata(da_wdata), .m_axi_wstrb(da_wstrb), .m_axi_wlast(da_wlast),
        .m_axi_wvalid(da_wvalid), .m_axi_wready(da_wready),
        .m_axi_bresp(da_bresp), .m_axi_bvalid(da_bvalid), .m_axi_bready(da_bready),
        // The adapter's counters are not wired to the CSR block yet (the
        // core owns the CSR counters; see docs/hw/dma_axi.md).
        .cnt_rd_zero_len(), .cnt_wr_zero_len(), .cnt_wr_bad_last(), .cnt_rd_err(), .cnt_wr_err()
    );

    // ------------------------------------------------------------------
    // Status LEDs
    // ------------------------------------------------------------------
    reg rx_overrun = 1'b0;
    always @(posedge core_clk) begin
        if (core_rst) rx_overrun <= 1'b0;
        else if (mac_rx_tvalid && !core_rx_tready) rx_overrun <= 1'b1;
    end
`ifndef MRC_NO_LEDS
    assign led = {rx_overrun, stat_rx_aligned, user_lnk_up};
`endif

endmodule

`default_nettype wire
