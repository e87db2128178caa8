//! The engine's two resend outputs: the retransmit request (to the
//! requester) and the EV mark (to the EV selector). A lost packet needs
//! both, a trim or out-of-window resend only the first (an MRC 1.0 trim
//! both, its mark a SKIP), a SACK's SETH m field only the second; each is a register
//! with valid/ready, so the engine asks for a resend only while the
//! registers it needs are empty (`rtx_full`, `mark_full`).

use rust_hdl::prelude::*;

use super::{MarkReason, RtxReason};

/// A resend request on `rtx_*`.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct RtxRequest {
    pub qp: Bits<8>,
    pub psn: Bits<24>,
    /// EV of the last transmission.
    pub ev: Bits<7>,
    pub len: Bits<16>,
    pub reason: RtxReason,
}

/// An EV mark on `mark_*`.
#[derive(Copy, Clone, Debug, Default, PartialEq, LogicStruct)]
pub struct EvMark {
    pub qp: Bits<8>,
    pub ev: Bits<7>,
    pub reason: MarkReason,
}

/// The two output registers and the one way of filling them.
#[derive(LogicBlock, Default)]
pub struct ResendQueue {
    pub clock: Signal<In, Clock>,
    /// Queue `request` this cycle (only while `rtx_full` is low, and with
    /// `with_mark` only while `mark_full` is low too).
    pub push: Signal<In, Bit>,
    pub request: Signal<In, RtxRequest>,
    /// Also mark the request's EV, for `mark_reason`.
    pub with_mark: Signal<In, Bit>,
    pub mark_reason: Signal<In, MarkReason>,
    /// Queue `lone_mark` alone, no resend (a SACK's SETH m field; only
    /// while `mark_full` is low, never with `push`).
    pub push_mark: Signal<In, Bit>,
    pub lone_mark: Signal<In, EvMark>,
    pub rtx_full: Signal<Out, Bit>,
    pub mark_full: Signal<Out, Bit>,
    pub rtx_valid: Signal<Out, Bit>,
    pub rtx_ready: Signal<In, Bit>,
    pub rtx: Signal<Out, RtxRequest>,
    pub mark_valid: Signal<Out, Bit>,
    pub mark_ready: Signal<In, Bit>,
    pub mark: Signal<Out, EvMark>,
    rtx_v: DFF<Bit>,
    rtx_r: DFF<RtxRequest>,
    mark_v: DFF<Bit>,
    mark_r: DFF<EvMark>,
}

impl Logic for ResendQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rtx_v, rtx_r, mark_v, mark_r);
        // A register is freed when taken, and refilled in the same cycle
        // by a push.
        if self.rtx_v.q.val() & self.rtx_ready.val() {
            self.rtx_v.d.next = false;
        }
        if self.mark_v.q.val() & self.mark_ready.val() {
            self.mark_v.d.next = false;
        }
        if self.push.val() {
            self.rtx_v.d.next = true;
            self.rtx_r.d.next = self.request.val();
            if self.with_mark.val() {
                self.mark_v.d.next = true;
                self.mark_r.d.next.qp = self.request.val().qp;
                self.mark_r.d.next.ev = self.request.val().ev;
                self.mark_r.d.next.reason = self.mark_reason.val();
            }
        }
        if self.push_mark.val() {
            self.mark_v.d.next = true;
            self.mark_r.d.next = self.lone_mark.val();
        }
        self.rtx_full.next = self.rtx_v.q.val();
        self.mark_full.next = self.mark_v.q.val();
        self.rtx_valid.next = self.rtx_v.q.val();
        self.rtx.next = self.rtx_r.q.val();
        self.mark_valid.next = self.mark_v.q.val();
        self.mark.next = self.mark_r.q.val();
    }
}
