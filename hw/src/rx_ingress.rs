//! RX ingress admission: the one place inside the core where a received
//! frame may be dropped. The MAC cannot be held, so a frame that arrives
//! when the RX pipeline has no guaranteed room for it is discarded here,
//! whole, at its first beat (never after a beat of it was passed on), and
//! counted as the link's drop (`cnt_discard`, CSR counter `rx_discards`;
//! those refused for want of a join credit also `cnt_discard_join`,
//! `rx_discards_join`).
//! A frame is admitted only when both of its halves have room downstream:
//! a credit of the RX path's join (its two join FIFOs hold one entry per
//! admitted frame until the frame is joined, `joined`) and room in the RX
//! buffer for a frame of the largest size (`buf_room_beats`,
//! `buf_room_frames`). So the join FIFOs never overflow and the RX buffer
//! never drops a frame for lack of room. See `docs/hw/rx_path.md`
//! ("Ingress admission").

use rust_hdl::prelude::*;

use crate::bus::{AxisSink, AxisSource};
use crate::rx_path::{JOIN_DEPTH, JOIN_PTR_BITS};

/// Largest frame the admission reserves RX buffer room for: a 9,216-byte
/// jumbo frame (the usual MAC maximum) in 64-byte beats. A longer frame is
/// admitted too, and the RX buffer may still drop it (`rx_buffer_full`).
pub const MAX_FRAME_BEATS: u64 = 9216 / 64;
/// The RX buffer's room figures are registered there and the admission
/// decision is registered here (`gate`), so the room seen is up to two
/// cycles old: two beats and two frames more are reserved (each cycle
/// stores at most one beat and ends at most one frame).
pub const ROOM_SLACK: u64 = 2;
/// Free ring beats the RX buffer must report to admit a frame.
pub const ADMIT_BEATS: u64 = MAX_FRAME_BEATS + ROOM_SLACK;
/// Free descriptor slots the RX buffer must report to admit a frame.
pub const ADMIT_FRAMES: u64 = 1 + ROOM_SLACK;

/// Bits of the credit counter (0..=`JOIN_DEPTH`).
pub const CREDIT_BITS: usize = JOIN_PTR_BITS;
const _: () = assert!(JOIN_DEPTH < 1 << CREDIT_BITS);

/// The admission. Ports in `docs/hw/rx_path.md` ("Ingress admission").
#[derive(LogicBlock)]
pub struct RxIngress {
    pub clock: Signal<In, Clock>,
    /// The received stream (after fault injection); never held for a
    /// discarded frame.
    pub s_axis: AxisSink,
    /// The admitted frames, to the parser and the RX buffer (a broadcast).
    pub m_axis: AxisSource,
    /// One pulse per frame whose two records left the RX path's join
    /// FIFOs: its credit comes back.
    pub joined: Signal<In, Bit>,
    /// Free beats of the RX buffer's ring (registered there).
    pub buf_room_beats: Signal<In, Bits<16>>,
    /// Free descriptor slots of the RX buffer (registered there).
    pub buf_room_frames: Signal<In, Bits<16>>,
    /// Pulse: a frame was discarded whole at its first beat.
    pub cnt_discard: Signal<Out, Bit>,
    /// Pulse with `cnt_discard` when the frame was refused for want of a
    /// join credit (whatever the buffer's room); the other discards lacked
    /// only buffer room.
    pub cnt_discard_join: Signal<Out, Bit>,
    /// Admitted frames not yet joined (for the tests and the docs).
    pub in_flight: Signal<Out, Bits<CREDIT_BITS>>,
    c_admit_beats: Constant<Bits<16>>,
    c_admit_frames: Constant<Bits<16>>,
    c_depth: Constant<Bits<CREDIT_BITS>>,
    c_depth_less_one: Constant<Bits<CREDIT_BITS>>,
    /// A frame's beats are arriving (the next beat is not a first beat).
    in_frame: DFF<Bit>,
    /// Beats of this cycle pass (decided one cycle ahead: for a first beat
    /// the admission, inside a frame the frame's decision).
    gate: DFF<Bit>,
    credits_used: DFF<Bits<CREDIT_BITS>>,
    /// The join-credit half of `gate`'s decision (why a refusal refused).
    gate_credit: DFF<Bit>,
    k_discard: DFF<Bit>,
    k_discard_join: DFF<Bit>,
    take: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    admit_now: Signal<Local, Bit>,
    next_first: Signal<Local, Bit>,
    buf_ok: Signal<Local, Bit>,
    credit_ok: Signal<Local, Bit>,
}

