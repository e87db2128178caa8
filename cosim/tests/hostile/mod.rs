//! The hostile-traffic harness shared by `core_hostile.rs` (the legacy
//! dialect) and `core_hostile_mrc10.rs` (MRC 1.0): one verilated `MrcCore`
//! whose MAC RX the test feeds directly, configured as a responder
//! (`RESP_QP`) or a requester (`PEER_QP`), and the golden model's QP
//! configured the same way and fed the same frames. The bench compares
//! what each side places, completes and acknowledges; the dialect only
//! changes how frames are built and how the acknowledgements are decoded
//! ([`Ack`], [`decode_ack`]).
// Each test binary uses part of the harness.
#![allow(dead_code)]

use bytes::Bytes;
use contract::config::table as cfg_table;
use contract::layout::{Completion, CqStatus, SqContext};
use cosim::nic::{build_core, row, Nic, ResponderParams, RetxParams, Stalls, Station};
use proto::loopback::Scenario;
use proto::model::{Event, Qp, QueuePair, RxError, Transport, WcStatus, WriteRequest};
use proto::time::{Duration, Instant};
use proto::wire::mrc10::{
    self, choices::TrafficClass, Headers, MethRepr, Mrc10Packet, NackReason, Profile, SethRepr, TsethRepr,
};
use proto::wire::{
    emit_frame, pad_for, parse_frame, BthRepr, DataExtRepr, Encap, MrcExtRepr, NackKind, Opcode, Packet, PlacementRepr,
    RethRepr, RocePacket, Syndrome,
};
use proto::Psn;
use verilated::BuildOptions;

/// The responder QP under attack and its peer (the requester that owns
/// the ACKs it sends).
pub const RESP_QP: u32 = 0x77;
pub const PEER_QP: u32 = 5;
/// First PSN the responder expects.
pub const RQ_PSN: u32 = 0x40;
/// First PSN the NIC's requester QP (`PEER_QP`) sends.
pub const REQ_START_PSN: u32 = 0x20;
/// The one registered region: rkey slot 0x34.
pub const RKEY: u32 = 0x1234;
pub const MR_VA: u64 = 0x5000_0000;
pub const MR_LEN: u64 = 0x1_0000;
/// Receive CQ (ring 1) and send CQ (ring 0), 64 slots of 32 bytes each.
pub const RECV_CQ: u64 = 0x8100_0000;
pub const SEND_CQ: u64 = 0x8000_0000;
pub const CQ_BYTES: u64 = 64 * 32;
pub const SQ_BASE: u64 = 0x1000_0000;
pub const EVS: u16 = 8;
/// The EV values of every QP: `EV_BASE + index`.
pub const EV_BASE: u32 = 0x1000;
/// The responder's receive window (the SACK table's MPR, 256 PSNs).
pub const WINDOW_UNITS: u8 = 2;
/// Path MTU of both sides (bytes).
pub const MTU: usize = 1024;

/// The wire dialect the core sends (the own address row's `wire_mrc10`)
/// and the golden model speaks; the core receives both whatever it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Legacy,
    Mrc10,
}

impl Dialect {
    pub fn transport(self) -> Transport {
        match self {
            Dialect::Legacy => Transport::MrcLegacy,
            Dialect::Mrc10 => Transport::Mrc,
        }
    }

    /// A one-packet WRITE-IMM of `len` bytes at `va` to `RESP_QP`, as the
    /// peer's requester sends it in this dialect.
    pub fn only_imm_frame(self, psn: u32, va: u64, len: usize, rkey: u32) -> Vec<u8> {
        match self {
            Dialect::Legacy => frame_of(&only_imm(psn, va, len, rkey)),
            Dialect::Mrc10 => mrc10_frame(&mrc10_write(
                mrc10::Opcode::WriteOnlyImm,
                psn,
                va,
                len as u32,
                pattern(len, psn),
                rkey,
                true,
            )),
        }
    }
}

/// The requesting QP's send context of these tests (to `RESP_QP`, from
/// `REQ_START_PSN`, window `WINDOW_UNITS`); the other QPs take it with
/// their own fields changed.
pub fn req_ctx() -> SqContext {
    SqContext {
        sq_base: SQ_BASE,
        cq_index: 0,
        addr_index: 3,
        dest_qp: RESP_QP,
        start_psn: REQ_START_PSN,
        pkey: 0xFFFF,
        sq_log2_size: 4,
        log2_mtu: 10,
        ev_count: EVS as u8,
        enable: true,
        send_mpr_units: WINDOW_UNITS,
        ev_min_active: 1,
    }
}

