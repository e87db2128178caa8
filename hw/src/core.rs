//! Top `MrcCore` (first cut): MAC RX -> fault injection -> RX header
//! parser, the CSR block behind the AXI-Lite slave counting the parser's
//! and the fault-injection stage's events, with the MAC streams, AXI-Lite,
//! the shared config port, doorbells and the parser's record as ports. The
//! DMA interface, the TX path (its stream is an input here, for loopback)
//! and the other blocks of the hw issue are not here yet. See
//! `docs/hw/README.md`.

use rust_hdl::prelude::*;

use crate::axil::AxiLiteSlave;
use crate::csr::{BuildInfo, Csr};
use crate::fault_inject::FaultInject;
use crate::regmap::{counter_slot, ADDR_BITS, N_COUNTERS};
use crate::rx_parser::RxParser;

#[derive(LogicBlock)]
pub struct MrcCore {
    pub clock: Signal<In, Clock>,
    // MAC RX, 512-bit AXI-Stream.
    pub s_rx_tdata: Signal<In, Bits<512>>,
    pub s_rx_tkeep: Signal<In, Bits<64>>,
    pub s_rx_tlast: Signal<In, Bit>,
    pub s_rx_tvalid: Signal<In, Bit>,
    pub s_rx_tready: Signal<Out, Bit>,
    // Core TX stream (from the TX path, not written yet) and MAC TX.
    pub s_tx_tdata: Signal<In, Bits<512>>,
    pub s_tx_tkeep: Signal<In, Bits<64>>,
    pub s_tx_tlast: Signal<In, Bit>,
    pub s_tx_tvalid: Signal<In, Bit>,
    pub s_tx_tready: Signal<Out, Bit>,
    pub m_tx_tdata: Signal<Out, Bits<512>>,
    pub m_tx_tkeep: Signal<Out, Bits<64>>,
    pub m_tx_tlast: Signal<Out, Bit>,
    pub m_tx_tvalid: Signal<Out, Bit>,
    pub m_tx_tready: Signal<In, Bit>,
    // AXI-Lite (see axil.md).
    pub s_axil_awaddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_awvalid: Signal<In, Bit>,
    pub s_axil_awready: Signal<Out, Bit>,
    pub s_axil_wdata: Signal<In, Bits<32>>,
    pub s_axil_wstrb: Signal<In, Bits<4>>,
    pub s_axil_wvalid: Signal<In, Bit>,
    pub s_axil_wready: Signal<Out, Bit>,
    pub s_axil_bresp: Signal<Out, Bits<2>>,
    pub s_axil_bvalid: Signal<Out, Bit>,
    pub s_axil_bready: Signal<In, Bit>,
    pub s_axil_araddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_arvalid: Signal<In, Bit>,
    pub s_axil_arready: Signal<Out, Bit>,
    pub s_axil_rdata: Signal<Out, Bits<32>>,
    pub s_axil_rresp: Signal<Out, Bits<2>>,
    pub s_axil_rvalid: Signal<Out, Bit>,
    pub s_axil_rready: Signal<In, Bit>,
    // Shared config port and doorbells (to blocks not in the top yet).
    pub cfg_valid: Signal<Out, Bit>,
    pub cfg_table: Signal<Out, Bits<4>>,
    pub cfg_index: Signal<Out, Bits<16>>,
    pub cfg_data: Signal<Out, Bits<256>>,
    pub db_valid: Signal<Out, Bit>,
    pub db_qp: Signal<Out, Bits<8>>,
    pub db_value: Signal<Out, Bits<32>>,
    // Parsed-header record (to the receive pipeline, not written yet).
    pub rx_valid: Signal<Out, Bit>,
    pub rx_drop: Signal<Out, Bit>,
    pub rx_reason: Signal<Out, Bits<5>>,
    pub rx_ipv6: Signal<Out, Bit>,
    pub rx_vlan: Signal<Out, Bit>,
    pub rx_ecn_ce: Signal<Out, Bit>,
    pub rx_trimmed: Signal<Out, Bit>,
    pub rx_ev: Signal<Out, Bits<32>>,
    pub rx_opcode: Signal<Out, Bits<8>>,
    pub rx_se: Signal<Out, Bit>,
    pub rx_mig: Signal<Out, Bit>,
    pub rx_pad: Signal<Out, Bits<2>>,
    pub rx_pkey: Signal<Out, Bits<16>>,
    pub rx_fecn: Signal<Out, Bit>,
    pub rx_becn: Signal<Out, Bit>,
    pub rx_dest_qp: Signal<Out, Bits<24>>,
    pub rx_ack_req: Signal<Out, Bit>,
    pub rx_xbit: Signal<Out, Bit>,
    pub rx_psn: Signal<Out, Bits<24>>,
    pub rx_reth_va: Signal<Out, Bits<64>>,
    pub rx_reth_rkey: Signal<Out, Bits<32>>,
    pub rx_reth_len: Signal<Out, Bits<32>>,
    pub rx_imm: Signal<Out, Bits<32>>,
    pub rx_aeth_syndrome: Signal<Out, Bits<8>>,
    pub rx_aeth_msn: Signal<Out, Bits<24>>,
    pub rx_ext: Signal<Out, Bits<224>>,
    pub rx_payload_off: Signal<Out, Bits<18>>,
    pub rx_payload_len: Signal<Out, Bits<18>>,
    fault: FaultInject,
    parser: RxParser,
    axil: AxiLiteSlave,
    csr: Csr,
}

