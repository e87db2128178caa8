//! DMA arbiters: several blocks of the core master host memory (the
//! requester fetches descriptors and payload, the RX buffer places
//! payload, the completion writer writes CQ entries) through the one
//! transaction-level DMA port of `MrcCore`. Two-input arbiters; a tree of
//! them serves more sources. See `docs/hw/dma_arb.md`.
//!
//! * [`DmaReadArb`]: round robin between two read-request sources. The
//!   response must find its way back without the arbiter keeping a list
//!   of outstanding requests, so the source number travels in the tag:
//!   the request's tag goes out as `tag << 1 | source`, and the response
//!   is routed by its tag's bit 0 and handed back as `tag >> 1`. A source
//!   therefore keeps its tags below 128 (below 64 behind two levels).
//!   Responses may come back in any order and interleaved by tag.
//! * [`DmaWriteArb`]: round robin between two write sources. A write is a
//!   request followed by data beats up to `last`; the arbiter hands the
//!   port to one source from its request to its last beat, so the memory
//!   side never sees two writes' beats interleaved. Every request is
//!   followed by at least one beat.
//!
//! Both are combinational pass-throughs (a 2:1 mux and a grant bit; no
//! added latency); the only state is the round-robin priority and the
//! write lock.

use rust_hdl::prelude::*;

/// Two read-request sources `a` and `b` onto the master port `m`.
#[derive(LogicBlock, Default)]
pub struct DmaReadArb {
    pub clock: Signal<In, Clock>,
    pub a_req_valid: Signal<In, Bit>,
    pub a_req_ready: Signal<Out, Bit>,
    pub a_req_addr: Signal<In, Bits<64>>,
    pub a_req_len: Signal<In, Bits<16>>,
    pub a_req_tag: Signal<In, Bits<8>>,
    pub a_rsp_valid: Signal<Out, Bit>,
    pub a_rsp_ready: Signal<In, Bit>,
    pub a_rsp_data: Signal<Out, Bits<512>>,
    pub a_rsp_keep: Signal<Out, Bits<64>>,
    pub a_rsp_last: Signal<Out, Bit>,
    pub a_rsp_tag: Signal<Out, Bits<8>>,
    pub b_req_valid: Signal<In, Bit>,
    pub b_req_ready: Signal<Out, Bit>,
    pub b_req_addr: Signal<In, Bits<64>>,
    pub b_req_len: Signal<In, Bits<16>>,
    pub b_req_tag: Signal<In, Bits<8>>,
    pub b_rsp_valid: Signal<Out, Bit>,
    pub b_rsp_ready: Signal<In, Bit>,
    pub b_rsp_data: Signal<Out, Bits<512>>,
    pub b_rsp_keep: Signal<Out, Bits<64>>,
    pub b_rsp_last: Signal<Out, Bit>,
    pub b_rsp_tag: Signal<Out, Bits<8>>,
    pub m_req_valid: Signal<Out, Bit>,
    pub m_req_ready: Signal<In, Bit>,
    pub m_req_addr: Signal<Out, Bits<64>>,
    pub m_req_len: Signal<Out, Bits<16>>,
    pub m_req_tag: Signal<Out, Bits<8>>,
    pub m_rsp_valid: Signal<In, Bit>,
    pub m_rsp_ready: Signal<Out, Bit>,
    pub m_rsp_data: Signal<In, Bits<512>>,
    pub m_rsp_keep: Signal<In, Bits<64>>,
    pub m_rsp_last: Signal<In, Bit>,
    pub m_rsp_tag: Signal<In, Bits<8>>,
    /// Round robin: `b` goes first on a tie when set.
    prio_b: DFF<Bit>,
    grant_b: Signal<Local, Bit>,
}

impl Logic for DmaReadArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, prio_b);
        self.grant_b.next = self.b_req_valid.val() & (!self.a_req_valid.val() | self.prio_b.q.val());
        self.m_req_valid.next = self.a_req_valid.val() | self.b_req_valid.val();
        if self.grant_b.val() {
            self.m_req_addr.next = self.b_req_addr.val();
            self.m_req_len.next = self.b_req_len.val();
            self.m_req_tag.next = (self.b_req_tag.val() << 1) | 1;
        } else {
            self.m_req_addr.next = self.a_req_addr.val();
            self.m_req_len.next = self.a_req_len.val();
            self.m_req_tag.next = self.a_req_tag.val() << 1;
        }
        self.a_req_ready.next = self.m_req_ready.val() & !self.grant_b.val();
        self.b_req_ready.next = self.m_req_ready.val() & self.grant_b.val();
        if self.m_req_valid.val() & self.m_req_ready.val() {
            self.prio_b.d.next = !self.grant_b.val();
        }
        // Responses: routed by the tag's bit 0.
        self.a_rsp_data.next = self.m_rsp_data.val();
        self.b_rsp_data.next = self.m_rsp_data.val();
        self.a_rsp_keep.next = self.m_rsp_keep.val();
        self.b_rsp_keep.next = self.m_rsp_keep.val();
        self.a_rsp_last.next = self.m_rsp_last.val();
        self.b_rsp_last.next = self.m_rsp_last.val();
        self.a_rsp_tag.next = self.m_rsp_tag.val() >> 1;
        self.b_rsp_tag.next = self.m_rsp_tag.val() >> 1;
        self.a_rsp_valid.next = self.m_rsp_valid.val() & !self.m_rsp_tag.val().get_bit(0);
        self.b_rsp_valid.next = self.m_rsp_valid.val() & self.m_rsp_tag.val().get_bit(0);
        if self.m_rsp_tag.val().get_bit(0) {
            self.m_rsp_ready.next = self.b_rsp_ready.val();
        } else {
            self.m_rsp_ready.next = self.a_rsp_ready.val();
        }
    }
}

