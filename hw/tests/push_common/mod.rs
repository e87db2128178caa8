//! Shared by the push-cache tests (`desc_push`, `payload_push`): the host
//! behind the cache (forwarded reads answered in order after a latency,
//! one beat per cycle, the last beat's lanes from the length) and the
//! reader in front, which checks every beat it takes against the oldest
//! read it issued (the pushed beat where the script says hit, the host's
//! otherwise; lanes, tag, last).
#![allow(dead_code)]

use std::collections::VecDeque;

use hw::bus::{DmaReadInitiator, DmaReadTarget};
use rust_hdl::prelude::*;

pub fn v<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}

/// The lanes of `len` bytes of a beat (all of them from 64 on).
pub fn lanes(len: u64) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1 << len) - 1
    }
}

/// `b` with the bytes outside `keep` zeroed.
pub fn masked(b: Bits<512>, keep: u64) -> Bits<512> {
    let mut out = Bits::<512>::default();
    for lane in (0..64).filter(|l| keep >> l & 1 == 1) {
        out.set_bits::<8>(8 * lane, b.get_bits::<8>(8 * lane));
    }
    out
}

/// A read the reader issued: its address, length and tag, and the pushed
/// beat the script says answers it (`None`: the host's beats).
#[derive(Clone, Debug)]
pub struct Issued {
    pub addr: u64,
    pub len: u64,
    pub tag: u64,
    pub hit: Option<Bits<512>>,
}

/// The host behind the cache: forwarded reads answered in order,
/// `latency` cycles after the arbiter took them, one beat per cycle;
/// `beat(addr)` is the host's beat at `addr`.
pub struct InOrderHost {
    latency: u64,
    beat: fn(u64) -> Bits<512>,
    /// Forwarded reads: (addr, len, tag, due cycle).
    reads: VecDeque<(u64, u64, u64, u64)>,
    beat_i: u64,
    serving: bool,
}

impl InOrderHost {
    pub fn new(latency: u64, beat: fn(u64) -> Bits<512>) -> InOrderHost {
        InOrderHost {
            latency,
            beat,
            reads: VecDeque::new(),
            beat_i: 0,
            serving: false,
        }
    }

    /// Before the edge: offer the next beat of the oldest read, if due.
    pub fn drive(&mut self, m: &mut DmaReadInitiator, cycle: u64) {
        let due = self.reads.front().copied().filter(|r| r.3 <= cycle);
        self.serving = due.is_some();
        m.rsp.valid.next = self.serving;
        if let Some((addr, len, tag, _)) = due {
            let last = self.beat_i + 1 == len.div_ceil(64);
            m.rsp.data.next = (self.beat)(addr + 64 * self.beat_i);
            m.rsp.keep.next = if last { lanes(len - 64 * self.beat_i) } else { u64::MAX }.into();
            m.rsp.last.next = last;
            m.rsp.tag.next = tag.into();
        }
    }

    /// At the edge: a request the arbiter side took, a beat taken.
    pub fn observe(&mut self, m: &DmaReadInitiator, cycle: u64) {
        if m.req.valid.val() && m.req.ready.val() {
            self.reads.push_back((
                v(m.req.addr.val()),
                v(m.req.len.val()),
                v(m.req.tag.val()),
                cycle + self.latency,
            ));
        }
        if self.serving && m.rsp.ready.val() {
            self.beat_i += 1;
            if m.rsp.last.val() {
                self.reads.pop_front();
                self.beat_i = 0;
            }
        }
    }
}

/// The reader in front of the cache: the reads it issued, in order, and
/// the check of every beat it takes.
pub struct Reader {
    host_beat: fn(u64) -> Bits<512>,
    pub issued: VecDeque<Issued>,
    beat_i: u64,
}

impl Reader {
    pub fn new(host_beat: fn(u64) -> Bits<512>) -> Reader {
        Reader {
            host_beat,
            issued: VecDeque::new(),
            beat_i: 0,
        }
    }

    /// At the edge: a beat taken on `s` must be the next one the oldest
    /// issued read wants.
    pub fn observe(&mut self, s: &DmaReadTarget, cycle: u64, errors: &mut Vec<String>) {
        if !(s.rsp.valid.val() && s.rsp.ready.val()) {
            return;
        }
        let Some(want) = self.issued.front().cloned() else {
            errors.push(format!("cycle {cycle}: a response beat with no read issued"));
            return;
        };
        let i = self.beat_i;
        let last = i + 1 == want.len.div_ceil(64);
        let keep = if last { lanes(want.len - 64 * i) } else { u64::MAX };
        let expect = match want.hit {
            Some(b) => b,
            None => (self.host_beat)(want.addr + 64 * i),
        };
        let got = s.rsp.data.val();
        if masked(got, keep) != masked(expect, keep) {
            errors.push(format!(
                "cycle {cycle}: read of {:#x} beat {i}: got word0 {:#x}, want {:#x} ({})",
                want.addr,
                v(got.get_bits::<64>(0)),
                v(expect.get_bits::<64>(0)),
                if want.hit.is_some() { "pushed" } else { "host" }
            ));
        }
        if v(s.rsp.tag.val()) != want.tag || v(s.rsp.keep.val()) != keep {
            errors.push(format!(
                "cycle {cycle}: read of {:#x}: tag {} (want {}) or keep {:#x} (want {keep:#x}) wrong",
                want.addr,
                v(s.rsp.tag.val()),
                want.tag,
                v(s.rsp.keep.val())
            ));
        }
        if s.rsp.last.val() != last {
            errors.push(format!("cycle {cycle}: read of {:#x}: last wrong", want.addr));
        }
        self.beat_i += 1;
        if last {
            self.issued.pop_front();
            self.beat_i = 0;
        }
    }
}
