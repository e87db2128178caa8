//! The parts both push caches are built from: what a driver pushes
//! through the push window before its doorbell answers a DMA read of the
//! card's from the card itself (`hw::desc_push`: descriptors, in front of
//! the requester's descriptor reads; `hw::payload_push`: small payloads,
//! in front of the TX path's payload reads).
//!
//! * [`PushStaging`]: sixteen 32-bit words written one by one, zeroed by
//!   a commit (so a driver writes only the nonzero words of the next
//!   push), read whole as one 512-bit beat.
//! * [`PushEntries`]: four entries of a key and a beat: a commit fills the
//!   entry holding the same key, else the oldest; a consumed hit, a drop
//!   verdict of the parent's or a clear frees one.
//! * [`PushAnswer`]: the read port in front of the DMA read arbiter: a
//!   request whose key an entry holds is answered with one beat when no
//!   forwarded read is outstanding (so responses stay in request order),
//!   any other is forwarded unchanged.
//!
//! See `docs/hw/desc_push.md` and `docs/hw/payload_push.md`.

use rust_hdl::prelude::*;

use crate::bus::{DmaReadInitiator, DmaReadTarget};
use crate::tx_path::PAYLOAD_FIFO_BEATS;

/// Entries of either cache (the regmap's `push.entries` and
/// `push.payload_entries`); [`PushEntries`] names each, so this is a
/// check, not a knob.
pub const ENTRIES: usize = 4;
const _: () = assert!(ENTRIES as u32 == contract::regmap::push::ENTRIES);
const _: () = assert!(ENTRIES as u32 == contract::regmap::push::PAYLOAD_ENTRIES);

/// Bits of the count of forwarded reads not yet answered: the requester
/// has at most `DESC_BEATS_OUT` = 64 descriptor beats requested and not
/// taken, the TX path issues a payload read only when its beats fit the
/// payload FIFO (`PAYLOAD_FIFO_BEATS` = 256); each read is at least one
/// beat.
const OUT_BITS: usize = 9;
const _: () = assert!(crate::requester::DESC_BEATS_OUT < 1 << OUT_BITS);
const _: () = assert!(PAYLOAD_FIFO_BEATS < 1 << OUT_BITS);

/// Sixteen staged 32-bit words: word k is bits 32k+31..32k of `staged`.
#[derive(LogicBlock, Default)]
pub struct PushStaging {
    pub clock: Signal<In, Clock>,
    /// Write `data` into word `word`.
    pub write: Signal<In, Bit>,
    pub word: Signal<In, Bits<4>>,
    pub data: Signal<In, Bits<32>>,
    /// Zero every word (the push commits; wins over a write).
    pub clear: Signal<In, Bit>,
    pub staged: Signal<Out, Bits<512>>,
    st0: DFF<Bits<32>>,
    st1: DFF<Bits<32>>,
    st2: DFF<Bits<32>>,
    st3: DFF<Bits<32>>,
    st4: DFF<Bits<32>>,
    st5: DFF<Bits<32>>,
    st6: DFF<Bits<32>>,
    st7: DFF<Bits<32>>,
    st8: DFF<Bits<32>>,
    st9: DFF<Bits<32>>,
    st10: DFF<Bits<32>>,
    st11: DFF<Bits<32>>,
    st12: DFF<Bits<32>>,
    st13: DFF<Bits<32>>,
    st14: DFF<Bits<32>>,
    st15: DFF<Bits<32>>,
}

