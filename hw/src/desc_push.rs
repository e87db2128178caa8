//! Descriptor push cache: the descriptors a driver pushes through the
//! push window (`contract::regmap::push`) before its doorbell, kept by the
//! IOVA of their ring slot, answer the requester's one-descriptor read of
//! that slot from the card instead of the host (a PCIe round trip saved
//! per single post). It sits between the requester's descriptor read port
//! and the DMA read arbiter; the requester does not know it is there. See
//! `docs/hw/desc_push.md`.
//!
//! * A read request of one descriptor (64 bytes) whose slot a valid entry
//!   holds is a **hit** when no read this block forwarded is still
//!   outstanding (so the answer cannot pass an earlier read's beats) and
//!   the previous hit's beat has been taken: the request is taken at
//!   once, the entry's descriptor is the one response beat (the
//!   request's tag, `last`) from the next cycle, and the entry is freed
//!   (consumed).
//! * Any other request is **forwarded** unchanged; in the cycle after,
//!   every entry whose slot the read covers is freed (dropped): the host
//!   answers it, and an entry left behind would be stale the next time
//!   the ring passes the slot.
//! * A push of a slot an entry already holds refills that entry; any
//!   other push fills the oldest entry (round robin). Either drops the
//!   push the entry held, if it still held one.
//! * A send-context write (config table 1: a QP reset) clears the cache.

use rust_hdl::prelude::*;

use crate::bus::{ConfigSink, DmaReadInitiator, DmaReadTarget};
use crate::contract_rows::TableId;
use crate::param::Param;
use contract::config::table;
use contract::layout::sqe;
use contract::regmap::push;

/// Entries of the cache (the regmap's `push.entries`); the kernel names
/// each of them, so this is a check, not a knob.
pub const ENTRIES: usize = 4;
const _: () = assert!(ENTRIES as u32 == push::ENTRIES);
/// Bits of a descriptor slot's IOVA the cache keys on (63-6): slots are
/// `sqe::SIZE` = 64 bytes, aligned (the requester's `sq_base` check).
pub const SLOT_BITS: usize = 64 - SLOT_SHIFT;
/// log2 of the descriptor size (the kernel writes it as the literal 6:
/// a kernel cannot name a const in a bit offset).
const SLOT_SHIFT: usize = 6;
const _: () = assert!(1 << SLOT_SHIFT == sqe::SIZE);
/// Bits of the count of forwarded reads not yet answered: the requester
/// has at most `DESC_BEATS_OUT` = 64 descriptor beats requested and not
/// taken, each read at least one beat.
const OUT_BITS: usize = 7;
const _: () = assert!(crate::requester::DESC_BEATS_OUT < 1 << OUT_BITS);
/// Bits of the number of slots a forwarded read covers, `ceil(len / 64)`
/// for a 16-bit `len` (at most 1024).
const COVER_BITS: usize = 11;
/// Bits of the push window's word index (32 words of 4 bytes).
pub const WORD_BITS: usize = 5;
const _: () = assert!(1 << WORD_BITS == push::SIZE as usize / 4);