impl MrcCore {
    pub fn new(build: BuildInfo) -> MrcCore {
        // The counter slots `update` wires (literals there).
        let slots: Vec<usize> =
            ["rx_parser_ok", "rx_parser_drop", "fi_frames", "fi_rand_drop", "fi_ev_drop", "fi_lb_discard"].map(counter_slot).into();
        assert_eq!(slots, [0, 1, 2, 3, 4, 5]);
        MrcCore {
            clock: Default::default(),
            s_rx_tdata: Default::default(),
            s_rx_tkeep: Default::default(),
            s_rx_tlast: Default::default(),
            s_rx_tvalid: Default::default(),
            s_rx_tready: Default::default(),
            s_tx_tdata: Default::default(),
            s_tx_tkeep: Default::default(),
            s_tx_tlast: Default::default(),
            s_tx_tvalid: Default::default(),
            s_tx_tready: Default::default(),
            m_tx_tdata: Default::default(),
            m_tx_tkeep: Default::default(),
            m_tx_tlast: Default::default(),
            m_tx_tvalid: Default::default(),
            m_tx_tready: Default::default(),
            s_axil_awaddr: Default::default(),
            s_axil_awvalid: Default::default(),
            s_axil_awready: Default::default(),
            s_axil_wdata: Default::default(),
            s_axil_wstrb: Default::default(),
            s_axil_wvalid: Default::default(),
            s_axil_wready: Default::default(),
            s_axil_bresp: Default::default(),
            s_axil_bvalid: Default::default(),
            s_axil_bready: Default::default(),
            s_axil_araddr: Default::default(),
            s_axil_arvalid: Default::default(),
            s_axil_arready: Default::default(),
            s_axil_rdata: Default::default(),
            s_axil_rresp: Default::default(),
            s_axil_rvalid: Default::default(),
            s_axil_rready: Default::default(),
            cfg_valid: Default::default(),
            cfg_table: Default::default(),
            cfg_index: Default::default(),
            cfg_data: Default::default(),
            db_valid: Default::default(),
            db_qp: Default::default(),
            db_value: Default::default(),
            rx_valid: Default::default(),
            rx_drop: Default::default(),
            rx_reason: Default::default(),
            rx_ipv6: Default::default(),
            rx_vlan: Default::default(),
            rx_ecn_ce: Default::default(),
            rx_trimmed: Default::default(),
            rx_ev: Default::default(),
            rx_opcode: Default::default(),
            rx_se: Default::default(),
            rx_mig: Default::default(),
            rx_pad: Default::default(),
            rx_pkey: Default::default(),
            rx_fecn: Default::default(),
            rx_becn: Default::default(),
            rx_dest_qp: Default::default(),
            rx_ack_req: Default::default(),
            rx_xbit: Default::default(),
            rx_psn: Default::default(),
            rx_reth_va: Default::default(),
            rx_reth_rkey: Default::default(),
            rx_reth_len: Default::default(),
            rx_imm: Default::default(),
            rx_aeth_syndrome: Default::default(),
            rx_aeth_msn: Default::default(),
            rx_ext: Default::default(),
            rx_payload_off: Default::default(),
            rx_payload_len: Default::default(),
            fault: Default::default(),
            parser: Default::default(),
            axil: Default::default(),
            csr: Csr::new(build),
        }
    }
}

