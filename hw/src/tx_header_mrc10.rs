//! MRC 1.0 transport header builder: the decoded word
//! ([`Mrc10RxHeader`], the RX parser's output) in, the BTH and the header
//! chain its opcode selects out, as the bytes
//! `proto::wire::mrc10::frame::emit_headers` writes after the UDP header.
//! See `docs/hw/mrc10-wire.md` (TX side).
//!
//! The inverse of [`crate::rx_parser_mrc10`], with the same field table
//! (`window_fields!`, written with `set_value_w_<f>`): one place names
//! every offset for both directions. Reserved bits and bytes are zero
//! (TVer 0, BTH byte 4 bits 5-0 and byte 8 bits 6 and 3-0, the SETH / NETH
//! / ERTH / PETH reserved bytes, TSETH byte 3), fields outside the
//! opcode's chain are not written whatever the word holds, and the chain
//! flags of the word (`is_write`, `has_imm`, `is_ack`, `is_sack`,
//! `is_nack`, `is_probe`, `is_endpoint`, `has_eeth`, and `ts`) choose the
//! chain, so the sender decides it once. One cycle of latency, a word per
//! cycle. Ethernet / IP / UDP and the ICRC are the legacy builder's
//! (`hw::tx_builder`), unchanged by MRC 1.0; joining the two is the
//! switch step.

use rust_hdl::prelude::*;

use crate::param::Param;
use crate::rx_parser::ByteRev;
use crate::rx_parser_mrc10::{chain, Mrc10RxHeader, WindowFields, WINDOW_BITS};

/// The builder. `out_valid`, `out_data` (transport bytes, byte 0 in bits
/// 7-0, zero past `out_len`) and `out_len` (the chain's length in bytes)
/// follow `in_valid` / `in_hdr` by one cycle.
#[derive(LogicBlock, Default)]
pub struct TxHeaderMrc10 {
    pub clock: Signal<In, Clock>,
    pub in_valid: Signal<In, Bit>,
    pub in_hdr: Signal<In, Mrc10RxHeader>,
    pub out_valid: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<WINDOW_BITS>>,
    pub out_len: Signal<Out, Bits<7>>,
    /// The headers, byte-reversed (transport byte 0 in the top byte): a
    /// big-endian field is one slice, as in the parser.
    w: Signal<Local, Bits<WINDOW_BITS>>,
    len: Signal<Local, Bits<7>>,
    rev: ByteRev<WINDOW_BITS>,
    valid_q: DFF<Bit>,
    data_q: DFF<Bits<WINDOW_BITS>>,
    len_q: DFF<Bits<7>>,
    k_write_end: Param<7, { chain::WRITE_END as u64 }>,
    k_write_end_one: Param<7, { chain::WRITE_END_ONE as u64 }>,
    k_write_end_both: Param<7, { chain::WRITE_END_BOTH as u64 }>,
    k_ack_end: Param<7, { chain::ACK_END as u64 }>,
    k_sack_end: Param<7, { chain::SACK_END as u64 }>,
    k_nack_end: Param<7, { chain::NACK_END as u64 }>,
    k_probe_end: Param<7, { chain::PROBE_END as u64 }>,
    k_erth_end: Param<7, { chain::ERTH_END as u64 }>,
    k_eeth_end: Param<7, { chain::EETH_END as u64 }>,
}