impl Logic for PushStaging {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, st0, st1, st2, st3, st4, st5, st6, st7, st8, st9, st10, st11, st12, st13, st14, st15);
        if self.write.val() {
            match self.word.val().index() {
                0 => {
                    self.st0.d.next = self.data.val();
                }
                1 => {
                    self.st1.d.next = self.data.val();
                }
                2 => {
                    self.st2.d.next = self.data.val();
                }
                3 => {
                    self.st3.d.next = self.data.val();
                }
                4 => {
                    self.st4.d.next = self.data.val();
                }
                5 => {
                    self.st5.d.next = self.data.val();
                }
                6 => {
                    self.st6.d.next = self.data.val();
                }
                7 => {
                    self.st7.d.next = self.data.val();
                }
                8 => {
                    self.st8.d.next = self.data.val();
                }
                9 => {
                    self.st9.d.next = self.data.val();
                }
                10 => {
                    self.st10.d.next = self.data.val();
                }
                11 => {
                    self.st11.d.next = self.data.val();
                }
                12 => {
                    self.st12.d.next = self.data.val();
                }
                13 => {
                    self.st13.d.next = self.data.val();
                }
                14 => {
                    self.st14.d.next = self.data.val();
                }
                _ => {
                    self.st15.d.next = self.data.val();
                }
            }
        }
        if self.clear.val() {
            self.st0.d.next = 0.into();
            self.st1.d.next = 0.into();
            self.st2.d.next = 0.into();
            self.st3.d.next = 0.into();
            self.st4.d.next = 0.into();
            self.st5.d.next = 0.into();
            self.st6.d.next = 0.into();
            self.st7.d.next = 0.into();
            self.st8.d.next = 0.into();
            self.st9.d.next = 0.into();
            self.st10.d.next = 0.into();
            self.st11.d.next = 0.into();
            self.st12.d.next = 0.into();
            self.st13.d.next = 0.into();
            self.st14.d.next = 0.into();
            self.st15.d.next = 0.into();
        }
        self.staged.next = bit_cast::<512, 32>(self.st0.q.val())
            | (bit_cast::<512, 32>(self.st1.q.val()) << 32)
            | (bit_cast::<512, 32>(self.st2.q.val()) << 64)
            | (bit_cast::<512, 32>(self.st3.q.val()) << 96)
            | (bit_cast::<512, 32>(self.st4.q.val()) << 128)
            | (bit_cast::<512, 32>(self.st5.q.val()) << 160)
            | (bit_cast::<512, 32>(self.st6.q.val()) << 192)
            | (bit_cast::<512, 32>(self.st7.q.val()) << 224)
            | (bit_cast::<512, 32>(self.st8.q.val()) << 256)
            | (bit_cast::<512, 32>(self.st9.q.val()) << 288)
            | (bit_cast::<512, 32>(self.st10.q.val()) << 320)
            | (bit_cast::<512, 32>(self.st11.q.val()) << 352)
            | (bit_cast::<512, 32>(self.st12.q.val()) << 384)
            | (bit_cast::<512, 32>(self.st13.q.val()) << 416)
            | (bit_cast::<512, 32>(self.st14.q.val()) << 448)
            | (bit_cast::<512, 32>(self.st15.q.val()) << 480);
    }
}

