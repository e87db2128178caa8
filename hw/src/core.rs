//! Top `MrcCore` (first cut): the RX header parser feeding the CSR
//! block's counters, with the MAC RX stream, the CSR port and the parser's
//! record as ports. The DMA interface, TX path, doorbells and the other
//! blocks of the hw issue are not here yet. See `docs/hw/README.md`.

use rust_hdl::prelude::*;

use crate::csr::{BuildInfo, Csr};
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
    // CSR port (see csr.md).
    pub csr_wr_en: Signal<In, Bit>,
    pub csr_wr_addr: Signal<In, Bits<ADDR_BITS>>,
    pub csr_wr_data: Signal<In, Bits<32>>,
    pub csr_rd_en: Signal<In, Bit>,
    pub csr_rd_addr: Signal<In, Bits<ADDR_BITS>>,
    pub csr_rd_data: Signal<Out, Bits<32>>,
    pub csr_rd_valid: Signal<Out, Bit>,
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
    parser: RxParser,
    csr: Csr,
}

impl MrcCore {
    pub fn new(build: BuildInfo) -> MrcCore {
        assert_eq!((counter_slot("rx_parser_ok"), counter_slot("rx_parser_drop")), (0, 1));
        MrcCore {
            clock: Default::default(),
            s_rx_tdata: Default::default(),
            s_rx_tkeep: Default::default(),
            s_rx_tlast: Default::default(),
            s_rx_tvalid: Default::default(),
            s_rx_tready: Default::default(),
            csr_wr_en: Default::default(),
            csr_wr_addr: Default::default(),
            csr_wr_data: Default::default(),
            csr_rd_en: Default::default(),
            csr_rd_addr: Default::default(),
            csr_rd_data: Default::default(),
            csr_rd_valid: Default::default(),
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
            parser: Default::default(),
            csr: Csr::new(build),
        }
    }
}

impl Logic for MrcCore {
    #[hdl_gen]
    fn update(&mut self) {
        self.parser.clock.next = self.clock.val();
        self.csr.clock.next = self.clock.val();
        self.parser.s_tdata.next = self.s_rx_tdata.val();
        self.parser.s_tkeep.next = self.s_rx_tkeep.val();
        self.parser.s_tlast.next = self.s_rx_tlast.val();
        self.parser.s_tvalid.next = self.s_rx_tvalid.val();
        self.s_rx_tready.next = self.parser.s_tready.val();
        self.csr.wr_en.next = self.csr_wr_en.val();
        self.csr.wr_addr.next = self.csr_wr_addr.val();
        self.csr.wr_data.next = self.csr_wr_data.val();
        self.csr.rd_en.next = self.csr_rd_en.val();
        self.csr.rd_addr.next = self.csr_rd_addr.val();
        self.csr_rd_data.next = self.csr.rd_data.val();
        self.csr_rd_valid.next = self.csr.rd_valid.val();
        // Counter slots 0 and 1 (`regmap::COUNTERS`: rx_parser_ok,
        // rx_parser_drop; checked by `new`); the blocks owning the other
        // counters are not in the top yet.
        self.csr.cnt_inc.next = bit_cast::<{ N_COUNTERS }, 1>(self.parser.out_valid.val().into())
            | (bit_cast::<{ N_COUNTERS }, 1>(self.parser.out_drop.val().into()) << 1);
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