/// Rows every QP of these tests needs: CC window, retransmit parameters
/// and the EV values, then its send context (which starts it).
pub fn configure_qp(nic: &mut Nic, qp: u32, ctx: SqContext) {
    configure_qp_window(nic, qp, ctx, 4096, 1 << 20);
}

/// `configure_qp` with the CC window's bounds (bytes).
pub fn configure_qp_window(nic: &mut Nic, qp: u32, ctx: SqContext, min_cwnd: u32, max_cwnd: u32) {
    let q = qp as u8;
    nic.set_cc(q, min_cwnd, max_cwnd, 256);
    let retx = RetxParams::SINGLE_CARD;
    nic.set_retransmit(q, &retx, 15);
    // The EV values only: the other EV slots of the QP are not denied.
    for e in 0..EVS {
        nic.cfg_row(
            cfg_table::EV,
            (u16::from(q) << 7) | e,
            &row(&[(0, 16, u128::from(EV_BASE) + u128::from(e))]),
        );
    }
    nic.start_send_qp(q, &ctx);
}

/// The core's globals in the legacy dialect: see [`configure_globals_in`].
pub fn configure_globals(nic: &mut Nic) {
    configure_globals_in(nic, Dialect::Legacy);
}

/// The core's globals: address rows (peer row 3, own row, sending
/// `dialect`), EV-event ring, both CQ rings and the ACK policy.
pub fn configure_globals_in(nic: &mut Nic, dialect: Dialect) {
    nic.set_addresses_wire(
        Station::v4(0x0200_0000_0001, 0x0A00_0001),
        3,
        Station::v4(0x0200_0000_0002, 0x0A00_0002),
        dialect == Dialect::Mrc10,
    );
    nic.set_ev_ring(0x9000_0000, 8);
    nic.set_cq_ring(0, SEND_CQ, 6);
    nic.set_cq_ring(1, RECV_CQ, 6);
    // SACK after every 4 packets or 2 us.
    nic.set_ack_params(4, 2000);
}

/// The receive side of `qp`: the one memory region and the start PSN.
pub fn responder_params(qp: u32) -> ResponderParams {
    ResponderParams {
        qp: qp as u8,
        start_psn: RQ_PSN,
        rkey: RKEY,
        region_va: MR_VA,
        region_len: MR_LEN,
        log2_mtu: MTU.trailing_zeros() as u8,
    }
}

/// `RESP_QP` as a responder: memory registration, receive start PSN, ACK
/// state, and its send context (the ACKs go to `PEER_QP` at address row
/// 3; CQ ring 1).
pub fn configure_responder(nic: &mut Nic) {
    nic.set_responder(&responder_params(RESP_QP));
    let ctx = SqContext {
        sq_base: 0x1800_0000,
        cq_index: 1,
        dest_qp: PEER_QP,
        start_psn: 0,
        ..req_ctx()
    };
    configure_qp(nic, RESP_QP, ctx);
}

/// The golden responder in `dialect`: the model's QP with the core's
/// number, window, MTU, ACK policy and registration, expecting `rq_psn`
/// first (`RQ_PSN`, or `REQ_START_PSN` as the peer of the NIC's
/// requester QP).
pub fn model_responder(dialect: Dialect, rq_psn: u32) -> Qp {
    let mut sc = Scenario::new(dialect.transport(), EVS as usize, Vec::new());
    let ep = &mut sc.b;
    ep.cfg.qpn = RESP_QP;
    ep.cfg.mtu = MTU as u32;
    ep.cfg.ack_every = 4;
    ep.rtr.dest_qp = PEER_QP;
    ep.rtr.rq_psn = Psn::new(rq_psn);
    ep.rtr.mpr_units = WINDOW_UNITS;
    // Its send side starts where `configure_responder` starts the core's
    // (nothing is ever sent): an acknowledgement sent to it is judged
    // against the same PSNs on both sides.
    ep.rts.sq_psn = Psn::new(0);
    let mut qp: Qp = ep.bring_up(Instant::ZERO).expect("valid scenario configuration");
    qp.memory_mut().register(MR_VA, MR_LEN, RKEY).expect("region");
    for r in 0..64 {
        qp.post_recv(r).expect("receive queue");
    }
    qp
}