/// Two write sources `a` and `b` onto the master port `m`, one whole
/// write (request and beats up to `last`) at a time.
#[derive(LogicBlock, Default)]
pub struct DmaWriteArb {
    pub clock: Signal<In, Clock>,
    pub a_req_valid: Signal<In, Bit>,
    pub a_req_ready: Signal<Out, Bit>,
    pub a_req_addr: Signal<In, Bits<64>>,
    pub a_req_len: Signal<In, Bits<16>>,
    pub a_data_valid: Signal<In, Bit>,
    pub a_data_ready: Signal<Out, Bit>,
    pub a_data: Signal<In, Bits<512>>,
    pub a_keep: Signal<In, Bits<64>>,
    pub a_last: Signal<In, Bit>,
    pub b_req_valid: Signal<In, Bit>,
    pub b_req_ready: Signal<Out, Bit>,
    pub b_req_addr: Signal<In, Bits<64>>,
    pub b_req_len: Signal<In, Bits<16>>,
    pub b_data_valid: Signal<In, Bit>,
    pub b_data_ready: Signal<Out, Bit>,
    pub b_data: Signal<In, Bits<512>>,
    pub b_keep: Signal<In, Bits<64>>,
    pub b_last: Signal<In, Bit>,
    pub m_req_valid: Signal<Out, Bit>,
    pub m_req_ready: Signal<In, Bit>,
    pub m_req_addr: Signal<Out, Bits<64>>,
    pub m_req_len: Signal<Out, Bits<16>>,
    pub m_data_valid: Signal<Out, Bit>,
    pub m_data_ready: Signal<In, Bit>,
    pub m_data: Signal<Out, Bits<512>>,
    pub m_keep: Signal<Out, Bits<64>>,
    pub m_last: Signal<Out, Bit>,
    /// Round robin: `b` goes first on a tie when set.
    prio_b: DFF<Bit>,
    /// A request was taken; its beats are passing (until `last`).
    busy: DFF<Bit>,
    /// Owner of the port while `busy`.
    owner_b: DFF<Bit>,
    grant_b: Signal<Local, Bit>,
}

impl Logic for DmaWriteArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, prio_b, busy, owner_b);
        self.grant_b.next = self.b_req_valid.val() & (!self.a_req_valid.val() | self.prio_b.q.val());
        // Request channel: open only between writes.
        self.m_req_valid.next = !self.busy.q.val() & (self.a_req_valid.val() | self.b_req_valid.val());
        if self.grant_b.val() {
            self.m_req_addr.next = self.b_req_addr.val();
            self.m_req_len.next = self.b_req_len.val();
        } else {
            self.m_req_addr.next = self.a_req_addr.val();
            self.m_req_len.next = self.a_req_len.val();
        }
        self.a_req_ready.next = !self.busy.q.val() & self.m_req_ready.val() & !self.grant_b.val();
        self.b_req_ready.next = !self.busy.q.val() & self.m_req_ready.val() & self.grant_b.val();
        if self.m_req_valid.val() & self.m_req_ready.val() {
            self.busy.d.next = true;
            self.owner_b.d.next = self.grant_b.val();
            self.prio_b.d.next = !self.grant_b.val();
        }
        // Data channel: the owner's beats only.
        if self.owner_b.q.val() {
            self.m_data_valid.next = self.busy.q.val() & self.b_data_valid.val();
            self.m_data.next = self.b_data.val();
            self.m_keep.next = self.b_keep.val();
            self.m_last.next = self.b_last.val();
        } else {
            self.m_data_valid.next = self.busy.q.val() & self.a_data_valid.val();
            self.m_data.next = self.a_data.val();
            self.m_keep.next = self.a_keep.val();
            self.m_last.next = self.a_last.val();
        }
        self.a_data_ready.next = self.busy.q.val() & !self.owner_b.q.val() & self.m_data_ready.val();
        self.b_data_ready.next = self.busy.q.val() & self.owner_b.q.val() & self.m_data_ready.val();
        if self.m_data_valid.val() & self.m_data_ready.val() & self.m_last.val() {
            self.busy.d.next = false;
        }
    }
}
