//! Ring writer: appends fixed-size entries to host-memory rings with a
//! phase bit, for the completion queues and the EV-event queue (the entry
//! layouts are `contract::layout`'s `cqe` and `ev_event`; the caller packs the
//! entry, this block owns the ring state). See `docs/hw/ring_writer.md`.
//!
//! Per ring (256 rings, by an 8-bit index): base IOVA and log2 of the slot
//! count (written by the driver through the config port), the producer
//! index (free-running 32-bit, in the block), the consumer index (written
//! by the driver through the config port as it consumes entries). An entry
//! goes to slot `pi mod size` at `base + slot * entry_bytes`, with bit 0
//! of its byte 0 set to the pass's phase: 1 on the first pass over the
//! ring, 0 on the second, and so on, so the driver, which zeroes the ring,
//! finds a new entry where the phase differs from the previous pass's.
//!
//! A full ring (`pi - ci == size`) drops the entry and pulses
//! `cnt_overflow` (verbs treats a CQ overrun as fatal; the driver sees the
//! counter). Entries are written one at a time: a sequencer of 4 states,
//! so one entry every 4 cycles at best with the DMA port always ready;
//! completions and EV events come per message or per path event, not per
//! packet, so this is not the packet rate.

use contract::config::ring;
use contract::field::span;
use contract::layout::{cqe, ev_event};
use rust_hdl::prelude::*;

use crate::bus::DmaWriteInitiator;

use crate::bus::ConfigSink;

use crate::contract_rows::{CqeRecord, RingConsumerRow, RingRow};

/// Rings per writer (8-bit ring index).
pub const RINGS: usize = 256;

/// Bits of the ring set-up row the block keeps per ring (config rows of
/// its table, `contract::config::ring`, `cfg_index` bit 15 clear; bit 15
/// set: `contract::config::ring_consumer`). Writing a set-up row resets
/// the ring's producer index to 0.
pub const RING_ROW_BITS: usize = span(ring::FIELDS);

// One phase accessor serves both entry kinds.
const _: () = assert!(cqe::PHASE.bit() == ev_event::PHASE.bit() && cqe::PHASE.bits == ev_event::PHASE.bits);

#[derive(LogicBlock)]
pub struct RingWriter {
    pub clock: Signal<In, Clock>,
    pub cfg: ConfigSink,
    /// Entry to append (bit 0 is overwritten by the phase).
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_ring: Signal<In, Bits<8>>,
    pub in_entry: Signal<In, Bits<256>>,
    pub dma_wr: DmaWriteInitiator,
    /// An entry was written (pulse).
    pub cnt_written: Signal<Out, Bit>,
    /// An entry was dropped: ring full (pulse).
    pub cnt_overflow: Signal<Out, Bit>,
    // Ring state.
    ring_ram: RAM<Bits<RING_ROW_BITS>, 8>,
    pi_ram: RAM<Bits<32>, 8>,
    ci_ram: RAM<Bits<32>, 8>,
    // Sequencer: 0 idle, 1 read, 2 request, 3 data.
    state: DFF<Bits<2>>,
    ring: DFF<Bits<8>>,
    entry: DFF<Bits<256>>,
    addr: DFF<Bits<64>>,
    // Combinational helpers.
    used: Signal<Local, Bits<32>>,
    log2: Signal<Local, Bits<5>>,
    slot_mask: Signal<Local, Bits<32>>,
    full: Signal<Local, Bit>,
    /// Passes over the ring so far (`pi >> log2`).
    pass: Signal<Local, Bits<32>>,
    phase: Signal<Local, Bit>,
    cfg_ring_hit: Signal<Local, Bit>,
    cfg_ci_hit: Signal<Local, Bit>,
    c_table: Constant<Bits<4>>,
    /// log2 of the entry size in bytes.
    c_shift: Constant<Bits<64>>,
    c_len: Constant<Bits<16>>,
    c_keep: Constant<Bits<64>>,
    c_ones: Constant<Bits<32>>,
}

impl RingWriter {
    /// A writer for entries of `2^log2_entry` bytes (16 or 32), configured
    /// through config table `table`.
    pub fn new(table: u8, log2_entry: u32) -> RingWriter {
        assert!((4..=6).contains(&log2_entry) && table < 16);
        let bytes = 1u64 << log2_entry;
        RingWriter {
            clock: Default::default(),
            cfg: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_ring: Default::default(),
            in_entry: Default::default(),
            dma_wr: Default::default(),
            cnt_written: Default::default(),
            cnt_overflow: Default::default(),
            ring_ram: Default::default(),
            pi_ram: Default::default(),
            ci_ram: Default::default(),
            state: Default::default(),
            ring: Default::default(),
            entry: Default::default(),
            addr: Default::default(),
            used: Default::default(),
            log2: Default::default(),
            slot_mask: Default::default(),
            full: Default::default(),
            pass: Default::default(),
            phase: Default::default(),
            cfg_ring_hit: Default::default(),
            cfg_ci_hit: Default::default(),
            c_table: Constant::new(u64::from(table).into()),
            c_shift: Constant::new(u64::from(log2_entry).into()),
            c_len: Constant::new(bytes.into()),
            c_ones: Constant::new(0xFFFF_FFFFu64.into()),
            c_keep: Constant::new(if bytes >= 64 { u64::MAX } else { (1u64 << bytes) - 1 }.into()),
        }
    }
}