/// The golden requester in `dialect`: QP `PEER_QP` sending to `RESP_QP`
/// from `REQ_START_PSN`, MTU 1024, `wr` posted and its packets sent.
pub fn model_requester(dialect: Dialect, wr: &WriteRequest) -> Qp {
    let mut sc = Scenario::new(dialect.transport(), EVS as usize, Vec::new());
    let ep = &mut sc.a;
    ep.cfg.qpn = PEER_QP;
    ep.cfg.mtu = MTU as u32;
    ep.rtr.dest_qp = RESP_QP;
    ep.rts.sq_psn = Psn::new(REQ_START_PSN);
    ep.rts.send_mpr_units = WINDOW_UNITS;
    let mut qp: Qp = ep.bring_up(Instant::ZERO).expect("valid scenario configuration");
    qp.post_write(Instant::ZERO, wr.clone()).expect("post");
    while qp.poll_transmit(Instant::ZERO).is_some() {}
    qp
}

/// Encapsulation of the frames the peer sends to this NIC.
pub fn to_nic() -> Encap {
    Encap::test_v4().reversed()
}

/// A legacy packet's frame to the NIC.
pub fn frame_of(pkt: &RocePacket) -> Vec<u8> {
    let mut f = Vec::new();
    emit_frame(pkt, &to_nic(), &mut f);
    f
}

/// An MRC 1.0 packet's frame to the NIC (default profile).
pub fn mrc10_frame(pkt: &Mrc10Packet) -> Vec<u8> {
    let mut f = Vec::new();
    mrc10::emit_frame(pkt, &to_nic(), &Profile::DEFAULT, &mut f);
    f
}

pub fn bth(opcode: Opcode, dest_qp: u32, psn: u32, pad: u8) -> BthRepr {
    BthRepr {
        opcode,
        solicited: false,
        mig_req: true,
        pad,
        pkey: 0xFFFF,
        fecn: false,
        becn: false,
        mrc_ext: true,
        dest_qp,
        ack_req: false,
        psn: Psn::new(psn),
    }
}

/// One legacy WRITE data packet as the peer's requester would send it:
/// `msg_va` is the message's VA (RETH), `off` this packet's offset in it.
#[allow(clippy::too_many_arguments)]
pub fn write_packet(
    opcode: Opcode,
    qp: u32,
    psn: u32,
    msg_va: u64,
    msg_len: u32,
    off: u32,
    payload: Vec<u8>,
    rkey: u32,
) -> RocePacket {
    let ev_index = (psn % u32::from(EVS)) as u16;
    let placement = (!opcode.has_reth()).then_some(PlacementRepr {
        va: msg_va + u64::from(off),
        rkey,
    });
    RocePacket {
        ev: EV_BASE + u32::from(ev_index),
        ecn_ce: false,
        trimmed: false,
        bth: bth(opcode, qp, psn, pad_for(payload.len())),
        reth: opcode.has_reth().then_some(RethRepr {
            va: msg_va,
            rkey,
            dma_len: msg_len,
        }),
        imm: opcode.has_imm().then_some(0xC0DE_0000 | psn),
        aeth: None,
        ext: Some(MrcExtRepr::Data(DataExtRepr {
            ev_index,
            retransmit: false,
            ev_seq: psn,
            tx_ts: 1000 + psn,
            msg_offset: off,
            placement,
        })),
        payload: Bytes::from(payload),
    }
}

/// One MRC 1.0 WRITE data packet to `RESP_QP` as the peer's requester
/// sends it: `va` is this packet's (the RETH on every packet),
/// `msg_len` the message's; a TSETH when `ts`.
pub fn mrc10_write(
    opcode: mrc10::Opcode,
    psn: u32,
    va: u64,
    msg_len: u32,
    payload: Vec<u8>,
    rkey: u32,
    ts: bool,
) -> Mrc10Packet {
    let mut p = mrc10::catalog::write(opcode, psn, payload.len(), ts);
    p.ev = EV_BASE + psn % u32::from(EVS);
    p.class = TrafficClass::Trimmable;
    p.bth.dest_qp = RESP_QP;
    p.bth.ack_req = false;
    p.bth.solicited = false;
    p.bth.pad = pad_for(payload.len());
    if let Headers::Write(w) = &mut p.headers {
        w.meth = MethRepr { rq_msn: 0, msn: 0 };
        w.tseth = ts.then_some(TsethRepr {
            tx_ts: (psn as u16).wrapping_add(0x100),
            resolution: true,
            format: 0,
        });
        w.reth = RethRepr {
            va,
            rkey,
            dma_len: msg_len,
        };
        w.imm = opcode.has_imm().then_some(0xC0DE_0000 | psn);
    }
    p.payload = Bytes::from(payload);
    p
}

pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len)
        .map(|k| (k as u32).wrapping_mul(37).wrapping_add(seed.wrapping_mul(101)) as u8)
        .collect()
}