#[derive(LogicBlock, Default)]
pub struct DescPushCache {
    pub clock: Signal<In, Clock>,
    /// A word written to the push window (the CSR's registered decode):
    /// `push_word` = (address - window) / 4, `push_data` the word.
    pub push_valid: Signal<In, Bit>,
    pub push_word: Signal<In, Bits<WORD_BITS>>,
    pub push_data: Signal<In, Bits<32>>,
    /// Shared config port: a table-1 (send context) row clears the cache.
    pub cfg: ConfigSink,
    /// The requester's descriptor read port (this block serves it).
    pub s: DmaReadTarget,
    /// Toward the DMA read arbiter: the reads that miss.
    pub m: DmaReadInitiator,
    /// Pulse: a read was answered from the cache.
    pub cnt_consumed: Signal<Out, Bit>,
    /// Pulse: one or more entries were dropped unused this cycle.
    pub cnt_dropped: Signal<Out, Bit>,
    // ---- Named values (Verilog localparams).
    t_sq_ctx: TableId<{ table::SQ_CTX }>,
    /// Request length of one descriptor.
    p_one_desc: Param<16, { sqe::SIZE as u64 }>,
    /// Window words: the slot IOVA's low word, and the high word (commit).
    p_word_slot_lo: Param<WORD_BITS, { push::SLOT_LO as u64 / 4 }>,
    p_word_slot_hi: Param<WORD_BITS, { push::SLOT_HI as u64 / 4 }>,
    /// Bytes a descriptor covers minus one: rounds a read length up.
    p_round_up: Param<17, { sqe::SIZE as u64 - 1 }>,
    /// Every byte lane of a hit's beat is valid.
    p_all_lanes: Param<64, { u64::MAX }>,
    // ---- Staged push: the descriptor's 16 words and the slot's low word.
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
    st_slot_lo: DFF<Bits<32>>,
    // ---- The entries: valid, slot (IOVA bits 63-6), descriptor.
    ev0: DFF<Bit>,
    ev1: DFF<Bit>,
    ev2: DFF<Bit>,
    ev3: DFF<Bit>,
    es0: DFF<Bits<SLOT_BITS>>,
    es1: DFF<Bits<SLOT_BITS>>,
    es2: DFF<Bits<SLOT_BITS>>,
    es3: DFF<Bits<SLOT_BITS>>,
    ed0: DFF<Bits<512>>,
    ed1: DFF<Bits<512>>,
    ed2: DFF<Bits<512>>,
    ed3: DFF<Bits<512>>,
    /// The entry the next push fills (round robin: the oldest).
    e_next: DFF<Bits<2>>,
    // ---- Reads.
    /// Forwarded reads whose last beat has not come back.
    outstanding: DFF<Bits<OUT_BITS>>,
    /// A hit's response beat, held until the requester takes it.
    hit_valid: DFF<Bit>,
    hit_data: DFF<Bits<512>>,
    hit_tag: DFF<Bits<8>>,
    /// The read forwarded in the last cycle: its first slot and how many
    /// it covers (the drop check runs on these registers).
    fwd_valid: DFF<Bit>,
    fwd_first: DFF<Bits<SLOT_BITS>>,
    fwd_cover: DFF<Bits<COVER_BITS>>,
    // ---- Combinational.
    req_slot: Signal<Local, Bits<SLOT_BITS>>,
    req_end: Signal<Local, Bits<17>>,
    m0: Signal<Local, Bit>,
    m1: Signal<Local, Bit>,
    m2: Signal<Local, Bit>,
    m3: Signal<Local, Bit>,
    take_hit: Signal<Local, Bit>,
    forward: Signal<Local, Bit>,
    commit: Signal<Local, Bit>,
    clear: Signal<Local, Bit>,
    new_slot: Signal<Local, Bits<SLOT_BITS>>,
    staged: Signal<Local, Bits<512>>,
    d0: Signal<Local, Bits<SLOT_BITS>>,
    d1: Signal<Local, Bits<SLOT_BITS>>,
    d2: Signal<Local, Bits<SLOT_BITS>>,
    d3: Signal<Local, Bits<SLOT_BITS>>,
    /// Entry `i` dropped: covered by the last forwarded read.
    x0: Signal<Local, Bit>,
    x1: Signal<Local, Bit>,
    x2: Signal<Local, Bit>,
    x3: Signal<Local, Bit>,
    /// Entry `i` is the one a committing push fills and still holds a
    /// push not consumed in this cycle (an older copy of the slot, or the
    /// oldest entry of a full cache).
    r0: Signal<Local, Bit>,
    r1: Signal<Local, Bit>,
    r2: Signal<Local, Bit>,
    r3: Signal<Local, Bit>,
    /// `outstanding` plus one and minus one, computed beside the forward
    /// decision (which comes late, after the slot compares and the
    /// arbiter's ready) so that it only picks one.
    out_inc: Signal<Local, Bits<OUT_BITS>>,
    out_dec: Signal<Local, Bits<OUT_BITS>>,
    /// A forwarded read's last beat passes to the requester this cycle.
    out_done: Signal<Local, Bit>,
    /// Entry `i` holds the slot a push commits now.
    n0: Signal<Local, Bit>,
    n1: Signal<Local, Bit>,
    n2: Signal<Local, Bit>,
    n3: Signal<Local, Bit>,
    /// The entry a committing push fills.
    fill: Signal<Local, Bits<2>>,
}