/// Four entries of a `K`-bit key and a 512-bit beat.
#[derive(LogicBlock, Default)]
pub struct PushEntries<const K: usize> {
    pub clock: Signal<In, Clock>,
    /// The key a read looks up, and whether the read takes the entry
    /// holding it this cycle (a hit: the entry is consumed).
    pub req_key: Signal<In, Bits<K>>,
    pub consume: Signal<In, Bit>,
    /// A valid entry holds `req_key` (`found`), and its beat.
    pub found: Signal<Out, Bit>,
    pub found_data: Signal<Out, Bits<512>>,
    /// A push: fills the entry holding `commit_key`, else the oldest.
    pub commit: Signal<In, Bit>,
    pub commit_key: Signal<In, Bits<K>>,
    pub commit_data: Signal<In, Bits<512>>,
    /// The parent's drop verdict for entry `i` (it reads `valid_i` and
    /// `key_i`): freed unused.
    pub drop0: Signal<In, Bit>,
    pub drop1: Signal<In, Bit>,
    pub drop2: Signal<In, Bit>,
    pub drop3: Signal<In, Bit>,
    /// Free every entry (wins over a commit in the same cycle).
    pub clear: Signal<In, Bit>,
    pub valid0: Signal<Out, Bit>,
    pub valid1: Signal<Out, Bit>,
    pub valid2: Signal<Out, Bit>,
    pub valid3: Signal<Out, Bit>,
    pub key0: Signal<Out, Bits<K>>,
    pub key1: Signal<Out, Bits<K>>,
    pub key2: Signal<Out, Bits<K>>,
    pub key3: Signal<Out, Bits<K>>,
    /// Pulse: in this cycle one or more entries were freed unused
    /// (dropped, or replaced by a commit); a clear is not counted.
    pub dropped: Signal<Out, Bit>,
    ev0: DFF<Bit>,
    ev1: DFF<Bit>,
    ev2: DFF<Bit>,
    ev3: DFF<Bit>,
    ek0: DFF<Bits<K>>,
    ek1: DFF<Bits<K>>,
    ek2: DFF<Bits<K>>,
    ek3: DFF<Bits<K>>,
    ed0: DFF<Bits<512>>,
    ed1: DFF<Bits<512>>,
    ed2: DFF<Bits<512>>,
    ed3: DFF<Bits<512>>,
    /// The entry the next push fills (round robin: the oldest).
    e_next: DFF<Bits<2>>,
    /// Entry `i` holds the request's key.
    m0: Signal<Local, Bit>,
    m1: Signal<Local, Bit>,
    m2: Signal<Local, Bit>,
    m3: Signal<Local, Bit>,
    /// Entry `i` holds the key a push commits now.
    n0: Signal<Local, Bit>,
    n1: Signal<Local, Bit>,
    n2: Signal<Local, Bit>,
    n3: Signal<Local, Bit>,
    /// The entry a committing push fills.
    fill: Signal<Local, Bits<2>>,
    /// Entry `i` is the one a committing push fills and still holds a
    /// push not consumed in this cycle.
    r0: Signal<Local, Bit>,
    r1: Signal<Local, Bit>,
    r2: Signal<Local, Bit>,
    r3: Signal<Local, Bit>,
}