/// A legacy WRITE-ONLY-IMM of `len` bytes at `va` with PSN `psn` to
/// `RESP_QP`.
pub fn only_imm(psn: u32, va: u64, len: usize, rkey: u32) -> RocePacket {
    write_packet(
        Opcode::WriteOnlyImm,
        RESP_QP,
        psn,
        va,
        len as u32,
        0,
        pattern(len, psn),
        rkey,
    )
}

/// An acknowledgement, in the terms both dialects share.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ack {
    /// Cumulative PSN, bitmap base and the bitmap's set bits (offsets
    /// from the base). An MRC 1.0 positive ACK is one with no bits and
    /// base = PSN + 1, as the golden requester reads it.
    Sack { cum: Psn, base: Psn, bits: Vec<u32> },
    /// The NACKed PSN (the BTH's) and its kind: an MRC 1.0 NACK's reason
    /// TRIMMED / TRIMMED_LASTHOP is `Trimmed`, the others `OutOfWindow`
    /// (the five the golden requester treats alike); an ACK with the
    /// remote-access NAK syndrome is `RemoteAccess`.
    Nack { psn: Psn, kind: NackKind },
}

/// The acknowledgement `p` carries, if any.
pub fn decode_ack(p: &Packet) -> Option<Ack> {
    match p {
        Packet::Roce(p) => match &p.ext {
            Some(MrcExtRepr::Sack(s)) => Some(Ack::Sack {
                cum: p.bth.psn,
                base: s.base,
                bits: s.bitmap.iter_ones().map(|i| i as u32).collect(),
            }),
            Some(MrcExtRepr::Nack(n)) => Some(Ack::Nack {
                psn: p.bth.psn,
                kind: n.kind,
            }),
            _ => None,
        },
        Packet::Mrc10(p) => match &p.headers {
            Headers::Sack { seth, .. } => Some(Ack::Sack {
                cum: seth.cum_ack_psn,
                base: seth.cum_ack_psn.add(seth.sack_offset as i32 as u32),
                bits: (0..64).filter(|i| (seth.bitmap >> i) & 1 == 1).collect(),
            }),
            Headers::Nack(n) => Some(Ack::Nack {
                psn: p.bth.psn,
                kind: match n.reason {
                    NackReason::Trimmed | NackReason::TrimmedLastHop => NackKind::Trimmed,
                    _ => NackKind::OutOfWindow,
                },
            }),
            Headers::Ack(a) => match a.syndrome {
                Syndrome::Ack { .. } => Some(Ack::Sack {
                    cum: p.bth.psn,
                    base: p.bth.psn.next(),
                    bits: Vec::new(),
                }),
                Syndrome::Nak { code } if code == Syndrome::NAK_REMOTE_ACCESS => Some(Ack::Nack {
                    psn: p.bth.psn,
                    kind: NackKind::RemoteAccess,
                }),
                _ => None,
            },
            _ => None,
        },
    }
}

/// A frame the NIC sent, parsed in `dialect` (a malformed one fails the
/// test).
pub fn parse_sent(dialect: Dialect, f: &[u8]) -> Packet {
    match dialect {
        Dialect::Legacy => Packet::Roce(
            parse_frame(f)
                .unwrap_or_else(|e| panic!("the NIC sent a malformed frame: {e:?}"))
                .0,
        ),
        Dialect::Mrc10 => Packet::Mrc10(
            mrc10::parse_frame(f, &Profile::DEFAULT)
                .unwrap_or_else(|e| panic!("the NIC sent a malformed MRC 1.0 frame: {e:?}"))
                .0,
        ),
    }
}

/// What each side of a responder bench acknowledged, decoded.
#[derive(Default, Debug)]
pub struct AckLog {
    /// `(cumulative PSN, base, set bits)` of every SACK.
    pub sacks: Vec<(Psn, Psn, Vec<u32>)>,
    /// `(PSN, kind)` of every NACK.
    pub nacks: Vec<(Psn, NackKind)>,
    /// Every MRC 1.0 SACK answering a reliability probe (SETH pr = 1),
    /// also in `sacks`.
    pub probe_answers: Vec<ProbeAnswer>,
    /// `(cumulative PSN, AETH MSN)` of every frame with an AETH whose
    /// syndrome is ACK (every legacy SACK).
    pub ack_msns: Vec<(Psn, u32)>,
    /// The AETH MSN of every frame with a NAK syndrome (legacy NACKs, the
    /// MRC 1.0 fatal ACK), in order.
    pub nak_msns: Vec<u32>,
}

