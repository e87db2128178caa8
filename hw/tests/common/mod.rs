//! Shared by the ack_gen and completion tests: golden-model QP pairs
//! (`proto::model::legacy_mrc::LegacyMrcQp`), the data packets a real requester sends,
//! a perturbed arrival order (reorder, duplicates, trimmed, out-of-window
//! and bad-rkey copies, ECN marks), and a mirror of the responder's
//! receive state (what the SACK table and placement check hand the
//! blocks under test).
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use proto::model::cc::CcConfig;
use proto::model::ev::EvSetConfig;
use proto::model::legacy_mrc::LegacyMrcQp;
use proto::model::memory::MemoryTable;
use proto::model::*;
use proto::time::{Duration, Instant};
use proto::wire::{MrcExtRepr, Packet, RocePacket};
use proto::Psn;

pub const VA: u64 = 0x10_0000;
pub const RKEY: u32 = 0x77;
pub const REGION: u64 = 1 << 16;
pub const MTU: u32 = 256;
/// The window: 2 units of 128 PSNs (the SACK table's MPR).
pub const MPR_UNITS: u8 = 2;
pub const WINDOW: u32 = 256;

/// The tests' seeded generator.
pub use tb::rng::Rng;

/// A requester (RTS) and a responder (RTR only: its requester half, and so
/// its probe and retransmission timers, do not exist).
pub fn pair(qpn: u32, start: u32, ack_every: u16, ack_delay_ns: u64) -> (LegacyMrcQp, LegacyMrcQp) {
    let peer = qpn + 0x100;
    let mut sa = QpSetup::new(Transport::Mrc, peer, qpn);
    sa.cfg.mtu = MTU;
    sa.rtr.mpr_units = MPR_UNITS;
    sa.rtr.max_wimm = 255;
    sa.rts = RtsAttr {
        sq_psn: Psn::new(start),
        ack_timeout_exp: 20,
        retry_linear: 7,
        retry_exp: RETRY_INFINITE,
        send_mpr_units: MPR_UNITS,
        max_wimm: 255,
        evs: EvSetConfig {
            evs: (0..8u32).map(|i| 0xC000 + 17 * i).collect(),
            min_active: 1,
            probe_interval: Duration::from_ms(100),
            ..EvSetConfig::default()
        },
        cc: CcConfig::Fixed { window: 1 << 30 },
    };
    let mut sb = sa.mirrored();
    sb.cfg.ack_every = ack_every;
    sb.cfg.ack_delay = Duration::from_ns(ack_delay_ns);
    let a = proto::test_support::ready(&sa);
    let mut b: LegacyMrcQp = proto::test_support::receiver(&sb);
    b.memory_mut().register(VA, REGION, RKEY).unwrap();
    (a, b)
}

/// Messages of 0..=4 MTUs (some WRITE-IMM) posted on `a` until about
/// `n_pkts` packets went out; the packets in send order.
pub fn requester_packets(a: &mut LegacyMrcQp, r: &mut Rng, n_pkts: usize) -> Vec<RocePacket> {
    let mut out = Vec::new();
    let mut off = 0u64;
    let mut wr = 0u64;
    while out.len() < n_pkts {
        let len = match r.below(10) {
            0 => 0,
            1..=3 => 1 + r.below(MTU as u64),
            _ => 1 + r.below(4 * MTU as u64),
        };
        if off + len > REGION {
            off = 0;
        }
        let imm = if r.chance(40) { Some(r.next_u64() as u32) } else { None };
        let data = Bytes::from((0..len).map(|i| (i as u8).wrapping_mul(7)).collect::<Vec<u8>>());
        a.post_write(
            Instant::ZERO,
            WriteRequest {
                wr_id: wr,
                data,
                remote_va: VA + off,
                rkey: RKEY,
                imm,
            },
        )
        .unwrap();
        wr += 1;
        off += len;
        // Send times differ, so every packet has its own tx_ts.
        while let Some(p) = a
            .poll_transmit(Instant::from_ns(out.len() as u64 * 13 + 5))
            .and_then(Packet::into_roce)
        {
            out.push(p);
        }
    }
    out
}

/// How to perturb the arrival order (percent per packet).
pub struct Perturb {
    pub dup: u64,
    pub trim: u64,
    pub oow: u64,
    pub bad_rkey: u64,
    pub ecn: u64,
    /// Reorder: swap with a packet up to 6 later.
    pub swap: u64,
    /// Deliver this packet up to 120 places early (far ahead of expected).
    pub jump: u64,
    /// Hold this packet back 70-99 places (a late retransmission): the
    /// packets after it arrive 64+ PSNs beyond the expected one.
    pub late: u64,
}