impl Default for RxIngress {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            s_axis: Default::default(),
            m_axis: Default::default(),
            joined: Default::default(),
            buf_room_beats: Default::default(),
            buf_room_frames: Default::default(),
            cnt_discard: Default::default(),
            cnt_discard_join: Default::default(),
            in_flight: Default::default(),
            c_admit_beats: Constant::new(ADMIT_BEATS.into()),
            c_admit_frames: Constant::new(ADMIT_FRAMES.into()),
            c_depth: Constant::new((JOIN_DEPTH as u64).into()),
            c_depth_less_one: Constant::new((JOIN_DEPTH as u64 - 1).into()),
            in_frame: Default::default(),
            gate: Default::default(),
            credits_used: Default::default(),
            gate_credit: Default::default(),
            k_discard: Default::default(),
            k_discard_join: Default::default(),
            take: Default::default(),
            first: Default::default(),
            admit_now: Default::default(),
            next_first: Default::default(),
            buf_ok: Default::default(),
            credit_ok: Default::default(),
        }
    }
}

impl Logic for RxIngress {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            in_frame,
            gate,
            credits_used,
            gate_credit,
            k_discard,
            k_discard_join
        );
        // ---- The stream: data straight through, `tvalid` gated by the
        // decision register (one LUT on the path). A discarded frame's
        // beats are taken and go nowhere: the MAC is never held by them.
        self.m_axis.tdata.next = self.s_axis.tdata.val();
        self.m_axis.tkeep.next = self.s_axis.tkeep.val();
        self.m_axis.tlast.next = self.s_axis.tlast.val();
        self.m_axis.tvalid.next = self.s_axis.tvalid.val() & self.gate.q.val();
        self.s_axis.tready.next = self.m_axis.tready.val() | !self.gate.q.val();
        self.take.next = self.s_axis.tvalid.val() & self.s_axis.tready.val();
        self.first.next = !self.in_frame.q.val();
        self.admit_now.next = self.take.val() & self.first.val() & self.gate.q.val();
        self.k_discard.d.next = self.take.val() & self.first.val() & !self.gate.q.val();
        self.k_discard_join.d.next = self.take.val() & self.first.val() & !self.gate_credit.q.val();
        if self.take.val() {
            self.in_frame.d.next = !self.s_axis.tlast.val();
        }
        // ---- Credits: one per admitted frame until the RX path joined it.
        if self.admit_now.val() & !self.joined.val() {
            self.credits_used.d.next = self.credits_used.q.val() + 1;
        }
        if !self.admit_now.val() & self.joined.val() {
            self.credits_used.d.next = self.credits_used.q.val() - 1;
        }
        // ---- The decision for the next cycle's beat. Inside a frame it
        // stays the frame's; for a first beat it is the admission: a join
        // credit left after this cycle's admission (a release in this cycle
        // is counted from the next one: conservative), and the RX buffer's
        // room for the largest frame.
        self.next_first.next =
            (self.take.val() & self.s_axis.tlast.val()) | (!self.take.val() & !self.in_frame.q.val());
        self.credit_ok.next = (self.credits_used.q.val() != self.c_depth.val())
            & !(self.admit_now.val() & (self.credits_used.q.val() == self.c_depth_less_one.val()));
        self.buf_ok.next = (self.buf_room_beats.val() >= self.c_admit_beats.val())
            & (self.buf_room_frames.val() >= self.c_admit_frames.val());
        if self.next_first.val() {
            self.gate.d.next = self.credit_ok.val() & self.buf_ok.val();
            self.gate_credit.d.next = self.credit_ok.val();
        }
        self.cnt_discard.next = self.k_discard.q.val();
        self.cnt_discard_join.next = self.k_discard_join.q.val();
        self.in_flight.next = self.credits_used.q.val();
    }
}