/// What an MRC 1.0 probe answer says, as compared: the EV it travels on
/// (UDP source port), the destination QP, the whole SETH (pr, the probe id
/// in the ack PSN offset, EV, contexts, cumulative PSN, cc flags, MPR,
/// the bitmap and its offset) and the CC_STATE echo (the probe's
/// timestamp). Not compared: the rest of CC_STATE (out-of-order count,
/// restore, cwnd penalty, received bytes), which the core sends as 0 in
/// every SACK (docs/hw/mrc10-wire.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeAnswer {
    pub ev: u32,
    pub dest_qp: u32,
    pub seth: SethRepr,
    pub echo_ts: u16,
}

impl AckLog {
    fn log(&mut self, p: &Packet) {
        let aeth = match p {
            Packet::Roce(r) => r.aeth.map(|a| (r.bth.psn, a)),
            Packet::Mrc10(m) => match &m.headers {
                Headers::Ack(a) => Some((m.bth.psn, *a)),
                _ => None,
            },
        };
        match aeth {
            Some((psn, a)) if matches!(a.syndrome, Syndrome::Ack { .. }) => self.ack_msns.push((psn, a.msn)),
            Some((_, a)) => self.nak_msns.push(a.msn),
            None => {}
        }
        if let Packet::Mrc10(m) = p {
            if let Headers::Sack { seth, cc_state } = &m.headers {
                if seth.probe_response {
                    self.probe_answers.push(ProbeAnswer {
                        ev: m.ev,
                        dest_qp: m.bth.dest_qp,
                        seth: *seth,
                        echo_ts: cc_state.echo_ts,
                    });
                }
            }
        }
        match decode_ack(p) {
            Some(Ack::Sack { cum, base, bits }) => self.sacks.push((cum, base, bits)),
            Some(Ack::Nack { psn, kind }) => self.nacks.push((psn, kind)),
            None => {}
        }
    }
}

/// The responder NIC and the golden responder, fed the same frames.
pub struct ResponderBench {
    pub nic: Nic,
    pub model: Qp,
    pub dialect: Dialect,
    pub now: Instant,
    /// Counter values at the start (every check is on a difference).
    pub base: Vec<(String, u32)>,
    pub acks: AckLog,
    pub model_acks: AckLog,
    /// Model decisions, in frame order.
    pub decisions: Vec<Result<(), RxError>>,
    pub recv_cqes: usize,
}

impl ResponderBench {
    /// A legacy responder bench.
    pub fn new(seed: u64) -> ResponderBench {
        ResponderBench::new_in(Dialect::Legacy, seed)
    }

    /// A responder bench whose core sends `dialect` and whose golden
    /// responder speaks it.
    pub fn new_in(dialect: Dialect, seed: u64) -> ResponderBench {
        let built = build_core(&BuildOptions::default()).unwrap();
        let mut nic = Nic::new(&built, Stalls::default(), seed).unwrap();
        configure_globals_in(&mut nic, dialect);
        configure_responder(&mut nic);
        nic.run(300);
        let base = hw::core::WIRED_COUNTERS
            .iter()
            .map(|c| (c.to_string(), nic.counter(c)))
            .collect();
        ResponderBench {
            nic,
            model: model_responder(dialect, RQ_PSN),
            dialect,
            now: Instant::from_us(1),
            base,
            acks: AckLog::default(),
            model_acks: AckLog::default(),
            decisions: Vec::new(),
            recv_cqes: 0,
        }
    }

    /// Push `frame` into MAC RX and into the model; the model's verdict.
    pub fn inject(&mut self, frame: Vec<u8>) -> Result<(), RxError> {
        let r = self.model.handle_frame(self.now, &frame);
        // What the model sends at once goes out now, as the core's does:
        // a SACK built later would report a state the core has moved
        // past (a probe answer's base depends on whether the SACK due
        // before it went out).
        while let Some(p) = self.model.poll_transmit(self.now) {
            self.model_acks.log(&p);
        }
        self.now += Duration::from_ns(200);
        self.decisions.push(r.clone());
        self.nic.rx.push(frame);
        // Let the frame through before the next one: the tests check each
        // decision, not the RX path's burst capacity.
        self.run_until_rx_idle();
        r
    }

    pub fn run_until_rx_idle(&mut self) {
        let mut n = 0;
        while !self.nic.rx.idle() && n < 10_000 {
            self.nic.step();
            n += 1;
        }
        self.nic.run(40);
    }

    /// Let every timer (the ACK delay) fire on both sides, then decode the
    /// ACKs each sent.
    pub fn settle(&mut self) {
        self.nic.run(2500);
        self.now += Duration::from_us(10);
        self.model.handle_timeout(self.now);
        while let Some(p) = self.model.poll_transmit(self.now) {
            self.model_acks.log(&p);
        }
        while let Some(ev) = self.model.poll_event() {
            if let Event::RecvCompleted(_) = ev {
                self.recv_cqes += 1;
            }
        }
        while let Some(f) = self.nic.tx.frames.pop_front() {
            let p = parse_sent(self.dialect, &f);
            let dest_qp = match &p {
                Packet::Roce(p) => p.bth.dest_qp,
                Packet::Mrc10(p) => p.bth.dest_qp,
            };
            assert_eq!(dest_qp, PEER_QP, "ACKs go to the peer QP: {p:?}");
            self.acks.log(&p);
        }
    }

