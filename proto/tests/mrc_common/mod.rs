//! Helpers shared by the directed MRC tests: two QPs wired back to back.
#![allow(dead_code)]

use bytes::Bytes;
use proto::model::cc::CcConfig;
use proto::model::ev::EvSetConfig;
use proto::model::mrc::MrcQp;
use proto::model::*;
use proto::test_support::{ev_values, ready};
use proto::time::{Duration, Instant};
use proto::wire::mrc10::{CcStateRepr, Headers, Mrc10Packet, NethRepr, SethRepr, TrafficClass, WriteHeaders};
use proto::wire::Packet;
use proto::Psn;

/// The MRC 1.0 packet an MRC QP sent (it sends nothing else).
pub fn mrc10(p: Packet) -> Mrc10Packet {
    p.into_mrc10().expect("an MRC QP sends MRC 1.0 packets")
}

/// A switch trimmed `p` (not at the last hop).
pub fn trim(p: &mut Mrc10Packet) {
    p.payload = Bytes::new();
    p.class = TrafficClass::Trimmed;
}

/// The NETH of a NACK.
pub fn neth(p: &Mrc10Packet) -> NethRepr {
    match p.headers {
        Headers::Nack(n) => n,
        ref h => panic!("not a NACK: {h:?}"),
    }
}

/// The SETH and CC_STATE of a SACK.
pub fn sack(p: &Mrc10Packet) -> (SethRepr, CcStateRepr) {
    match p.headers {
        Headers::Sack { seth, cc_state } => (seth, cc_state),
        ref h => panic!("not a SACK: {h:?}"),
    }
}

/// The headers of a data packet.
pub fn write_headers(p: &mut Mrc10Packet) -> &mut WriteHeaders {
    match &mut p.headers {
        Headers::Write(w) => w,
        h => panic!("not a data packet: {h:?}"),
    }
}

pub const QPN_A: u32 = 0x11;
pub const QPN_B: u32 = 0x22;
pub const VA: u64 = 0x10_0000;
pub const RKEY: u32 = 0x77;
pub const REGION: u64 = 1 << 20;
pub const MTU: u32 = 1024;

pub struct Opts {
    pub n_evs: usize,
    pub min_active: u16,
    pub psn: u32,
    pub mpr_units: u8,
    pub retry_linear: u8,
    pub retry_exp: u8,
    pub max_wimm: u16,
    pub ack_every: u16,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            n_evs: 4,
            min_active: 1,
            psn: 1000,
            mpr_units: 4,
            retry_linear: 7,
            retry_exp: RETRY_INFINITE,
            max_wimm: 64,
            ack_every: 4,
        }
    }
}

pub fn rts(o: &Opts) -> RtsAttr {
    RtsAttr {
        sq_psn: Psn::new(o.psn),
        ack_timeout_exp: 4,
        retry_linear: o.retry_linear,
        retry_exp: o.retry_exp,
        send_mpr_units: o.mpr_units,
        max_wimm: o.max_wimm,
        evs: EvSetConfig {
            evs: ev_values(o.n_evs),
            min_active: o.min_active,
            probe_interval: Duration::from_us(10),
            ..EvSetConfig::default()
        },
        cc: CcConfig::Fixed { window: 1 << 30 },
    }
}

/// QP `qpn` talking to `peer` with the options `o`.
pub fn setup(qpn: u32, peer: u32, o: &Opts) -> QpSetup {
    let mut s = QpSetup::new(Transport::Mrc, qpn, peer);
    s.cfg.mtu = MTU;
    s.cfg.ack_every = o.ack_every;
    s.rtr.rq_psn = Psn::new(o.psn);
    s.rtr.mpr_units = o.mpr_units;
    s.rtr.max_wimm = o.max_wimm;
    s.rts = rts(o);
    s
}

/// QP `qpn` in RTS with the test region registered.
pub fn qp(qpn: u32, peer: u32, o: &Opts) -> MrcQp {
    let mut q: MrcQp = ready(&setup(qpn, peer, o));
    q.memory_mut().register(VA, REGION, RKEY).unwrap();
    q
}

pub fn pair(o: &Opts) -> (MrcQp, MrcQp) {
    (qp(QPN_A, QPN_B, o), qp(QPN_B, QPN_A, o))
}

pub fn data(len: usize, salt: u8) -> Bytes {
    Bytes::from(
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
            .collect::<Vec<u8>>(),
    )
}

pub fn write(wr_id: u64, data: Bytes, off: u64, imm: Option<u32>) -> WriteRequest {
    WriteRequest {
        wr_id,
        data,
        remote_va: VA + off,
        rkey: RKEY,
        imm,
    }
}

pub fn drain_tx(q: &mut MrcQp, now: Instant) -> Vec<Mrc10Packet> {
    let mut v = Vec::new();
    while let Some(p) = q.poll_transmit(now).map(mrc10) {
        v.push(p);
    }
    v
}

pub fn events(q: &mut MrcQp) -> Vec<Event> {
    let mut v = Vec::new();
    while let Some(e) = q.poll_event() {
        v.push(e);
    }
    v
}

pub fn completions(ev: &[Event]) -> Vec<Completion> {
    ev.iter()
        .filter_map(|e| match e {
            Event::SendCompleted(c) => Some(*c),
            _ => None,
        })
        .collect()
}

pub fn recv_completions(ev: &[Event]) -> Vec<Completion> {
    ev.iter()
        .filter_map(|e| match e {
            Event::RecvCompleted(c) => Some(*c),
            _ => None,
        })
        .collect()
}

/// Exchange packets between `a` and `b` with zero delay until quiet, firing
/// timers (SACK delay) as needed; `now` advances by 1 ns per round.
pub fn run(a: &mut MrcQp, b: &mut MrcQp, now: &mut Instant) {
    for _ in 0..100_000 {
        let mut moved = false;
        while let Some(p) = a.poll_transmit(*now).map(mrc10) {
            let _ = b.handle_packet(*now, p.into());
            moved = true;
        }
        while let Some(p) = b.poll_transmit(*now).map(mrc10) {
            let _ = a.handle_packet(*now, p.into());
            moved = true;
        }
        if !moved {
            // Only the SACK-delay timer may be needed to finish.
            match b.poll_timeout().into_iter().chain(a.poll_timeout()).min() {
                Some(t) if t <= *now + Duration::from_us(3) => {
                    *now = (*now).max(t);
                    a.handle_timeout(*now);
                    b.handle_timeout(*now);
                }
                _ => return,
            }
        }
        *now += Duration::from_ns(1);
    }
    panic!("did not settle");
}
