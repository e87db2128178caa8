// Black boxes for a Verilator lint of mrc_alveo_top.v (make check): the
// Xilinx IPs and primitives the top instantiates, with the port lists of
// PG194 (XDMA AXI bridge), PG203 (CMAC USPlus AXIS), PG164/PG065 (AXI
// clock/protocol/width converters) and UG974 (IBUFDS_GTE4, IBUF) as far as
// the top uses them. The real mrc_core and mrc_dma_axi come from
// `mrc rtl verilog`.
// Outputs are tied to zero. Lint only: nothing here is synthesized.
/* verilator lint_off UNDRIVEN */
/* verilator lint_off UNUSEDSIGNAL */
`default_nettype none

module IBUFDS_GTE4 #(parameter [1:0] REFCLK_HROW_CK_SEL = 2'b00) (
    input wire I, input wire IB, input wire CEB, output wire O, output wire ODIV2);
    assign O = I & ~IB & ~CEB; assign ODIV2 = O;
endmodule

module IBUF (input wire I, output wire O);
    assign O = I;
endmodule

module xdma_0 (
    input wire sys_clk, input wire sys_clk_gt, input wire sys_rst_n,
    input wire [15:0] pci_exp_rxp, input wire [15:0] pci_exp_rxn,
    output wire [15:0] pci_exp_txp, output wire [15:0] pci_exp_txn,
    output wire user_lnk_up, output wire axi_aclk, output wire axi_aresetn,
    input wire [0:0] usr_irq_req, output wire [0:0] usr_irq_ack,
    output wire msi_enable, output wire [2:0] msi_vector_width,
    input wire [3:0] s_axib_awid, input wire [63:0] s_axib_awaddr, input wire [3:0] s_axib_awregion,
    input wire [7:0] s_axib_awlen, input wire [2:0] s_axib_awsize, input wire [1:0] s_axib_awburst,
    input wire s_axib_awvalid, output wire s_axib_awready,
    input wire [511:0] s_axib_wdata, input wire [63:0] s_axib_wstrb, input wire s_axib_wlast,
    input wire s_axib_wvalid, output wire s_axib_wready,
    output wire [3:0] s_axib_bid, output wire [1:0] s_axib_bresp, output wire s_axib_bvalid, input wire s_axib_bready,
    input wire [3:0] s_axib_arid, input wire [63:0] s_axib_araddr, input wire [3:0] s_axib_arregion,
    input wire [7:0] s_axib_arlen, input wire [2:0] s_axib_arsize, input wire [1:0] s_axib_arburst,
    input wire s_axib_arvalid, output wire s_axib_arready,
    output wire [3:0] s_axib_rid, output wire [511:0] s_axib_rdata, output wire [1:0] s_axib_rresp,
    output wire s_axib_rlast, output wire s_axib_rvalid, input wire s_axib_rready,
    output wire [3:0] m_axib_awid, output wire [63:0] m_axib_awaddr, output wire [7:0] m_axib_awlen,
    output wire [2:0] m_axib_awsize, output wire [1:0] m_axib_awburst, output wire [2:0] m_axib_awprot,
    output wire m_axib_awvalid, input wire m_axib_awready, output wire m_axib_awlock, output wire [3:0] m_axib_awcache,
    output wire [511:0] m_axib_wdata, output wire [63:0] m_axib_wstrb, output wire m_axib_wlast,
    output wire m_axib_wvalid, input wire m_axib_wready,
    input wire [3:0] m_axib_bid, input wire [1:0] m_axib_bresp, input wire m_axib_bvalid, output wire m_axib_bready,
    output wire [3:0] m_axib_arid, output wire [63:0] m_axib_araddr, output wire [7:0] m_axib_arlen,
    output wire [2:0] m_axib_arsize, output wire [1:0] m_axib_arburst, output wire [2:0] m_axib_arprot,
    output wire m_axib_arvalid, input wire m_axib_arready, output wire m_axib_arlock, output wire [3:0] m_axib_arcache,
    input wire [3:0] m_axib_rid, input wire [511:0] m_axib_rdata, input wire [1:0] m_axib_rresp,
    input wire m_axib_rlast, input wire m_axib_rvalid, output wire m_axib_rready
);
endmodule

module cmac_0 (
    input wire gt_ref_clk_p, input wire gt_ref_clk_n,
    input wire [3:0] gt_rxp_in, input wire [3:0] gt_rxn_in, output wire [3:0] gt_txp_out, output wire [3:0] gt_txn_out,
    input wire init_clk, input wire sys_reset, output wire gt_txusrclk2, output wire gt_rxusrclk2, input wire rx_clk,
    output wire usr_tx_reset, output wire usr_rx_reset,
    input wire core_rx_reset, input wire core_tx_reset, input wire core_drp_reset,
    input wire drp_clk, input wire [9:0] drp_addr, input wire [15:0] drp_di, input wire drp_en, input wire drp_we,
    output wire [15:0] drp_do, output wire drp_rdy, input wire [11:0] gt_loopback_in,
    output wire rx_axis_tvalid, output wire [511:0] rx_axis_tdata, output wire [63:0] rx_axis_tkeep,
    output wire rx_axis_tlast, output wire rx_axis_tuser,
    output wire tx_axis_tready, input wire tx_axis_tvalid, input wire [511:0] tx_axis_tdata,
    input wire [63:0] tx_axis_tkeep, input wire tx_axis_tlast, input wire tx_axis_tuser,
    input wire [55:0] tx_preamblein, output wire [55:0] rx_preambleout,
    input wire ctl_rx_enable, input wire ctl_rx_force_resync, input wire ctl_rx_test_pattern,
    input wire ctl_tx_enable, input wire ctl_tx_send_idle, input wire ctl_tx_send_lfi, input wire ctl_tx_send_rfi,
    input wire ctl_tx_test_pattern,
    input wire ctl_rx_rsfec_enable, input wire ctl_rx_rsfec_enable_correction, input wire ctl_rx_rsfec_enable_indication,
    input wire ctl_tx_rsfec_enable, input wire ctl_rsfec_ieee_error_indication_mode,
    output wire stat_rx_aligned
);
endmodule

// AXI4 (512-bit, 64-bit address, 4-bit ID) asynchronous clock converter.
module axi_cc_dma (
    input wire s_axi_aclk, input wire s_axi_aresetn,
    input wire [3:0] s_axi_awid, input wire [63:0] s_axi_awaddr, input wire [7:0] s_axi_awlen, input wire [2:0] s_axi_awsize,
    input wire [1:0] s_axi_awburst, input wire [0:0] s_axi_awlock, input wire [3:0] s_axi_awcache, input wire [2:0] s_axi_awprot,
    input wire [3:0] s_axi_awregion, input wire [3:0] s_axi_awqos, input wire s_axi_awvalid, output wire s_axi_awready,
    input wire [511:0] s_axi_wdata, input wire [63:0] s_axi_wstrb, input wire s_axi_wlast, input wire s_axi_wvalid, output wire s_axi_wready,
    output wire [3:0] s_axi_bid, output wire [1:0] s_axi_bresp, output wire s_axi_bvalid, input wire s_axi_bready,
    input wire [3:0] s_axi_arid, input wire [63:0] s_axi_araddr, input wire [7:0] s_axi_arlen, input wire [2:0] s_axi_arsize,
    input wire [1:0] s_axi_arburst, input wire [0:0] s_axi_arlock, input wire [3:0] s_axi_arcache, input wire [2:0] s_axi_arprot,
    input wire [3:0] s_axi_arregion, input wire [3:0] s_axi_arqos, input wire s_axi_arvalid, output wire s_axi_arready,
    output wire [3:0] s_axi_rid, output wire [511:0] s_axi_rdata, output wire [1:0] s_axi_rresp, output wire s_axi_rlast,
    output wire s_axi_rvalid, input wire s_axi_rready,
    input wire m_axi_aclk, input wire m_axi_aresetn,
    output wire [3:0] m_axi_awid, output wire [63:0] m_axi_awaddr, output wire [7:0] m_axi_awlen, output wire [2:0] m_axi_awsize,
    output wire [1:0] m_axi_awburst, output wire [0:0] m_axi_awlock, output wire [3:0] m_axi_awcache, output wire [2:0] m_axi_awprot,
    output wire [3:0] m_axi_awregion, output wire [3:0] m_axi_awqos, output wire m_axi_awvalid, input wire m_axi_awready,
    output wire [511:0] m_axi_wdata, output wire [63:0] m_axi_wstrb, output wire m_axi_wlast, output wire m_axi_wvalid, input wire m_axi_wready,
    input wire [3:0] m_axi_bid, input wire [1:0] m_axi_bresp, input wire m_axi_bvalid, output wire m_axi_bready,
    output wire [3:0] m_axi_arid, output wire [63:0] m_axi_araddr, output wire [7:0] m_axi_arlen, output wire [2:0] m_axi_arsize,
    output wire [1:0] m_axi_arburst, output wire [0:0] m_axi_arlock, output wire [3:0] m_axi_arcache, output wire [2:0] m_axi_arprot,
    output wire [3:0] m_axi_arregion, output wire [3:0] m_axi_arqos, output wire m_axi_arvalid, input wire m_axi_arready,
    input wire [3:0] m_axi_rid, input wire [511:0] m_axi_rdata, input wire [1:0] m_axi_rresp, input wire m_axi_rlast,
    input wire m_axi_rvalid, output wire m_axi_rready
);
endmodule

// AXI4 512-bit (4-bit ID) -> 32-bit data-width converter.
module axi_dw_bar (
    input wire s_axi_aclk, input wire s_axi_aresetn,
    input wire [3:0] s_axi_awid, input wire [31:0] s_axi_awaddr, input wire [7:0] s_axi_awlen, input wire [2:0] s_axi_awsize,
    input wire [1:0] s_axi_awburst, input wire [0:0] s_axi_awlock, input wire [3:0] s_axi_awcache, input wire [2:0] s_axi_awprot,
    input wire [3:0] s_axi_awregion, input wire [3:0] s_axi_awqos, input wire s_axi_awvalid, output wire s_axi_awready,
    input wire [511:0] s_axi_wdata, input wire [63:0] s_axi_wstrb, input wire s_axi_wlast, input wire s_axi_wvalid, output wire s_axi_wready,
    output wire [3:0] s_axi_bid, output wire [1:0] s_axi_bresp, output wire s_axi_bvalid, input wire s_axi_bready,
    input wire [3:0] s_axi_arid, input wire [31:0] s_axi_araddr, input wire [7:0] s_axi_arlen, input wire [2:0] s_axi_arsize,
    input wire [1:0] s_axi_arburst, input wire [0:0] s_axi_arlock, input wire [3:0] s_axi_arcache, input wire [2:0] s_axi_arprot,
    input wire [3:0] s_axi_arregion, input wire [3:0] s_axi_arqos, input wire s_axi_arvalid, output wire s_axi_arready,
    output wire [3:0] s_axi_rid, output wire [511:0] s_axi_rdata, output wire [1:0] s_axi_rresp, output wire s_axi_rlast,
    output wire s_axi_rvalid, input wire s_axi_rready,
    output wire [31:0] m_axi_awaddr, output wire [7:0] m_axi_awlen, output wire [2:0] m_axi_awsize, output wire [1:0] m_axi_awburst,
    output wire [0:0] m_axi_awlock, output wire [3:0] m_axi_awcache, output wire [2:0] m_axi_awprot, output wire [3:0] m_axi_awregion,
    output wire [3:0] m_axi_awqos, output wire m_axi_awvalid, input wire m_axi_awready,
    output wire [31:0] m_axi_wdata, output wire [3:0] m_axi_wstrb, output wire m_axi_wlast, output wire m_axi_wvalid, input wire m_axi_wready,
    input wire [1:0] m_axi_bresp, input wire m_axi_bvalid, output wire m_axi_bready,
    output wire [31:0] m_axi_araddr, output wire [7:0] m_axi_arlen, output wire [2:0] m_axi_arsize, output wire [1:0] m_axi_arburst,
    output wire [0:0] m_axi_arlock, output wire [3:0] m_axi_arcache, output wire [2:0] m_axi_arprot, output wire [3:0] m_axi_arregion,
    output wire [3:0] m_axi_arqos, output wire m_axi_arvalid, input wire m_axi_arready,
    input wire [31:0] m_axi_rdata, input wire [1:0] m_axi_rresp, input wire m_axi_rlast, input wire m_axi_rvalid, output wire m_axi_rready
);
endmodule

// AXI4 (32-bit, no ID) -> AXI4-Lite protocol converter.
module axi_pc_bar (
    input wire aclk, input wire aresetn,
    input wire [31:0] s_axi_awaddr, input wire [7:0] s_axi_awlen, input wire [2:0] s_axi_awsize,
    input wire [1:0] s_axi_awburst, input wire [0:0] s_axi_awlock, input wire [3:0] s_axi_awcache, input wire [2:0] s_axi_awprot,
    input wire [3:0] s_axi_awregion, input wire [3:0] s_axi_awqos, input wire s_axi_awvalid, output wire s_axi_awready,
    input wire [31:0] s_axi_wdata, input wire [3:0] s_axi_wstrb, input wire s_axi_wlast, input wire s_axi_wvalid, output wire s_axi_wready,
    output wire [1:0] s_axi_bresp, output wire s_axi_bvalid, input wire s_axi_bready,
    input wire [31:0] s_axi_araddr, input wire [7:0] s_axi_arlen, input wire [2:0] s_axi_arsize,
    input wire [1:0] s_axi_arburst, input wire [0:0] s_axi_arlock, input wire [3:0] s_axi_arcache, input wire [2:0] s_axi_arprot,
    input wire [3:0] s_axi_arregion, input wire [3:0] s_axi_arqos, input wire s_axi_arvalid, output wire s_axi_arready,
    output wire [31:0] s_axi_rdata, output wire [1:0] s_axi_rresp, output wire s_axi_rlast, output wire s_axi_rvalid, input wire s_axi_rready,
    output wire [31:0] m_axi_awaddr, output wire [2:0] m_axi_awprot, output wire m_axi_awvalid, input wire m_axi_awready,
    output wire [31:0] m_axi_wdata, output wire [3:0] m_axi_wstrb, output wire m_axi_wvalid, input wire m_axi_wready,
    input wire [1:0] m_axi_bresp, input wire m_axi_bvalid, output wire m_axi_bready,
    output wire [31:0] m_axi_araddr, output wire [2:0] m_axi_arprot, output wire m_axi_arvalid, input wire m_axi_arready,
    input wire [31:0] m_axi_rdata, input wire [1:0] m_axi_rresp, input wire m_axi_rvalid, output wire m_axi_rready
);
endmodule

// AXI4-Lite (32-bit) asynchronous clock converter.
module axi_cc_csr (
    input wire s_axi_aclk, input wire s_axi_aresetn,
    input wire [31:0] s_axi_awaddr, input wire [2:0] s_axi_awprot, input wire s_axi_awvalid, output wire s_axi_awready,
    input wire [31:0] s_axi_wdata, input wire [3:0] s_axi_wstrb, input wire s_axi_wvalid, output wire s_axi_wready,
    output wire [1:0] s_axi_bresp, output wire s_axi_bvalid, input wire s_axi_bready,
    input wire [31:0] s_axi_araddr, input wire [2:0] s_axi_arprot, input wire s_axi_arvalid, output wire s_axi_arready,
    output wire [31:0] s_axi_rdata, output wire [1:0] s_axi_rresp, output wire s_axi_rvalid, input wire s_axi_rready,
    input wire m_axi_aclk, input wire m_axi_aresetn,
    output wire [31:0] m_axi_awaddr, output wire [2:0] m_axi_awprot, output wire m_axi_awvalid, input wire m_axi_awready,
    output wire [31:0] m_axi_wdata, output wire [3:0] m_axi_wstrb, output wire m_axi_wvalid, input wire m_axi_wready,
    input wire [1:0] m_axi_bresp, input wire m_axi_bvalid, output wire m_axi_bready,
    output wire [31:0] m_axi_araddr, output wire [2:0] m_axi_arprot, output wire m_axi_arvalid, input wire m_axi_arready,
    input wire [31:0] m_axi_rdata, input wire [1:0] m_axi_rresp, input wire m_axi_rvalid, output wire m_axi_rready
);
endmodule


`default_nettype wire