    /// How much counter `name` moved since the bench started.
    pub fn delta(&mut self, name: &str) -> u32 {
        let b = self.base.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v);
        self.nic.counter(name).wrapping_sub(b)
    }

    /// The common end of every responder test: no DMA protocol error, no
    /// byte written outside the region and the receive CQ, the region
    /// equal to the model's memory, each byte written at most once per
    /// placement the model made, and as many receive CQEs (with the
    /// model's immediates and lengths) as the model completed.
    pub fn check_memory_and_completions(&mut self) {
        self.check_memory();
        self.check_completions();
    }

    pub fn check_memory(&mut self) {
        assert!(
            self.nic.dma.errors.is_empty(),
            "DMA protocol errors: {:?}",
            self.nic.dma.errors
        );
        for (a, n) in self.nic.dma.mem.writes.iter() {
            let in_region = (MR_VA..MR_VA + MR_LEN).contains(&a);
            let in_cq = (RECV_CQ..RECV_CQ + CQ_BYTES).contains(&a);
            assert!(
                in_region || in_cq,
                "byte {a:#x} written ({n} times) outside the placements and the CQ"
            );
        }
        let region = &self.model.memory().regions()[0];
        let hw_bytes = self.nic.dma.mem.read_vec(MR_VA, MR_LEN as usize);
        if let Some(i) = (0..region.data.len()).find(|&i| region.data[i] != hw_bytes[i]) {
            panic!(
                "host memory differs from the model's at {:#x}: {:#x} != {:#x}",
                MR_VA + i as u64,
                hw_bytes[i],
                region.data[i]
            );
        }
    }

    pub fn check_completions(&mut self) {
        // CQEs: the first `recv_cqes` slots written (phase 1), the next not.
        for i in 0..64u64 {
            let c = Completion::decode(&self.nic.dma.mem.read_vec(RECV_CQ + 32 * i, 32));
            let written = c.as_ref().is_ok_and(|c| c.phase);
            assert_eq!(
                written,
                (i as usize) < self.recv_cqes,
                "receive CQE slot {i}: {c:?} (model completed {})",
                self.recv_cqes
            );
            if written {
                let c = c.unwrap();
                assert_eq!((c.qp, c.status), (RESP_QP, CqStatus::Success), "{c:?}");
            }
        }
        assert_eq!(self.delta("completion") as usize, self.recv_cqes, "completions written");
    }

    /// The hardware's last SACK acknowledges cumulatively exactly what the
    /// model's last SACK does.
    pub fn check_final_cum(&self) {
        let hw = self.acks.sacks.last().map(|s| s.0);
        let model = self.model_acks.sacks.last().map(|s| s.0);
        assert_eq!(hw, model, "cumulative PSN of the last SACK (hardware, model)");
        self.check_msns();
    }

    /// The AETH MSNs: the messages the responder completed in order.
    /// An ACK's is a function of its cumulative PSN, so every hardware ACK
    /// whose cumulative PSN the model also acknowledged carries the
    /// model's MSN (their ACKs may coalesce differently); the NAKs answer
    /// the same frames in the same order (`check_same_nacks`), so theirs
    /// are equal in order when both sent as many. Returns how many MSNs
    /// were compared.
    pub fn check_msns(&self) -> usize {
        let model: std::collections::HashMap<Psn, u32> = self.model_acks.ack_msns.iter().copied().collect();
        let mut compared = 0;
        for (i, &(cum, msn)) in self.acks.ack_msns.iter().enumerate() {
            if let Some(&want) = model.get(&cum) {
                assert_eq!(
                    msn, want,
                    "ACK {i} (cumulative PSN {cum:?}): AETH MSN, hardware vs model"
                );
                compared += 1;
            }
        }
        if self.acks.nak_msns.len() == self.model_acks.nak_msns.len() {
            assert_eq!(
                self.acks.nak_msns, self.model_acks.nak_msns,
                "NAK AETH MSNs, hardware vs model"
            );
            compared += self.acks.nak_msns.len();
        }
        compared
    }

    /// After frames the model dropped: nothing placed and no ACK or NACK
    /// sent for them (`what` names the frames in the failure message).
    pub fn check_dropped_silently(&mut self, what: &str) {
        assert_eq!(self.delta("rx_placed"), 0, "nothing placed for {what}");
        assert!(
            self.acks.sacks.is_empty() && self.acks.nacks.is_empty(),
            "no ACK for {what}: {:?}",
            self.acks
        );
    }

    /// The (PSN, kind) lists of the NACKs each side sent: equal.
    pub fn check_same_nacks(&mut self) {
        assert_eq!(
            self.acks.nacks, self.model_acks.nacks,
            "NACKs (PSN, kind): hardware vs model"
        );
    }

    /// The probe answers each side sent: equal, in order.
    pub fn check_same_probe_answers(&mut self) {
        assert_eq!(
            self.acks.probe_answers, self.model_acks.probe_answers,
            "probe answers: hardware vs model"
        );
    }

    /// After frames the model NACKed: `count` NACKs sent, all of `kind`,
    /// the same (PSN, kind) list as the model's.
    pub fn check_nacks(&mut self, count: u32, kind: NackKind) {
        assert_eq!(self.delta("nack_sent"), count, "NACKs sent");
        self.check_same_nacks();
        assert!(
            self.acks.nacks.iter().all(|&(_, k)| k == kind),
            "every NACK is {kind:?}: {:?}",
            self.acks.nacks
        );
    }

    /// The common end of the responder tests: the valid tail (see
    /// [`valid_tail`]) at `psn` and region slot `slot`, then memory,
    /// completions and the last cumulative PSN as the model's, with
    /// `recv_cqes` receive completions in all.
    pub fn finish_with_valid_tail(&mut self, psn: u32, slot: u64, recv_cqes: usize) {
        valid_tail(self, psn, slot);
        self.settle();
        self.check_memory_and_completions();
        self.check_final_cum();
        assert_eq!(self.recv_cqes, recv_cqes, "receive completions");
    }
}

