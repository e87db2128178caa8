//! `Qp`: one type for both transports, so simulators and tools compare like
//! with like through the same API.

use crate::model::api::*;
use crate::model::ev::EvSet;
use crate::model::legacy_mrc::LegacyMrcQp;
use crate::model::memory::MemoryTable;
use crate::model::mrc::MrcQp;
use crate::model::rc::RcQp;
use crate::time::Instant;
use crate::wire::Packet;

/// A queue pair of either transport.
#[derive(Debug)]
pub enum Qp {
    Mrc(MrcQp),
    Rc(RcQp),
    MrcLegacy(LegacyMrcQp),
}

impl Qp {
    /// A QP in RST running `cfg.transport`.
    pub fn new(cfg: QpConfig) -> Result<Qp, ModifyError> {
        Ok(match cfg.transport {
            Transport::Mrc => Qp::Mrc(MrcQp::new(cfg)?),
            Transport::Rc => Qp::Rc(RcQp::new(cfg)?),
            Transport::MrcLegacy => Qp::MrcLegacy(LegacyMrcQp::new(cfg)?),
        })
    }

    /// The congestion controller's name and window, bytes, of an MRC 1.0
    /// requester (`None` for the other transports and before RTS).
    pub fn congestion_window(&self) -> Option<(&'static str, u64)> {
        match self {
            Qp::Mrc(q) => q.congestion_window(),
            Qp::Rc(_) | Qp::MrcLegacy(_) => None,
        }
    }
}

macro_rules! delegate {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            Qp::Mrc($q) => $e,
            Qp::Rc($q) => $e,
            Qp::MrcLegacy($q) => $e,
        }
    };
}

impl QueuePair for Qp {
    fn config(&self) -> &QpConfig {
        delegate!(self, q => q.config())
    }
    fn state(&self) -> QpState {
        delegate!(self, q => q.state())
    }
    fn modify(&mut self, now: Instant, t: QpTransition) -> Result<(), ModifyError> {
        delegate!(self, q => q.modify(now, t))
    }
    fn memory(&self) -> &MemoryTable {
        delegate!(self, q => q.memory())
    }
    fn memory_mut(&mut self) -> &mut MemoryTable {
        delegate!(self, q => q.memory_mut())
    }
    fn post_write(&mut self, now: Instant, wr: WriteRequest) -> Result<(), PostError> {
        delegate!(self, q => q.post_write(now, wr))
    }
    fn post_recv(&mut self, wr_id: u64) -> Result<(), PostError> {
        delegate!(self, q => q.post_recv(wr_id))
    }
    fn handle_packet(&mut self, now: Instant, pkt: Packet) -> Result<(), RxError> {
        delegate!(self, q => q.handle_packet(now, pkt))
    }
    fn count_drop(&mut self, e: &RxError) {
        delegate!(self, q => q.count_drop(e))
    }
    fn handle_frame(&mut self, now: Instant, frame: &[u8]) -> Result<(), RxError> {
        delegate!(self, q => q.handle_frame(now, frame))
    }
    fn handle_timeout(&mut self, now: Instant) {
        delegate!(self, q => q.handle_timeout(now))
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        delegate!(self, q => q.poll_transmit(now))
    }
    fn poll_timeout(&self) -> Option<Instant> {
        delegate!(self, q => q.poll_timeout())
    }
    fn poll_event(&mut self) -> Option<Event> {
        delegate!(self, q => q.poll_event())
    }
    fn counters(&self) -> &Counters {
        delegate!(self, q => q.counters())
    }
    fn ev_set(&self) -> Option<&EvSet> {
        delegate!(self, q => q.ev_set())
    }
    fn deny_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize {
        delegate!(self, q => q.deny_evs(now, mask, value))
    }
    fn allow_evs(&mut self, now: Instant, mask: u32, value: u32) -> usize {
        delegate!(self, q => q.allow_evs(now, mask, value))
    }
    fn probe_ev(&mut self, now: Instant, ev_index: u16) -> bool {
        delegate!(self, q => q.probe_ev(now, ev_index))
    }
    fn deny_port_evs(&mut self, now: Instant, port: u8) -> usize {
        delegate!(self, q => q.deny_port_evs(now, port))
    }
    fn allow_port_evs(&mut self, now: Instant, port: u8) -> usize {
        delegate!(self, q => q.allow_port_evs(now, port))
    }
    fn set_receive_penalty(&mut self, penalty: u8) {
        delegate!(self, q => q.set_receive_penalty(penalty))
    }
}