impl Logic for RingWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, ring, entry, addr);
        self.ring_ram.read_clock.next = self.clock.val();
        self.ring_ram.write_clock.next = self.clock.val();
        self.pi_ram.read_clock.next = self.clock.val();
        self.pi_ram.write_clock.next = self.clock.val();
        self.ci_ram.read_clock.next = self.clock.val();
        self.ci_ram.write_clock.next = self.clock.val();
        // Reads: default to the ring being served (data one cycle later).
        self.ring_ram.read_address.next = self.ring.q.val();
        self.pi_ram.read_address.next = self.ring.q.val();
        self.ci_ram.read_address.next = self.ring.q.val();
        // Config writes (any cycle; a ring reset wins over a producer-index
        // update in the same cycle: the driver resets only idle rings).
        self.cfg_ring_hit.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.c_table.val()) & !self.cfg.index.val().get_bit(15);
        self.cfg_ci_hit.next =
            self.cfg.valid.val() & (self.cfg.table.val() == self.c_table.val()) & self.cfg.index.val().get_bit(15);
        self.ring_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.ring_ram.write_data.next = self.cfg.data.val().get_bits::<RING_ROW_BITS>(0);
        self.ring_ram.write_enable.next = self.cfg_ring_hit.val();
        self.ci_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
        self.ci_ram.write_data.next = self.cfg.data.val().get_value_ring_consumer_consumer();
        self.ci_ram.write_enable.next = self.cfg_ci_hit.val();
        self.pi_ram.write_address.next = self.ring.q.val();
        self.pi_ram.write_data.next = self.pi_ram.read_data.val() + 1;
        self.pi_ram.write_enable.next = false;
        // Ring arithmetic on the read state.
        self.log2.next = bit_cast::<5, 8>(self.ring_ram.read_data.val().get_value_ring_log2_slots());
        self.used.next = self.pi_ram.read_data.val() - self.ci_ram.read_data.val();
        self.slot_mask.next = !(self.c_ones.val() << bit_cast::<32, 5>(self.log2.val()));
        self.full.next = (self.used.val() & !self.slot_mask.val()).any();
        self.pass.next = self.pi_ram.read_data.val() >> bit_cast::<32, 5>(self.log2.val());
        self.phase.next = !self.pass.val().get_bit(0);
        self.in_ready.next = false;
        self.dma_wr.req.valid.next = false;
        self.dma_wr.beat.valid.next = false;
        self.dma_wr.req.addr.next = self.addr.q.val();
        self.dma_wr.req.len.next = self.c_len.val();
        self.dma_wr.beat.data.next = bit_cast::<512, 256>(self.entry.q.val());
        self.dma_wr.beat.keep.next = self.c_keep.val();
        self.dma_wr.beat.last.next = true;
        self.cnt_written.next = false;
        self.cnt_overflow.next = false;
        if self.state.q.val() == 0 {
            // IDLE: take an entry and read its ring's state.
            self.in_ready.next = true;
            if self.in_valid.val() {
                self.ring.d.next = self.in_ring.val();
                self.entry.d.next = self.in_entry.val();
                self.ring_ram.read_address.next = self.in_ring.val();
                self.pi_ram.read_address.next = self.in_ring.val();
                self.ci_ram.read_address.next = self.in_ring.val();
                self.state.d.next = 1.into();
            }
        } else if self.state.q.val() == 1 {
            // READ: the ring's state is out of the RAMs. A ring set-up in
            // this cycle owns the producer-index write port: wait a cycle
            // (the RAM is re-read at `ring`, so a reset of this very ring
            // is seen).
            if self.cfg_ring_hit.val() {
                self.state.d.next = 1.into();
            } else if self.full.val() {
                self.cnt_overflow.next = true;
                self.state.d.next = 0.into();
            } else {
                self.addr.d.next = self.ring_ram.read_data.val().get_value_ring_base()
                    + (bit_cast::<64, 32>(self.pi_ram.read_data.val() & self.slot_mask.val()) << self.c_shift.val());
                // The phase bit (the same bit of CQEs and EV events).
                if self.phase.val() {
                    self.entry.d.next.set_value_cqe_phase(1.into());
                } else {
                    self.entry.d.next.set_value_cqe_phase(0.into());
                }
                self.pi_ram.write_enable.next = true;
                self.state.d.next = 2.into();
            }
        } else if self.state.q.val() == 2 {
            self.dma_wr.req.valid.next = true;
            if self.dma_wr.req.ready.val() {
                self.state.d.next = 3.into();
            }
        } else {
            self.dma_wr.beat.valid.next = true;
            if self.dma_wr.beat.ready.val() {
                self.cnt_written.next = true;
                self.state.d.next = 0.into();
            }
        }
        // A ring (re)configured: its producer index restarts at 0.
        if self.cfg_ring_hit.val() {
            self.pi_ram.write_address.next = bit_cast::<8, 16>(self.cfg.index.val());
            self.pi_ram.write_data.next = 0.into();
            self.pi_ram.write_enable.next = true;
        }
    }
}

impl Default for RingWriter {
    /// The completion-queue instance: 32-byte entries, config table
    /// `contract::config::table::CQ_RING`.
    fn default() -> Self {
        RingWriter::new(contract::config::table::CQ_RING, 5)
    }
}