/// Valid traffic after hostile frames: three one-packet WRITE-IMMs in the
/// bench's dialect at fresh PSNs starting at `psn`, at distinct offsets
/// of the region. Accepted by the model (asserted): the bench then
/// checks they were placed and completed on the hardware too.
pub fn valid_tail(b: &mut ResponderBench, psn: u32, slot: u64) {
    for k in 0..3u32 {
        let f = b.dialect.only_imm_frame(
            psn + k,
            MR_VA + 0x1000 * (slot + u64::from(k)),
            300 + 17 * k as usize,
            RKEY,
        );
        b.inject(f).expect("the model accepts the valid tail");
    }
}

/// Data packets of the peer's requester in `dialect` whose payloads are
/// longer than the path MTU (`MTU`): a WRITE-ONLY 4 bytes over (its DMA
/// length says the same, so only the MTU makes it malformed), a FIRST
/// 1 byte over, a MIDDLE of twice the MTU, a LAST-IMM 64 bytes over, at
/// PSNs from `RQ_PSN` on and distinct offsets of the region.
pub fn frames_above_the_mtu(dialect: Dialect) -> Vec<Vec<u8>> {
    let msg_len = 4 * MTU as u32;
    let cases = [
        (Opcode::WriteOnly, mrc10::Opcode::WriteOnly, MTU + 4, MTU as u32 + 4),
        (Opcode::WriteFirst, mrc10::Opcode::WriteFirst, MTU + 1, msg_len),
        (Opcode::WriteMiddle, mrc10::Opcode::WriteMiddle, 2 * MTU, msg_len),
        (Opcode::WriteLastImm, mrc10::Opcode::WriteLastImm, MTU + 64, msg_len),
    ];
    cases
        .iter()
        .enumerate()
        .map(|(k, &(legacy, op10, len, msg_len))| {
            let psn = RQ_PSN + k as u32;
            let va = MR_VA + 0x4000 * k as u64;
            match dialect {
                Dialect::Legacy => frame_of(&write_packet(
                    legacy,
                    RESP_QP,
                    psn,
                    va,
                    msg_len,
                    0,
                    pattern(len, psn),
                    RKEY,
                )),
                Dialect::Mrc10 => mrc10_frame(&mrc10_write(op10, psn, va, msg_len, pattern(len, psn), RKEY, true)),
            }
        })
        .collect()
}