pub fn arrivals(pkts: &[RocePacket], r: &mut Rng, p: &Perturb) -> Vec<RocePacket> {
    let mut v: Vec<RocePacket> = pkts.to_vec();
    for pk in v.iter_mut() {
        if r.chance(p.ecn) {
            pk.ecn_ce = true;
        }
    }
    for i in 0..v.len() {
        if r.chance(p.swap) {
            let j = (i + 1 + r.below(6) as usize).min(v.len() - 1);
            v.swap(i, j);
        }
    }
    for i in 0..v.len() {
        if r.chance(p.jump) {
            let j = i + r.below(120) as usize;
            if j < v.len() {
                let x = v.remove(j);
                v.insert(i, x);
            }
        }
    }
    for i in (0..v.len()).rev() {
        if r.chance(p.late) {
            let j = i + 70 + r.below(30) as usize;
            if j < v.len() {
                let x = v.remove(i);
                v.insert(j, x);
            }
        }
    }
    let mut out = Vec::new();
    let mut later: Vec<(usize, RocePacket)> = Vec::new();
    for (i, pk) in v.into_iter().enumerate() {
        if r.chance(p.trim) {
            let mut t = pk.clone();
            t.trimmed = true;
            t.payload = Bytes::new();
            out.push(t);
        }
        if r.chance(p.oow) {
            let mut o = pk.clone();
            o.bth.psn = o.bth.psn.add(WINDOW + r.below(3000) as u32);
            out.push(o);
        }
        if !pk.payload.is_empty() && r.chance(p.bad_rkey) {
            let mut b = pk.clone();
            let wrong_key = r.chance(50);
            if let Some(reth) = b.reth.as_mut() {
                if wrong_key {
                    reth.rkey ^= 0x100;
                } else {
                    reth.va = VA + REGION - 1;
                }
            } else if let Some(MrcExtRepr::Data(d)) = b.ext.as_mut() {
                let pl = d.placement.as_mut().unwrap();
                if wrong_key {
                    pl.rkey ^= 0x100;
                } else {
                    pl.va = VA - 8;
                }
            }
            out.push(b);
        }
        if r.chance(p.dup) {
            later.push((i + 1 + r.below(40) as usize, pk.clone()));
        }
        out.push(pk);
        later.sort_by_key(|x| x.0);
        while later.first().is_some_and(|x| x.0 <= i) {
            out.push(later.remove(0).1);
        }
    }
    out.extend(later.into_iter().map(|x| x.1));
    out
}

/// What happened to a data packet at the responder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    New,
    Duplicate,
    OutOfWindow,
    Trimmed,
    Rejected,
}

/// The responder's receive state (expected PSN, received set, MSN) kept
/// from the model's documented rules, to produce the records the blocks
/// get from the SACK table and the placement check.
pub struct Mirror {
    pub expected: Psn,
    pub received: HashSet<u32>,
    pub last: HashMap<u32, bool>,
    pub msn: u32,
    pub memory: MemoryTable,
}

impl Mirror {
    pub fn new(start: u32) -> Mirror {
        let mut memory = MemoryTable::default();
        memory.register(VA, REGION, RKEY).unwrap();
        Mirror {
            expected: Psn::new(start),
            received: HashSet::new(),
            last: HashMap::new(),
            msn: 0,
            memory,
        }
    }
    pub fn placement(p: &RocePacket) -> (u64, u32) {
        match (&p.reth, &p.ext) {
            (Some(r), _) => (r.va, r.rkey),
            (None, Some(MrcExtRepr::Data(d))) => {
                let pl = d.placement.unwrap();
                (pl.va, pl.rkey)
            }
            _ => panic!("data packet without placement"),
        }
    }
    pub fn arrive(&mut self, p: &RocePacket) -> Fate {
        let psn = p.bth.psn;
        if psn.before(self.expected) {
            return Fate::Duplicate;
        }
        if psn.offset_from(self.expected) >= WINDOW {
            return Fate::OutOfWindow;
        }
        if self.received.contains(&psn.value()) {
            return Fate::Duplicate;
        }
        if p.trimmed {
            return Fate::Trimmed;
        }
        let (va, rkey) = Mirror::placement(p);
        if !p.payload.is_empty() && self.memory.check(rkey, va, p.payload.len() as u64).is_err() {
            return Fate::Rejected;
        }
        self.received.insert(psn.value());
        self.last.insert(psn.value(), p.bth.opcode.is_last());
        while self.received.remove(&self.expected.value()) {
            if self.last.remove(&self.expected.value()) == Some(true) {
                self.msn = (self.msn + 1) & 0xFF_FFFF;
            }
            self.expected = self.expected.next();
        }
        Fate::New
    }
    /// 64 received bits from `base`.
    pub fn bitmap(&self, base: Psn) -> u64 {
        (0..64u32)
            .filter(|&i| self.received.contains(&base.add(i).value()))
            .fold(0, |a, i| a | 1 << i)
    }
}

pub fn v64<const N: usize>(b: rust_hdl::prelude::Bits<N>) -> u64 {
    (0..N.min(64))
        .filter(|&i| b.get_bit(i))
        .fold(0, |acc, i| acc | (1 << i))
}