impl<const K: usize> Logic for PushEntries<K> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ev0, ev1, ev2, ev3, ek0, ek1, ek2, ek3, ed0, ed1, ed2, ed3, e_next);
        self.valid0.next = self.ev0.q.val();
        self.valid1.next = self.ev1.q.val();
        self.valid2.next = self.ev2.q.val();
        self.valid3.next = self.ev3.q.val();
        self.key0.next = self.ek0.q.val();
        self.key1.next = self.ek1.q.val();
        self.key2.next = self.ek2.q.val();
        self.key3.next = self.ek3.q.val();
        // ---- Lookup.
        self.m0.next = self.ev0.q.val() & (self.ek0.q.val() == self.req_key.val());
        self.m1.next = self.ev1.q.val() & (self.ek1.q.val() == self.req_key.val());
        self.m2.next = self.ev2.q.val() & (self.ek2.q.val() == self.req_key.val());
        self.m3.next = self.ev3.q.val() & (self.ek3.q.val() == self.req_key.val());
        self.found.next = self.m0.val() | self.m1.val() | self.m2.val() | self.m3.val();
        if self.m0.val() {
            self.found_data.next = self.ed0.q.val();
        } else if self.m1.val() {
            self.found_data.next = self.ed1.q.val();
        } else if self.m2.val() {
            self.found_data.next = self.ed2.q.val();
        } else {
            self.found_data.next = self.ed3.q.val();
        }
        // ---- A push of a key an entry holds refills that entry; any
        // other fills the oldest.
        self.n0.next = self.ev0.q.val() & (self.ek0.q.val() == self.commit_key.val());
        self.n1.next = self.ev1.q.val() & (self.ek1.q.val() == self.commit_key.val());
        self.n2.next = self.ev2.q.val() & (self.ek2.q.val() == self.commit_key.val());
        self.n3.next = self.ev3.q.val() & (self.ek3.q.val() == self.commit_key.val());
        if self.n0.val() {
            self.fill.next = 0.into();
        } else if self.n1.val() {
            self.fill.next = 1.into();
        } else if self.n2.val() {
            self.fill.next = 2.into();
        } else if self.n3.val() {
            self.fill.next = 3.into();
        } else {
            self.fill.next = self.e_next.q.val();
        }
        self.r0.next =
            self.commit.val() & (self.fill.val() == 0) & self.ev0.q.val() & !(self.consume.val() & self.m0.val());
        self.r1.next =
            self.commit.val() & (self.fill.val() == 1) & self.ev1.q.val() & !(self.consume.val() & self.m1.val());
        self.r2.next =
            self.commit.val() & (self.fill.val() == 2) & self.ev2.q.val() & !(self.consume.val() & self.m2.val());
        self.r3.next =
            self.commit.val() & (self.fill.val() == 3) & self.ev3.q.val() & !(self.consume.val() & self.m3.val());
        // ---- Entry state, by priority: clear, the push's fill, then a hit
        // or a drop frees it.
        if (self.consume.val() & self.m0.val()) | self.drop0.val() {
            self.ev0.d.next = false;
        }
        if (self.consume.val() & self.m1.val()) | self.drop1.val() {
            self.ev1.d.next = false;
        }
        if (self.consume.val() & self.m2.val()) | self.drop2.val() {
            self.ev2.d.next = false;
        }
        if (self.consume.val() & self.m3.val()) | self.drop3.val() {
            self.ev3.d.next = false;
        }
        if self.commit.val() & !(self.n0.val() | self.n1.val() | self.n2.val() | self.n3.val()) {
            self.e_next.d.next = self.e_next.q.val() + 1;
        }
        if self.commit.val() {
            match self.fill.val().index() {
                0 => {
                    self.ev0.d.next = true;
                    self.ek0.d.next = self.commit_key.val();
                    self.ed0.d.next = self.commit_data.val();
                }
                1 => {
                    self.ev1.d.next = true;
                    self.ek1.d.next = self.commit_key.val();
                    self.ed1.d.next = self.commit_data.val();
                }
                2 => {
                    self.ev2.d.next = true;
                    self.ek2.d.next = self.commit_key.val();
                    self.ed2.d.next = self.commit_data.val();
                }
                _ => {
                    self.ev3.d.next = true;
                    self.ek3.d.next = self.commit_key.val();
                    self.ed3.d.next = self.commit_data.val();
                }
            }
        }
        if self.clear.val() {
            self.ev0.d.next = false;
            self.ev1.d.next = false;
            self.ev2.d.next = false;
            self.ev3.d.next = false;
        }
        self.dropped.next = !self.clear.val()
            & (self.drop0.val()
                | self.drop1.val()
                | self.drop2.val()
                | self.drop3.val()
                | self.r0.val()
                | self.r1.val()
                | self.r2.val()
                | self.r3.val());
    }
}

/// The read port a push cache serves, in front of the DMA read arbiter.
#[derive(LogicBlock, Default)]
pub struct PushAnswer {
    pub clock: Signal<In, Clock>,
    /// The reader's port (served here), and toward the arbiter.
    pub s: DmaReadTarget,
    pub m: DmaReadInitiator,
    /// An entry answers `s.req` (the parent's lookup), with this beat and
    /// these lanes.
    pub found: Signal<In, Bit>,
    pub found_data: Signal<In, Bits<512>>,
    pub found_keep: Signal<In, Bits<64>>,
    /// The request is answered from the cache this cycle (the parent
    /// frees the entry).
    pub take_hit: Signal<Out, Bit>,
    /// A request was forwarded in the last cycle: the parent's drop check
    /// of it runs now.
    pub fwd_valid: Signal<Out, Bit>,
    /// Forwarded reads whose last beat has not come back.
    outstanding: DFF<Bits<OUT_BITS>>,
    /// A hit's response beat, held until the reader takes it.
    hit_valid: DFF<Bit>,
    hit_data: DFF<Bits<512>>,
    hit_keep: DFF<Bits<64>>,
    hit_tag: DFF<Bits<8>>,
    fwd: DFF<Bit>,
    forward: Signal<Local, Bit>,
    /// `outstanding` plus one and minus one, computed beside the forward
    /// decision (which comes late, after the key compares and the
    /// arbiter's ready) so that it only picks one.
    out_inc: Signal<Local, Bits<OUT_BITS>>,
    out_dec: Signal<Local, Bits<OUT_BITS>>,
    /// A forwarded read's last beat passes to the reader this cycle.
    out_done: Signal<Local, Bit>,
}