/// The MTU test of both dialects: every frame of [`frames_above_the_mtu`]
/// refused by the model (`Malformed`) and, on the core, counted in
/// `rx_not_data` with nothing placed and no acknowledgement; then the
/// valid tail at the same (still unreceived) PSNs, placed and completed
/// as the model does.
pub fn above_the_mtu_nothing_placed(mut b: ResponderBench) {
    let frames = frames_above_the_mtu(b.dialect);
    let n = frames.len() as u32;
    for (k, f) in frames.into_iter().enumerate() {
        let r = b.inject(f);
        assert!(matches!(r, Err(RxError::Malformed(_))), "model, frame {k}: {r:?}");
    }
    b.settle();
    b.check_memory();
    b.check_dropped_silently("payloads above the MTU");
    assert_eq!(b.delta("rx_not_data"), n, "each counted as not data");
    b.finish_with_valid_tail(RQ_PSN, 0, 3);
}

/// Where the transport (the BTH onwards) starts in a frame to the NIC
/// (Ethernet, IPv4 without options, UDP).
pub const TRANSPORT_AT: usize = 14 + 20 + 8;
/// ICRC bytes at the end of every frame.
pub const ICRC_LEN: usize = 4;

/// The transport bytes of a frame to the NIC: the BTH to the ICRC.
pub fn transport_of(frame: &[u8]) -> &[u8] {
    &frame[TRANSPORT_AT..frame.len() - ICRC_LEN]
}

/// A frame to the NIC around transport bytes `t` (BTH onwards), in the
/// data class: outer headers with consistent lengths and checksum, a
/// valid ICRC, so the transport checks see whatever `t` holds.
pub fn frame_with_transport(t: &[u8]) -> Vec<u8> {
    use proto::wire::frame::{emit_outer, OuterFields};
    use proto::wire::{icrc, IpPair};
    let encap = to_nic();
    let udp_len = t.len() + ICRC_LEN;
    let mut f = vec![0u8; 14 + encap.ip_header_len() + 8 + udp_len];
    let outer = OuterFields {
        dscp: Profile::DEFAULT.dscp.dscp_of(TrafficClass::Trimmable),
        ecn: 0,
        src_port: 0x1003,
        flow_label: 0,
        udp_len,
    };
    let (at, _) = emit_outer(&encap, &outer, &mut f);
    f[at..at + t.len()].copy_from_slice(t);
    let icrc_at = f.len() - ICRC_LEN;
    let c = icrc::compute_icrc(
        &f[14..icrc_at],
        encap.ip_header_len(),
        matches!(encap.ip, IpPair::V6 { .. }),
    );
    f[icrc_at..].copy_from_slice(&c.to_le_bytes());
    f
}

/// Bytes of one send CQE.
const CQE_BYTES: u64 = 32;

/// Whether the core wrote its send CQE in `slot` (its phase bit set).
pub fn send_cqe_written(nic: &Nic, slot: u64) -> bool {
    Completion::decode(&nic.dma.mem.read_vec(SEND_CQ + CQE_BYTES * slot, CQE_BYTES as usize)).is_ok_and(|c| c.phase)
}

/// The genuine SACK `f` after forged acknowledgements of the requester's
/// WRITE `wr_id`: the model completes it once, successfully; so does the
/// core, in CQE slot 0, and no second CQE follows.
pub fn genuine_sack_completes_once(nic: &mut Nic, model: &mut Qp, now: Instant, f: Vec<u8>, wr_id: u64) {
    model.handle_frame(now, &f).expect("the model accepts the genuine SACK");
    let done: Vec<_> = std::iter::from_fn(|| model.poll_event())
        .filter_map(|e| if let Event::SendCompleted(c) = e { Some(c) } else { None })
        .collect();
    assert_eq!(done.len(), 1);
    assert_eq!((done[0].wr_id, done[0].status), (wr_id, WcStatus::Success));
    nic.rx.push(f);
    let mut cycles = 0;
    while !send_cqe_written(nic, 0) && cycles < 20_000 {
        nic.step();
        cycles += 1;
    }
    nic.run(2000);
    let c = Completion::decode(&nic.dma.mem.read_vec(SEND_CQ, CQE_BYTES as usize)).unwrap();
    assert!(c.phase, "the genuine SACK completes the WRITE");
    assert_eq!((c.qp, c.wr_id, c.status), (PEER_QP, wr_id, CqStatus::Success), "{c:?}");
    assert!(!send_cqe_written(nic, 1), "completed exactly once");
    assert_eq!(nic.counter("completion"), 1);
}

/// The requester wrote nothing but its send CQ, without a DMA protocol
/// error.
pub fn requester_wrote_only_its_cq(nic: &Nic) {
    assert!(nic.dma.errors.is_empty(), "DMA protocol errors: {:?}", nic.dma.errors);
    for (a, _) in nic.dma.mem.writes.iter() {
        assert!(
            (SEND_CQ..SEND_CQ + CQ_BYTES).contains(&a),
            "requester wrote {a:#x} outside its CQ"
        );
    }
}
