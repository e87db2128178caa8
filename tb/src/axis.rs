//! AXI-Stream (512-bit, `tdata`/`tkeep`/`tlast`/`tvalid`/`tready`) frame
//! source and sink. Byte 0 of a frame is in `tdata[7:0]` of its first
//! beat; `tkeep` marks the valid bytes of the last beat (all others are
//! full).

use std::collections::VecDeque;

use verilated::{Model, PortId, VerilatedError};

use crate::rng::Rng;
use crate::stall::Stall;

/// Bytes per beat.
pub const BEAT: usize = 64;

/// The five ports of one stream, found by prefix (`s_rx$` finds
/// `s_rx$tdata`, ...: the fields of an `hw::bus` stream bundle).
#[derive(Clone, Copy, Debug)]
pub struct AxisPorts {
    pub tdata: PortId,
    pub tkeep: PortId,
    pub tlast: PortId,
    pub tvalid: PortId,
    pub tready: PortId,
}

impl AxisPorts {
    pub fn find(m: &Model, prefix: &str) -> Result<AxisPorts, VerilatedError> {
        Ok(AxisPorts {
            tdata: m.port(&format!("{prefix}tdata"))?,
            tkeep: m.port(&format!("{prefix}tkeep"))?,
            tlast: m.port(&format!("{prefix}tlast"))?,
            tvalid: m.port(&format!("{prefix}tvalid"))?,
            tready: m.port(&format!("{prefix}tready"))?,
        })
    }
}

fn keep_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Sends queued frames into the model. Once `tvalid` is up it stays up
/// until the beat is taken (AXI rule); between beats it pauses as `pause`
/// draws.
pub struct AxisSource {
    ports: AxisPorts,
    frames: VecDeque<Vec<u8>>,
    /// Byte offset of the current beat in the head frame.
    pos: usize,
    valid: bool,
    pub pause: Stall,
    pub frames_sent: u64,
    pub beats_sent: u64,
}

impl AxisSource {
    pub fn new(ports: AxisPorts, pause: Stall) -> AxisSource {
        AxisSource {
            ports,
            frames: VecDeque::new(),
            pos: 0,
            valid: false,
            pause,
            frames_sent: 0,
            beats_sent: 0,
        }
    }
    /// Queue a frame (an empty frame is sent as one beat with no byte kept).
    pub fn push(&mut self, frame: Vec<u8>) {
        self.frames.push_back(frame);
    }
    pub fn pending(&self) -> usize {
        self.frames.len()
    }
    pub fn idle(&self) -> bool {
        self.frames.is_empty()
    }
    pub fn drive(&mut self, m: &mut Model, rng: &mut Rng) {
        self.valid = self.pause.offer(self.valid, !self.frames.is_empty(), rng);
        m.set(self.ports.tvalid, u64::from(self.valid));
        if let Some(f) = self.frames.front() {
            let end = (self.pos + BEAT).min(f.len());
            m.set_bytes(self.ports.tdata, &f[self.pos.min(end)..end]);
            m.set(self.ports.tkeep, keep_mask(end.saturating_sub(self.pos)));
            m.set(self.ports.tlast, u64::from(end == f.len()));
        }
    }
    pub fn observe(&mut self, m: &Model) {
        if self.valid && m.get_bit(self.ports.tready) {
            self.valid = false;
            self.beats_sent += 1;
            let len = self.frames.front().map_or(0, Vec::len);
            self.pos += BEAT;
            if self.pos >= len {
                self.frames.pop_front();
                self.pos = 0;
                self.frames_sent += 1;
            }
        }
    }
}

/// Collects frames from the model; `tready` is up as `backpressure`
/// draws each cycle.
pub struct AxisSink {
    ports: AxisPorts,
    cur: Vec<u8>,
    ready: bool,
    pub backpressure: Stall,
    /// Take no new frame while set (a frame under way is finished): the
    /// sink's own pace, such as a MAC's at its line rate.
    pub hold: bool,
    pub frames: VecDeque<Vec<u8>>,
    /// Beats whose `tkeep` was not a contiguous run from byte 0, or a
    /// non-last beat that was not full (protocol errors).
    pub bad_keep: u64,
    /// Cycles in which a frame was under way and the sink ready, but no
    /// beat came (`tvalid` low before the frame's `tlast`): a MAC's
    /// transmit underrun, for which Ethernet MACs abort the frame on the
    /// wire (AMD's 10/25G MAC, PG210, calls it an implicit underrun).
    pub underruns: u64,
}

impl AxisSink {
    pub fn new(ports: AxisPorts, backpressure: Stall) -> AxisSink {
        AxisSink {
            ports,
            cur: Vec::new(),
            ready: false,
            backpressure,
            hold: false,
            frames: VecDeque::new(),
            bad_keep: 0,
            underruns: 0,
        }
    }
    pub fn drive(&mut self, m: &mut Model, rng: &mut Rng) {
        self.ready = self.backpressure.go(rng) && !(self.hold && self.cur.is_empty());
        m.set(self.ports.tready, u64::from(self.ready));
    }
    pub fn observe(&mut self, m: &Model) {
        if !(self.ready && m.get_bit(self.ports.tvalid)) {
            if self.ready && !self.cur.is_empty() {
                self.underruns += 1;
            }
            return;
        }
        let keep = m.get(self.ports.tkeep);
        let last = m.get_bit(self.ports.tlast);
        let n = keep.trailing_ones() as usize;
        if keep_mask(n) != keep || (!last && n != BEAT) {
            self.bad_keep += 1;
        }
        let data = m.get_bytes(self.ports.tdata);
        self.cur.extend_from_slice(&data[..n]);
        if last {
            self.frames.push_back(std::mem::take(&mut self.cur));
        }
    }
}