impl Logic for MrcCore {
    #[hdl_gen]
    fn update(&mut self) {
        self.fault.clock.next = self.clock.val();
        self.parser.clock.next = self.clock.val();
        self.axil.clock.next = self.clock.val();
        self.csr.clock.next = self.clock.val();
        // MAC RX -> fault injection -> parser; core TX -> fault injection
        // (loopback) -> MAC TX.
        self.fault.s_rx_tdata.next = self.s_rx_tdata.val();
        self.fault.s_rx_tkeep.next = self.s_rx_tkeep.val();
        self.fault.s_rx_tlast.next = self.s_rx_tlast.val();
        self.fault.s_rx_tvalid.next = self.s_rx_tvalid.val();
        self.s_rx_tready.next = self.fault.s_rx_tready.val();
        self.parser.s_tdata.next = self.fault.m_rx_tdata.val();
        self.parser.s_tkeep.next = self.fault.m_rx_tkeep.val();
        self.parser.s_tlast.next = self.fault.m_rx_tlast.val();
        self.parser.s_tvalid.next = self.fault.m_rx_tvalid.val();
        self.fault.m_rx_tready.next = self.parser.s_tready.val();
        self.fault.s_tx_tdata.next = self.s_tx_tdata.val();
        self.fault.s_tx_tkeep.next = self.s_tx_tkeep.val();
        self.fault.s_tx_tlast.next = self.s_tx_tlast.val();
        self.fault.s_tx_tvalid.next = self.s_tx_tvalid.val();
        self.s_tx_tready.next = self.fault.s_tx_tready.val();
        self.m_tx_tdata.next = self.fault.m_tx_tdata.val();
        self.m_tx_tkeep.next = self.fault.m_tx_tkeep.val();
        self.m_tx_tlast.next = self.fault.m_tx_tlast.val();
        self.m_tx_tvalid.next = self.fault.m_tx_tvalid.val();
        self.fault.m_tx_tready.next = self.m_tx_tready.val();
        self.fault.ctrl.next = self.csr.fi_ctrl.val();
        self.fault.seed.next = self.csr.fi_seed.val();
        self.fault.seed_load.next = self.csr.fi_seed_load.val();
        self.fault.drop_prob.next = self.csr.fi_drop_prob.val();
        self.fault.ev_en.next = self.csr.fi_ev_en.val();
        self.fault.ev_match0.next = self.csr.fi_ev_match0.val();
        self.fault.ev_match1.next = self.csr.fi_ev_match1.val();
        self.fault.ev_match2.next = self.csr.fi_ev_match2.val();
        self.fault.ev_match3.next = self.csr.fi_ev_match3.val();
        // AXI-Lite -> CSR word port.
        self.axil.s_axil_awaddr.next = self.s_axil_awaddr.val();
        self.axil.s_axil_awvalid.next = self.s_axil_awvalid.val();
        self.s_axil_awready.next = self.axil.s_axil_awready.val();
        self.axil.s_axil_wdata.next = self.s_axil_wdata.val();
        self.axil.s_axil_wstrb.next = self.s_axil_wstrb.val();
        self.axil.s_axil_wvalid.next = self.s_axil_wvalid.val();
        self.s_axil_wready.next = self.axil.s_axil_wready.val();
        self.s_axil_bresp.next = self.axil.s_axil_bresp.val();
        self.s_axil_bvalid.next = self.axil.s_axil_bvalid.val();
        self.axil.s_axil_bready.next = self.s_axil_bready.val();
        self.axil.s_axil_araddr.next = self.s_axil_araddr.val();
        self.axil.s_axil_arvalid.next = self.s_axil_arvalid.val();
        self.s_axil_arready.next = self.axil.s_axil_arready.val();
        self.s_axil_rdata.next = self.axil.s_axil_rdata.val();
        self.s_axil_rresp.next = self.axil.s_axil_rresp.val();
        self.s_axil_rvalid.next = self.axil.s_axil_rvalid.val();
        self.axil.s_axil_rready.next = self.s_axil_rready.val();
        self.csr.wr_en.next = self.axil.wr_en.val();
        self.csr.wr_addr.next = self.axil.wr_addr.val();
        self.csr.wr_data.next = self.axil.wr_data.val();
        self.csr.rd_en.next = self.axil.rd_en.val();
        self.csr.rd_addr.next = self.axil.rd_addr.val();
        self.axil.rd_data.next = self.csr.rd_data.val();
        self.axil.rd_valid.next = self.csr.rd_valid.val();
        self.cfg_valid.next = self.csr.cfg_valid.val();
        self.cfg_table.next = self.csr.cfg_table.val();
        self.cfg_index.next = self.csr.cfg_index.val();
        self.cfg_data.next = self.csr.cfg_data.val();
        self.db_valid.next = self.csr.db_valid.val();
        self.db_qp.next = self.csr.db_qp.val();
        self.db_value.next = self.csr.db_value.val();
        // Counter slots 0-5 (`regmap::COUNTERS`, checked by `new`); the
        // blocks owning the other counters are not in the top yet.
        self.csr.cnt_inc.next = bit_cast::<{ N_COUNTERS }, 1>(self.parser.out_valid.val().into())
            | (bit_cast::<{ N_COUNTERS }, 1>(self.parser.out_drop.val().into()) << 1)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_frames.val().into()) << 2)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_rand_drop.val().into()) << 3)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_ev_drop.val().into()) << 4)
            | (bit_cast::<{ N_COUNTERS }, 1>(self.fault.cnt_lb_discard.val().into()) << 5);
        self.rx_valid.next = self.parser.out_valid.val();
        self.rx_drop.next = self.parser.out_drop.val();
        self.rx_reason.next = self.parser.out_reason.val();
        self.rx_ipv6.next = self.parser.out_ipv6.val();
        self.rx_vlan.next = self.parser.out_vlan.val();
        self.rx_ecn_ce.next = self.parser.out_ecn_ce.val();
        self.rx_trimmed.next = self.parser.out_trimmed.val();
        self.rx_ev.next = self.parser.out_ev.val();
        self.rx_opcode.next = self.parser.out_opcode.val();
        self.rx_se.next = self.parser.out_se.val();
        self.rx_mig.next = self.parser.out_mig.val();
        self.rx_pad.next = self.parser.out_pad.val();
        self.rx_pkey.next = self.parser.out_pkey.val();
        self.rx_fecn.next = self.parser.out_fecn.val();
        self.rx_becn.next = self.parser.out_becn.val();
        self.rx_dest_qp.next = self.parser.out_dest_qp.val();
        self.rx_ack_req.next = self.parser.out_ack_req.val();
        self.rx_xbit.next = self.parser.out_xbit.val();
        self.rx_psn.next = self.parser.out_psn.val();
        self.rx_reth_va.next = self.parser.out_reth_va.val();
        self.rx_reth_rkey.next = self.parser.out_reth_rkey.val();
        self.rx_reth_len.next = self.parser.out_reth_len.val();
        self.rx_imm.next = self.parser.out_imm.val();
        self.rx_aeth_syndrome.next = self.parser.out_aeth_syndrome.val();
        self.rx_aeth_msn.next = self.parser.out_aeth_msn.val();
        self.rx_ext.next = self.parser.out_ext.val();
        self.rx_payload_off.next = self.parser.out_payload_off.val();
        self.rx_payload_len.next = self.parser.out_payload_len.val();
    }
}