impl Logic for DescPushCache {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            st0,
            st1,
            st2,
            st3,
            st4,
            st5,
            st6,
            st7,
            st8,
            st9,
            st10,
            st11,
            st12,
            st13,
            st14,
            st15,
            st_slot_lo,
            ev0,
            ev1,
            ev2,
            ev3,
            es0,
            es1,
            es2,
            es3,
            ed0,
            ed1,
            ed2,
            ed3,
            e_next,
            outstanding,
            hit_valid,
            hit_data,
            hit_tag,
            fwd_valid,
            fwd_first,
            fwd_cover
        );
        // ---- Lookup of the requester's read.
        self.req_slot.next = self.s.req.addr.val().get_bits::<SLOT_BITS>(6);
        self.m0.next = self.ev0.q.val() & (self.es0.q.val() == self.req_slot.val());
        self.m1.next = self.ev1.q.val() & (self.es1.q.val() == self.req_slot.val());
        self.m2.next = self.ev2.q.val() & (self.es2.q.val() == self.req_slot.val());
        self.m3.next = self.ev3.q.val() & (self.es3.q.val() == self.req_slot.val());
        // A hit waits for nothing: with a forwarded read outstanding, or
        // the last one's drop check not done, the read goes to the host.
        self.take_hit.next = self.s.req.valid.val()
            & (self.s.req.len.val() == self.p_one_desc.val())
            & (self.m0.val() | self.m1.val() | self.m2.val() | self.m3.val())
            & !self.outstanding.q.val().any()
            & !self.fwd_valid.q.val()
            & !self.hit_valid.q.val();
        // While a hit's beat waits, nothing is forwarded (its answer could
        // otherwise reach the requester first).
        self.m.req.valid.next = self.s.req.valid.val() & !self.take_hit.val() & !self.hit_valid.q.val();
        self.m.req.addr.next = self.s.req.addr.val();
        self.m.req.len.next = self.s.req.len.val();
        self.m.req.tag.next = self.s.req.tag.val();
        self.forward.next = self.m.req.valid.val() & self.m.req.ready.val();
        self.s.req.ready.next = self.take_hit.val() | self.forward.val();
        // ---- Responses: the hit's beat, else the host's (never both: a
        // hit needs no forwarded read outstanding and blocks new ones).
        if self.hit_valid.q.val() {
            self.s.rsp.valid.next = true;
            self.s.rsp.data.next = self.hit_data.q.val();
            self.s.rsp.keep.next = self.p_all_lanes.val();
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
            if self.m0.val() {
                self.hit_data.d.next = self.ed0.q.val();
            } else if self.m1.val() {
                self.hit_data.d.next = self.ed1.q.val();
            } else if self.m2.val() {
                self.hit_data.d.next = self.ed2.q.val();
            } else {
                self.hit_data.d.next = self.ed3.q.val();
            }
        }
        // Forwarded reads in flight: one more per request taken by the
        // arbiter, one fewer per last beat passed to the requester.
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
        // The forwarded read's slots, for the drop check of the next cycle.
        self.fwd_valid.d.next = self.forward.val();
        self.fwd_first.d.next = self.req_slot.val();
        self.req_end.next = bit_cast::<17, 16>(self.s.req.len.val()) + self.p_round_up.val();
        self.fwd_cover.d.next = self.req_end.val().get_bits::<COVER_BITS>(6);
        // ---- Pushes: stage the words; the slot's high word commits.
        if self.push_valid.val() {
            match self.push_word.val().index() {
                0 => {
                    self.st0.d.next = self.push_data.val();
                }
                1 => {
                    self.st1.d.next = self.push_data.val();
                }
                2 => {
                    self.st2.d.next = self.push_data.val();
                }
                3 => {
                    self.st3.d.next = self.push_data.val();
                }
                4 => {
                    self.st4.d.next = self.push_data.val();
                }
                5 => {
                    self.st5.d.next = self.push_data.val();
                }
                6 => {
                    self.st6.d.next = self.push_data.val();
                }
                7 => {
                    self.st7.d.next = self.push_data.val();
                }
                8 => {
                    self.st8.d.next = self.push_data.val();
                }
                9 => {
                    self.st9.d.next = self.push_data.val();
                }
                10 => {
                    self.st10.d.next = self.push_data.val();
                }
                11 => {
                    self.st11.d.next = self.push_data.val();
                }
                12 => {
                    self.st12.d.next = self.push_data.val();
                }
                13 => {
                    self.st13.d.next = self.push_data.val();
                }
                14 => {
                    self.st14.d.next = self.push_data.val();
                }
                15 => {
                    self.st15.d.next = self.push_data.val();
                }
                16 => {
                    self.st_slot_lo.d.next = self.push_data.val();
                }
                _ => {}
            }
        }
        self.commit.next = self.push_valid.val() & (self.push_word.val() == self.p_word_slot_hi.val());
        // (Offsets in a kernel are literals: 6 = SLOT_SHIFT, 26 = 32 - 6.)
        self.new_slot.next = (bit_cast::<SLOT_BITS, 32>(self.push_data.val()) << 26)
            | bit_cast::<SLOT_BITS, 26>(self.st_slot_lo.q.val().get_bits::<26>(6));
        // The descriptor a commit stores: word k in bits 32k+31..32k.
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
        self.clear.next = self.cfg.valid.val() & (self.cfg.table.val() == self.t_sq_ctx.val());
        // A push of a slot an entry holds refills that entry; any other
        // fills the oldest.
        self.n0.next = self.ev0.q.val() & (self.es0.q.val() == self.new_slot.val());
        self.n1.next = self.ev1.q.val() & (self.es1.q.val() == self.new_slot.val());
        self.n2.next = self.ev2.q.val() & (self.es2.q.val() == self.new_slot.val());
        self.n3.next = self.ev3.q.val() & (self.es3.q.val() == self.new_slot.val());
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
        // ---- Drops: entries the last forwarded read covered (slot - first
        // < cover, modulo 2^58).
        self.d0.next = self.es0.q.val() - self.fwd_first.q.val();
        self.d1.next = self.es1.q.val() - self.fwd_first.q.val();
        self.d2.next = self.es2.q.val() - self.fwd_first.q.val();
        self.d3.next = self.es3.q.val() - self.fwd_first.q.val();
        self.x0.next = self.ev0.q.val()
            & self.fwd_valid.q.val()
            & (self.d0.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        self.x1.next = self.ev1.q.val()
            & self.fwd_valid.q.val()
            & (self.d1.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        self.x2.next = self.ev2.q.val()
            & self.fwd_valid.q.val()
            & (self.d2.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        self.x3.next = self.ev3.q.val()
            & self.fwd_valid.q.val()
            & (self.d3.val() < bit_cast::<SLOT_BITS, COVER_BITS>(self.fwd_cover.q.val()));
        self.r0.next =
            self.commit.val() & (self.fill.val() == 0) & self.ev0.q.val() & !(self.take_hit.val() & self.m0.val());
        self.r1.next =
            self.commit.val() & (self.fill.val() == 1) & self.ev1.q.val() & !(self.take_hit.val() & self.m1.val());
        self.r2.next =
            self.commit.val() & (self.fill.val() == 2) & self.ev2.q.val() & !(self.take_hit.val() & self.m2.val());
        self.r3.next =
            self.commit.val() & (self.fill.val() == 3) & self.ev3.q.val() & !(self.take_hit.val() & self.m3.val());
        // ---- Entry state, by priority: clear, the push's fill, then a hit
        // or a drop frees it.
        if (self.take_hit.val() & self.m0.val()) | self.x0.val() {
            self.ev0.d.next = false;
        }
        if (self.take_hit.val() & self.m1.val()) | self.x1.val() {
            self.ev1.d.next = false;
        }
        if (self.take_hit.val() & self.m2.val()) | self.x2.val() {
            self.ev2.d.next = false;
        }
        if (self.take_hit.val() & self.m3.val()) | self.x3.val() {
            self.ev3.d.next = false;
        }
        if self.commit.val() & !(self.n0.val() | self.n1.val() | self.n2.val() | self.n3.val()) {
            self.e_next.d.next = self.e_next.q.val() + 1;
        }
        if self.commit.val() {
            // The staged words are zeroed: the next push writes only its
            // nonzero words.
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
            self.st_slot_lo.d.next = 0.into();
            match self.fill.val().index() {
                0 => {
                    self.ev0.d.next = true;
                    self.es0.d.next = self.new_slot.val();
                    self.ed0.d.next = self.staged.val();
                }
                1 => {
                    self.ev1.d.next = true;
                    self.es1.d.next = self.new_slot.val();
                    self.ed1.d.next = self.staged.val();
                }
                2 => {
                    self.ev2.d.next = true;
                    self.es2.d.next = self.new_slot.val();
                    self.ed2.d.next = self.staged.val();
                }
                _ => {
                    self.ev3.d.next = true;
                    self.es3.d.next = self.new_slot.val();
                    self.ed3.d.next = self.staged.val();
                }
            }
        }
        if self.clear.val() {
            self.ev0.d.next = false;
            self.ev1.d.next = false;
            self.ev2.d.next = false;
            self.ev3.d.next = false;
        }
        self.cnt_consumed.next = self.take_hit.val();
        self.cnt_dropped.next = !self.clear.val()
            & (self.x0.val()
                | self.x1.val()
                | self.x2.val()
                | self.x3.val()
                | self.r0.val()
                | self.r1.val()
                | self.r2.val()
                | self.r3.val());
    }
}
