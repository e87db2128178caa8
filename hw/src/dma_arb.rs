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

use crate::bus::{DmaReadInitiator, DmaReadTarget, DmaWriteInitiator, DmaWriteTarget};

/// Two read-request sources `a` and `b` onto the master port `m`.
#[derive(LogicBlock, Default)]
pub struct DmaReadArb {
    pub clock: Signal<In, Clock>,
    pub a: DmaReadTarget,
    pub b: DmaReadTarget,
    pub m: DmaReadInitiator,
    /// Round robin: `b` goes first on a tie when set.
    prio_b: DFF<Bit>,
    grant_b: Signal<Local, Bit>,
}

impl Logic for DmaReadArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, prio_b);
        self.grant_b.next = self.b.req.valid.val() & (!self.a.req.valid.val() | self.prio_b.q.val());
        self.m.req.valid.next = self.a.req.valid.val() | self.b.req.valid.val();
        if self.grant_b.val() {
            self.m.req.addr.next = self.b.req.addr.val();
            self.m.req.len.next = self.b.req.len.val();
            self.m.req.tag.next = (self.b.req.tag.val() << 1) | 1;
        } else {
            self.m.req.addr.next = self.a.req.addr.val();
            self.m.req.len.next = self.a.req.len.val();
            self.m.req.tag.next = self.a.req.tag.val() << 1;
        }
        self.a.req.ready.next = self.m.req.ready.val() & !self.grant_b.val();
        self.b.req.ready.next = self.m.req.ready.val() & self.grant_b.val();
        if self.m.req.valid.val() & self.m.req.ready.val() {
            self.prio_b.d.next = !self.grant_b.val();
        }
        // Responses: routed by the tag's bit 0.
        self.a.rsp.data.next = self.m.rsp.data.val();
        self.b.rsp.data.next = self.m.rsp.data.val();
        self.a.rsp.keep.next = self.m.rsp.keep.val();
        self.b.rsp.keep.next = self.m.rsp.keep.val();
        self.a.rsp.last.next = self.m.rsp.last.val();
        self.b.rsp.last.next = self.m.rsp.last.val();
        self.a.rsp.tag.next = self.m.rsp.tag.val() >> 1;
        self.b.rsp.tag.next = self.m.rsp.tag.val() >> 1;
        self.a.rsp.valid.next = self.m.rsp.valid.val() & !self.m.rsp.tag.val().get_bit(0);
        self.b.rsp.valid.next = self.m.rsp.valid.val() & self.m.rsp.tag.val().get_bit(0);
        if self.m.rsp.tag.val().get_bit(0) {
            self.m.rsp.ready.next = self.b.rsp.ready.val();
        } else {
            self.m.rsp.ready.next = self.a.rsp.ready.val();
        }
    }
}

/// Two write sources `a` and `b` onto the master port `m`, one whole
/// write (request and beats up to `last`) at a time.
#[derive(LogicBlock, Default)]
pub struct DmaWriteArb {
    pub clock: Signal<In, Clock>,
    pub a: DmaWriteTarget,
    pub b: DmaWriteTarget,
    pub m: DmaWriteInitiator,
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
        self.grant_b.next = self.b.req.valid.val() & (!self.a.req.valid.val() | self.prio_b.q.val());
        // Request channel: open only between writes.
        self.m.req.valid.next = !self.busy.q.val() & (self.a.req.valid.val() | self.b.req.valid.val());
        if self.grant_b.val() {
            self.m.req.addr.next = self.b.req.addr.val();
            self.m.req.len.next = self.b.req.len.val();
        } else {
            self.m.req.addr.next = self.a.req.addr.val();
            self.m.req.len.next = self.a.req.len.val();
        }
        self.a.req.ready.next = !self.busy.q.val() & self.m.req.ready.val() & !self.grant_b.val();
        self.b.req.ready.next = !self.busy.q.val() & self.m.req.ready.val() & self.grant_b.val();
        if self.m.req.valid.val() & self.m.req.ready.val() {
            self.busy.d.next = true;
            self.owner_b.d.next = self.grant_b.val();
            self.prio_b.d.next = !self.grant_b.val();
        }
        // Data channel: the owner's beats only.
        if self.owner_b.q.val() {
            self.m.beat.valid.next = self.busy.q.val() & self.b.beat.valid.val();
            self.m.beat.data.next = self.b.beat.data.val();
            self.m.beat.keep.next = self.b.beat.keep.val();
            self.m.beat.last.next = self.b.beat.last.val();
        } else {
            self.m.beat.valid.next = self.busy.q.val() & self.a.beat.valid.val();
            self.m.beat.data.next = self.a.beat.data.val();
            self.m.beat.keep.next = self.a.beat.keep.val();
            self.m.beat.last.next = self.a.beat.last.val();
        }
        self.a.beat.ready.next = self.busy.q.val() & !self.owner_b.q.val() & self.m.beat.ready.val();
        self.b.beat.ready.next = self.busy.q.val() & self.owner_b.q.val() & self.m.beat.ready.val();
        if self.m.beat.valid.val() & self.m.beat.ready.val() & self.m.beat.last.val() {
            self.busy.d.next = false;
        }
    }
}