impl Logic for PushAnswer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, outstanding, hit_valid, hit_data, hit_keep, hit_tag, fwd);
        // A hit waits for nothing: with a forwarded read outstanding, or
        // the last one's drop check not done, the read goes to the host.
        self.take_hit.next = self.s.req.valid.val()
            & self.found.val()
            & !self.outstanding.q.val().any()
            & !self.fwd.q.val()
            & !self.hit_valid.q.val();
        // While a hit's beat waits, nothing is forwarded (its answer could
        // otherwise reach the reader first).
        self.m.req.valid.next = self.s.req.valid.val() & !self.take_hit.val() & !self.hit_valid.q.val();
        self.m.req.addr.next = self.s.req.addr.val();
        self.m.req.len.next = self.s.req.len.val();
        self.m.req.tag.next = self.s.req.tag.val();
        self.forward.next = self.m.req.valid.val() & self.m.req.ready.val();
        self.s.req.ready.next = self.take_hit.val() | self.forward.val();
        self.fwd.d.next = self.forward.val();
        self.fwd_valid.next = self.fwd.q.val();
        // ---- Responses: the hit's beat, else the host's (never both: a
        // hit needs no forwarded read outstanding and blocks new ones).
        if self.hit_valid.q.val() {
            self.s.rsp.valid.next = true;
            self.s.rsp.data.next = self.hit_data.q.val();
            self.s.rsp.keep.next = self.hit_keep.q.val();
            self.s.rsp.last.next = true;
            self.s.rsp.tag.next = self.hit_tag.q.val();
        } else {
            self.s.rsp.valid.next = self.m.rsp.valid.val();
            self.s.rsp.data.next = self.m.rsp.data.val();
            self.s.rsp.keep.next = self.m.rsp.keep.val();
            self.s.rsp.last.next = self.m.rsp.last.val();
            self.s.rsp.tag.next = self.m.rsp.tag.val();
        }
        self.m.rsp.ready.next = self.s.rsp.ready.val() & !self.hit_valid.q.val();
        if self.hit_valid.q.val() & self.s.rsp.ready.val() {
            self.hit_valid.d.next = false;
        }
        if self.take_hit.val() {
            self.hit_valid.d.next = true;
            self.hit_tag.d.next = self.s.req.tag.val();
            self.hit_data.d.next = self.found_data.val();
            self.hit_keep.d.next = self.found_keep.val();
        }
        // Forwarded reads in flight: one more per request taken by the
        // arbiter, one fewer per last beat passed to the reader.
        self.out_inc.next = self.outstanding.q.val() + 1;
        self.out_dec.next = self.outstanding.q.val() - 1;
        self.out_done.next = self.m.rsp.valid.val() & self.m.rsp.ready.val() & self.m.rsp.last.val();
        self.outstanding.d.next = self.outstanding.q.val();
        if self.forward.val() & !self.out_done.val() {
            self.outstanding.d.next = self.out_inc.val();
        }
        if !self.forward.val() & self.out_done.val() {
            self.outstanding.d.next = self.out_dec.val();
        }
    }
}