impl Logic for TxHeaderMrc10 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, valid_q, data_q, len_q);
        // Everything not written below is zero: reserved fields and the
        // bytes past the chain.
        self.w.next = 0.into();
        // BTH (TVer and the reserved bits stay 0).
        self.w.next.set_value_w_opcode(self.in_hdr.val().opcode);
        self.w.next.set_value_w_se(self.in_hdr.val().se.into());
        self.w.next.set_value_w_mig(self.in_hdr.val().mig.into());
        self.w.next.set_value_w_pad(self.in_hdr.val().pad);
        self.w.next.set_value_w_pkey(self.in_hdr.val().pkey);
        self.w.next.set_value_w_fecn(self.in_hdr.val().fecn.into());
        self.w.next.set_value_w_becn(self.in_hdr.val().becn.into());
        self.w.next.set_value_w_dest_qp(self.in_hdr.val().dest_qp);
        self.w.next.set_value_w_ack_req(self.in_hdr.val().ack_req.into());
        self.w.next.set_value_w_retransmit(self.in_hdr.val().retransmit.into());
        self.w.next.set_value_w_ts(self.in_hdr.val().ts.into());
        self.w.next.set_value_w_psn(self.in_hdr.val().psn);
        self.len.next = self.k_ack_end.val();
        if self.in_hdr.val().is_write {
            self.w.next.set_value_w_rq_msn(self.in_hdr.val().rq_msn);
            self.w.next.set_value_w_msn(self.in_hdr.val().msn);
            if self.in_hdr.val().ts {
                // A TSETH moves the RETH and ImmDt by its four bytes.
                self.w.next.set_value_w_tx_ts(self.in_hdr.val().tx_ts);
                self.w.next.set_value_w_ts_res(self.in_hdr.val().ts_res.into());
                self.w.next.set_value_w_ts_format(self.in_hdr.val().ts_format);
                self.w.next.set_value_w_va_ts(self.in_hdr.val().va);
                self.w.next.set_value_w_rkey_ts(self.in_hdr.val().rkey);
                self.w.next.set_value_w_dma_len_ts(self.in_hdr.val().dma_len);
                self.len.next = self.k_write_end_one.val();
                if self.in_hdr.val().has_imm {
                    self.w.next.set_value_w_imm_ts(self.in_hdr.val().imm);
                    self.len.next = self.k_write_end_both.val();
                }
            } else {
                self.w.next.set_value_w_va(self.in_hdr.val().va);
                self.w.next.set_value_w_rkey(self.in_hdr.val().rkey);
                self.w.next.set_value_w_dma_len(self.in_hdr.val().dma_len);
                self.len.next = self.k_write_end.val();
                if self.in_hdr.val().has_imm {
                    self.w.next.set_value_w_imm(self.in_hdr.val().imm);
                    self.len.next = self.k_write_end_one.val();
                }
            }
        }
        if self.in_hdr.val().is_ack {
            self.w.next.set_value_w_syndrome(self.in_hdr.val().syndrome);
            self.w.next.set_value_w_aeth_msn(self.in_hdr.val().aeth_msn);
            self.len.next = self.k_ack_end.val();
        }
        if self.in_hdr.val().is_sack | self.in_hdr.val().is_nack {
            // The bytes the SETH and the NETH share.
            self.w.next.set_value_w_ctl_ev(self.in_hdr.val().ctl_ev);
            self.w.next.set_value_w_ctl_sctx(self.in_hdr.val().ctl_sctx);
            self.w.next.set_value_w_ctl_rctx(self.in_hdr.val().ctl_rctx);
            self.w.next.set_value_w_ctl_psn(self.in_hdr.val().ctl_psn);
            self.w.next.set_value_w_ctl_cc_type(self.in_hdr.val().ctl_cc_type);
            self.w.next.set_value_w_ctl_cc_flags(self.in_hdr.val().ctl_cc_flags);
        }
        if self.in_hdr.val().is_sack {
            self.w.next.set_value_w_skip_mode(self.in_hdr.val().skip_mode);
            self.w
                .next
                .set_value_w_probe_response(self.in_hdr.val().probe_response.into());
            self.w.next.set_value_w_ack_psn_offset(self.in_hdr.val().ack_psn_offset);
            self.w.next.set_value_w_mpr(self.in_hdr.val().mpr);
            self.w.next.set_value_w_sack_offset(self.in_hdr.val().sack_offset);
            self.w.next.set_value_w_bitmap(self.in_hdr.val().bitmap);
            self.w.next.set_value_w_echo_ts(self.in_hdr.val().echo_ts);
            self.w.next.set_value_w_ooo_count(self.in_hdr.val().ooo_count);
            self.w.next.set_value_w_restore(self.in_hdr.val().restore.into());
            self.w.next.set_value_w_cwnd_penalty(self.in_hdr.val().cwnd_penalty);
            self.w.next.set_value_w_rcvd_bytes(self.in_hdr.val().rcvd_bytes);
            self.len.next = self.k_sack_end.val();
        }
        if self.in_hdr.val().is_nack {
            self.w.next.set_value_w_nack_reason(self.in_hdr.val().nack_reason);
            self.w.next.set_value_w_vendor_info(self.in_hdr.val().vendor_info);
            self.w.next.set_value_w_nack_ts(self.in_hdr.val().nack_ts);
            self.len.next = self.k_nack_end.val();
        }
        if self.in_hdr.val().is_probe {
            self.w.next.set_value_w_probe_id(self.in_hdr.val().probe_id);
            self.w.next.set_value_w_probe_sctx(self.in_hdr.val().probe_sctx);
            self.w.next.set_value_w_probe_rctx(self.in_hdr.val().probe_rctx);
            self.w.next.set_value_w_probe_ts(self.in_hdr.val().probe_ts);
            self.len.next = self.k_probe_end.val();
        }
        if self.in_hdr.val().is_endpoint {
            self.w.next.set_value_w_ep_op(self.in_hdr.val().ep_op);
            self.w.next.set_value_w_request_id(self.in_hdr.val().request_id);
            self.w
                .next
                .set_value_w_port_status_mask(self.in_hdr.val().port_status_mask);
            self.w.next.set_value_w_ep_ts(self.in_hdr.val().ep_ts);
            self.len.next = self.k_erth_end.val();
            if self.in_hdr.val().has_eeth {
                self.w.next.set_value_w_ev_format(self.in_hdr.val().ev_format);
                self.w.next.set_value_w_ev_port(self.in_hdr.val().ev_port);
                self.w.next.set_value_w_service_time(self.in_hdr.val().service_time);
                self.w.next.set_value_w_eeth_ev(self.in_hdr.val().eeth_ev);
                self.len.next = self.k_eeth_end.val();
            }
        }
        self.rev.i.next = self.w.val();
        self.valid_q.d.next = self.in_valid.val();
        self.data_q.d.next = self.rev.o.val();
        self.len_q.d.next = self.len.val();
        self.out_valid.next = self.valid_q.q.val();
        self.out_data.next = self.data_q.q.val();
        self.out_len.next = self.len_q.q.val();
    }
}
