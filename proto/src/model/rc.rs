//! PLACEHOLDER: being written in its own branch. Replaced wholesale.

use crate::model::api::*;
use crate::model::ev::EvSet;
use crate::model::memory::MemoryTable;
use crate::time::Instant;
use crate::wire::RocePacket;

/// Placeholder.
#[derive(Debug)]
pub struct RcQp {
    cfg: QpConfig,
    memory: MemoryTable,
    counters: Counters,
}

impl RcQp {
    /// A QP in RST.
    pub fn new(cfg: QpConfig) -> Result<RcQp, ModifyError> {
        validate_config(&cfg)?;
        Ok(RcQp { cfg, memory: MemoryTable::default(), counters: Counters::default() })
    }
}

impl QueuePair for RcQp {
    fn config(&self) -> &QpConfig { &self.cfg }
    fn state(&self) -> QpState { QpState::Reset }
    fn modify(&mut self, _now: Instant, _t: QpTransition) -> Result<(), ModifyError> { unimplemented!() }
    fn memory(&self) -> &MemoryTable { &self.memory }
    fn memory_mut(&mut self) -> &mut MemoryTable { &mut self.memory }
    fn post_write(&mut self, _now: Instant, _wr: WriteRequest) -> Result<(), PostError> { unimplemented!() }
    fn post_recv(&mut self, _wr_id: u64) -> Result<(), PostError> { unimplemented!() }
    fn handle_packet(&mut self, _now: Instant, _pkt: RocePacket) -> Result<(), RxError> { unimplemented!() }
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, _now: Instant) -> Option<RocePacket> { None }
    fn poll_timeout(&self) -> Option<Instant> { None }
    fn poll_event(&mut self) -> Option<Event> { None }
    fn counters(&self) -> &Counters { &self.counters }
    fn ev_set(&self) -> Option<&EvSet> { None }
    fn deny_evs(&mut self, _now: Instant, _mask: u32, _value: u32) -> usize { 0 }
    fn allow_evs(&mut self, _now: Instant, _mask: u32, _value: u32) -> usize { 0 }
    fn probe_ev(&mut self, _now: Instant, _ev_index: u16) -> bool { false }
}
