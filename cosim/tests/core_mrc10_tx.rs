//! The core's TX side in MRC 1.0 (docs/hw/mrc10-wire.md, "The TX core"):
//! one verilated `MrcCore` with the own row's `wire_mrc10` set, WRITEs
//! posted as a driver posts them. Every frame on MAC TX must equal, byte
//! for byte (ICRC included), what `proto::wire::mrc10::emit_frame` writes
//! for the packet the golden MRC 1.0 requester (`proto::model::mrc`'s
//! `data_packet`) would send: opcode, METH MSNs, TSETH, RETH on every
//! packet with its own VA, ImmDt, pad, DSCP / ECN of the data class. And
//! in loopback, the core set to MRC 1.0 talks to itself: the WRITEs are
//! placed, acknowledged and completed.

use contract::layout::{Completion, CqStatus, SqContext, SqDescriptor, SqOpcode};
use contract::regmap;
use cosim::nic::{build_core, Nic, ResponderParams, RetxParams, Stalls, Station};
use proto::wire::mrc10::choices::{self, TrafficClass};
use proto::wire::mrc10::{
    self, emit_frame, parse_frame, BthRepr, Headers, MethRepr, Mrc10Packet, Opcode, Profile, TsethRepr,
};
use proto::wire::{Encap, RethRepr};
use proto::Psn;
use verilated::{skip_without_verilator, BuildOptions, Built};

const QP: u8 = 5;
const DEST_QP: u32 = 0x77;
/// The first message crosses the 24-bit PSN wrap.
const START_PSN: u32 = 0xFF_FFFE;
const SQ_BASE: u64 = 0x1000_0000;
const EVS: u16 = 8;
const RKEY: u32 = 0x1234;
const PKEY: u16 = 0xFFFF;
const SEND_CQ: u64 = 0x8000_0000;
const RECV_CQ: u64 = 0x8100_0000;

/// The addresses and EV values of one run: IPv4 with 16-bit EVs (the UDP
/// source port), or IPv6 with 32-bit ones (bits 31-16 in the flow label).
#[derive(Clone, Copy, Debug)]
struct Net {
    local: Station,
    peer: Station,
    /// The local station's view (`reversed()`: the peer's).
    encap: Encap,
    /// EV `i` of the set carries `ev_base + i`.
    ev_base: u32,
}

/// `Encap::test_v4`'s stations.
const V4: Net = Net {
    local: Station::v4(0x0200_0000_0001, 0x0A00_0001),
    peer: Station::v4(0x0200_0000_0002, 0x0A00_0002),
    encap: Encap::test_v4(),
    ev_base: 0x1000,
};

/// `Encap::test_v6`'s stations (fd00::1, fd00::2), with EVs whose upper
/// half is not 0, on a base that is not a multiple of 128 (no EV's index
/// sits in its value's low bits).
const V6: Net = Net {
    local: Station::v6(0x0200_0000_0001, 0xfd00 << 112 | 1),
    peer: Station::v6(0x0200_0000_0002, 0xfd00 << 112 | 2),
    encap: Encap::test_v6(),
    ev_base: 0xA5C3_1234,
};

impl Net {
    /// Whether `ev` is one of the set's.
    fn in_set(&self, ev: u32) -> bool {
        (self.ev_base..self.ev_base + u32::from(EVS)).contains(&ev)
    }
}
/// ECN of MRC 1.0 data (ECT(0), `proto::model::mrc`).
const ECN_ECT0: u8 = 2;

fn configure(nic: &mut Nic, net: &Net, log2_mtu: u8, mrc10: bool) {
    nic.set_cc(QP, 4096, 1 << 20, 256);
    let retx = RetxParams::SINGLE_CARD;
    nic.set_retransmit(QP, &retx, 15);
    nic.set_addresses_wire(net.local, 3, net.peer, mrc10);
    nic.set_ev_ring(0x9000_0000, 8);
    nic.set_ev_set(QP, EVS, net.ev_base);
    nic.set_cq_ring(0, SEND_CQ, 6);
    let ctx = SqContext {
        sq_base: SQ_BASE,
        cq_index: 0,
        addr_index: 3,
        dest_qp: DEST_QP,
        start_psn: START_PSN,
        pkey: PKEY,
        sq_log2_size: 4,
        log2_mtu,
        ev_count: EVS as u8,
        enable: true,
        send_mpr_units: 2,
        ev_min_active: 1,
    };
    nic.start_send_qp(QP, &ctx);
}

/// The work requests of the byte-exact test: sizes around the MTUs (one
/// byte, exactly one MTU, several with a short last packet, lengths not a
/// multiple of 4 so every pad occurs), with and without immediate.
fn work_requests() -> Vec<SqDescriptor> {
    let sizes_imm: [(u32, bool); 6] = [
        (3000, false),
        (100, true),
        (1, false),
        (1024, true),
        (2051, true),
        (258, false),
    ];
    sizes_imm
        .iter()
        .enumerate()
        .map(|(i, &(length, imm))| SqDescriptor {
            opcode: if imm { SqOpcode::WriteImm } else { SqOpcode::Write },
            signaled: true,
            length,
            wr_id: 1 + i as u64,
            local_iova: 0x2000_0000 + 0x10_0000 * i as u64 + i as u64,
            remote_va: 0x5000_0000 + 0x10_0000 * i as u64 + 3 * i as u64,
            rkey: RKEY,
            imm: if imm { 0xABCD_EF00 + i as u32 } else { 0 },
        })
        .collect()
}

/// The packet the golden MRC 1.0 requester sends for segment `seg` of
/// `wr` (request number `wr_seq`, `rq_msn` WRITE-IMMs before it), with the
/// EV and TSETH timestamp the frame carries (the core's choice and clock).
#[allow(clippy::too_many_arguments)]
fn golden_packet(
    wr: &SqDescriptor,
    payload: &[u8],
    mtu: usize,
    wr_seq: u16,
    rq_msn: u16,
    seg: usize,
    psn: u32,
    ev: u32,
    tx_ts: u16,
) -> Mrc10Packet {
    let n = (wr.length as usize).div_ceil(mtu).max(1);
    let imm = wr.opcode == SqOpcode::WriteImm;
    let (single, first, last) = (n == 1, seg == 0, seg + 1 == n);
    let opcode = match (single, first, last, imm) {
        (true, _, _, false) => Opcode::WriteOnly,
        (true, _, _, true) => Opcode::WriteOnlyImm,
        (false, true, _, _) => Opcode::WriteFirst,
        (false, false, true, false) => Opcode::WriteLast,
        (false, false, true, true) => Opcode::WriteLastImm,
        (false, false, false, _) => Opcode::WriteMiddle,
    };
    let off = seg * mtu;
    let end = (off + mtu).min(wr.length as usize);
    let body = bytes::Bytes::copy_from_slice(&payload[off..end]);
    let pad = ((4 - body.len() % 4) % 4) as u8;
    Mrc10Packet {
        ev,
        ecn: ECN_ECT0,
        class: TrafficClass::Trimmable,
        bth: BthRepr {
            opcode,
            solicited: false,
            mig_req: true,
            pad,
            pkey: PKEY,
            fecn: false,
            becn: false,
            dest_qp: DEST_QP,
            ack_req: last,
            retransmit: false,
            timestamp: true,
            psn: Psn::new(psn),
        },
        headers: Headers::Write(mrc10::WriteHeaders {
            meth: MethRepr { rq_msn, msn: wr_seq },
            tseth: Some(TsethRepr {
                tx_ts,
                resolution: choices::TS_RESOLUTION,
                format: choices::TS_FORMAT,
            }),
            reth: RethRepr {
                va: wr.remote_va + off as u64,
                rkey: wr.rkey,
                dma_len: wr.length,
            },
            imm: if opcode.has_imm() { Some(wr.imm) } else { None },
        }),
        payload: body,
    }
}

/// Post `wrs` on a fresh core set to MRC 1.0 with MTU `2^log2_mtu`; check
/// every frame against `emit_frame`. Returns the frames checked.
fn send_and_check(built: &Built, net: &Net, log2_mtu: u8, seed: u64) -> usize {
    let mtu = 1usize << log2_mtu;
    let mut nic = Nic::new(built, Stalls::default(), seed).unwrap();
    configure(&mut nic, net, log2_mtu, true);
    let wrs = work_requests();
    for (i, wr) in wrs.iter().enumerate() {
        nic.dma.mem.fill(SQ_BASE + 64 * i as u64, &wr.encode().unwrap());
        let payload: Vec<u8> = (0..wr.length)
            .map(|k| (k as u8).wrapping_mul(31).wrapping_add(i as u8 * 7))
            .collect();
        nic.dma.mem.fill(wr.local_iova, &payload);
    }
    nic.doorbell(QP, wrs.len() as u32);
    let want: usize = wrs.iter().map(|w| (w.length as usize).div_ceil(mtu).max(1)).sum();
    let mut cycles = 0;
    while nic.tx.frames.len() < want && cycles < 60_000 {
        nic.step();
        cycles += 1;
    }
    assert!(nic.dma.errors.is_empty(), "DMA protocol errors: {:?}", nic.dma.errors);
    assert_eq!(nic.tx.bad_keep, 0);
    assert_eq!(nic.tx.underruns, 0, "cycles with no beat inside a frame on the MAC");
    let frames: Vec<Vec<u8>> = nic.tx.frames.drain(..).collect();
    assert_eq!(frames.len(), want, "frames on MAC TX after {cycles} cycles (MTU {mtu})");

    let profile = Profile::DEFAULT;
    let encap = net.encap;
    let (mut psn, mut k, mut rq_msn, mut last_ts) = (START_PSN, 0, 0u16, None::<u16>);
    for (i, wr) in wrs.iter().enumerate() {
        let payload = nic.dma.mem.read_vec(wr.local_iova, wr.length as usize);
        let n = (wr.length as usize).div_ceil(mtu).max(1);
        for seg in 0..n {
            let frame = &frames[k];
            // The EV and the timestamp are the core's: read them back (the
            // golden parser also checks the ICRC), then check them.
            let (got, _) = parse_frame(frame, &profile).unwrap_or_else(|e| panic!("MTU {mtu} frame {k}: {e:?}"));
            assert!(net.in_set(got.ev), "EV {:#x} outside the set", got.ev);
            let Headers::Write(w) = got.headers else {
                panic!("frame {k} is not a WRITE: {:?}", got.bth.opcode)
            };
            let tx_ts = w.tseth.expect("every data packet is stamped").tx_ts;
            if let Some(t) = last_ts {
                assert!(
                    tx_ts.wrapping_sub(t) < 0x8000,
                    "timestamps go forward: {t} then {tx_ts}"
                );
            }
            last_ts = Some(tx_ts);
            let want_pkt = golden_packet(wr, &payload, mtu, i as u16, rq_msn, seg, psn, got.ev, tx_ts);
            let mut want_frame = Vec::new();
            emit_frame(&want_pkt, &encap, &profile, &mut want_frame);
            if *frame != want_frame {
                let diff: Vec<(usize, u8, u8)> = frame
                    .iter()
                    .zip(&want_frame)
                    .enumerate()
                    .filter(|(_, (a, b))| a != b)
                    .map(|(j, (a, b))| (j, *a, *b))
                    .take(12)
                    .collect();
                panic!(
                    "MTU {mtu} wr {i} seg {seg}: frame differs from emit_frame (len {} vs {}), (offset, core, golden): {diff:x?}",
                    frame.len(),
                    want_frame.len()
                );
            }
            k += 1;
            psn = (psn + 1) & 0xFF_FFFF;
        }
        if wr.opcode == SqOpcode::WriteImm {
            rq_msn += 1;
        }
    }
    assert_eq!(nic.counter("data_sent") as usize, want);
    assert_eq!(nic.counter("tx_frames") as usize, want);
    k
}

/// Whole data frames of the core set to MRC 1.0, byte for byte against
/// `emit_frame`, at MTU 256, 1024 and 4096.
#[test]
fn core_sends_mrc10_writes_as_emit_frame_writes_them() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let built = build_core(&BuildOptions::default()).unwrap();
    let mut total = 0;
    for (net, log2_mtu, seed) in [(V4, 8u8, 3u64), (V4, 10, 5), (V4, 12, 9), (V6, 10, 7)] {
        total += send_and_check(&built, &net, log2_mtu, seed);
    }
    eprintln!("{total} MRC 1.0 data frames equal to emit_frame's");
}

/// The core set to MRC 1.0 in loopback: its MRC 1.0 WRITEs come back to
/// its own responder (QP `DEST_QP`), are placed exactly once, acknowledged
/// and completed on both sides, with no resend and no parser drop.
#[test]
fn core_loopback_in_mrc10_places_acks_and_completes() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let built = build_core(&BuildOptions::default()).unwrap();
    for net in [V4, V6] {
        loopback(&built, &net);
    }
}

/// The loopback run over `net`.
fn loopback(built: &Built, net: &Net) {
    let mut nic = Nic::new(built, Stalls::default(), 11).unwrap();
    configure(&mut nic, net, 10, true);
    nic.set_ack_params(4, 2000);
    nic.set_responder(&ResponderParams {
        qp: DEST_QP as u8,
        start_psn: START_PSN,
        rkey: RKEY,
        region_va: 0x5000_0000,
        region_len: 0x0200_0000,
        log2_mtu: 10,
    });
    nic.set_cq_ring(1, RECV_CQ, 6);
    nic.start_send_qp(
        DEST_QP as u8,
        &SqContext {
            sq_base: 0x1800_0000,
            cq_index: 1,
            addr_index: 3,
            dest_qp: u32::from(QP),
            start_psn: 0,
            pkey: PKEY,
            sq_log2_size: 4,
            log2_mtu: 10,
            ev_count: EVS as u8,
            enable: true,
            send_mpr_units: 2,
            ev_min_active: 1,
        },
    );
    nic.csr_write(
        regmap::fault_inject::BASE + regmap::fault_inject::CTRL,
        regmap::fault_inject::CTRL_LOOPBACK,
    );
    let wrs = work_requests();
    for (i, wr) in wrs.iter().enumerate() {
        nic.dma.mem.fill(SQ_BASE + 64 * i as u64, &wr.encode().unwrap());
        let payload: Vec<u8> = (0..wr.length)
            .map(|k| (k as u8).wrapping_mul(29).wrapping_add(3 + i as u8))
            .collect();
        nic.dma.mem.fill(wr.local_iova, &payload);
    }
    nic.doorbell(QP, wrs.len() as u32);
    let last_cqe = SEND_CQ + 32 * (wrs.len() as u64 - 1);
    let done = |nic: &Nic| Completion::decode(&nic.dma.mem.read_vec(last_cqe, 32)).is_ok_and(|c| c.phase);
    let mut cycles = 0u64;
    while !done(&nic) && cycles < 100_000 {
        nic.step();
        cycles += 1;
    }
    nic.run(200);
    if std::env::var_os("CORE_DEBUG").is_some() || !done(&nic) {
        for c in hw::core::WIRED_COUNTERS {
            let v = nic.counter(c);
            if v != 0 {
                eprintln!("counter {c} = {v}");
            }
        }
    }
    assert!(nic.dma.errors.is_empty(), "DMA protocol errors: {:?}", nic.dma.errors);
    for wr in &wrs {
        let src = nic.dma.mem.read_vec(wr.local_iova, wr.length as usize);
        let dst = nic.dma.mem.read_vec(wr.remote_va, wr.length as usize);
        assert_eq!(src, dst, "message {:#x} placed", wr.wr_id);
        for a in wr.remote_va..wr.remote_va + u64::from(wr.length) {
            assert_eq!(nic.dma.mem.writes.get(&a), Some(&1), "byte {a:#x} written once");
        }
    }
    // Receive completions of the WRITE-IMMs, in order, in ring 1.
    let imms: Vec<&SqDescriptor> = wrs.iter().filter(|w| w.opcode == SqOpcode::WriteImm).collect();
    for (j, wr) in imms.iter().enumerate() {
        let rc = Completion::decode(&nic.dma.mem.read_vec(RECV_CQ + 32 * j as u64, 32)).expect("receive CQE");
        assert!(rc.phase, "receive CQE {j} written: {rc:?}");
        assert_eq!(
            (rc.qp, rc.imm, rc.byte_len),
            (DEST_QP, Some(wr.imm), wr.length),
            "{rc:?}"
        );
    }
    for (i, wr) in wrs.iter().enumerate() {
        let c = Completion::decode(&nic.dma.mem.read_vec(SEND_CQ + 32 * i as u64, 32)).expect("send CQE");
        assert!(c.phase, "send CQE {i} written after {cycles} cycles: {c:?}");
        assert_eq!(
            (c.qp, c.wr_id, c.status),
            (u32::from(QP), wr.wr_id, CqStatus::Success),
            "{c:?}"
        );
    }
    eprintln!(
        "MRC 1.0 loopback: {} WRITEs completed on both sides in {cycles} cycles (EVs from {:#x})",
        wrs.len(),
        net.ev_base
    );
    assert_eq!(nic.counter("retransmit"), 0, "no loss, no resend");
    assert!(nic.counter("rx_parser_ok") > 0);
    assert_eq!(nic.counter("rx_parser_drop"), 0, "RX parser drops");
}

/// The responder side: QP `DEST_QP` of a core set to MRC 1.0, its ACKs to
/// QP `QP` at the peer row.
const RQ_PSN: u32 = 0x40;
const MR_VA: u64 = 0x5000_0000;
const MR_LEN: u64 = 0x1_0000;
/// The SACK table's receive window, PSNs (`hw::sack_table::MPR`).
const RX_WINDOW: u32 = hw::sack_table::MPR;

fn configure_responder(nic: &mut Nic, net: &Net) {
    nic.set_addresses_wire(net.local, 3, net.peer, true);
    nic.set_ev_ring(0x9000_0000, 8);
    nic.set_cq_ring(0, SEND_CQ, 6);
    nic.set_cq_ring(1, RECV_CQ, 6);
    // A SACK for every packet: each answer follows from the one packet
    // before it.
    nic.set_ack_params(1, 2000);
    nic.set_responder(&ResponderParams {
        qp: DEST_QP as u8,
        start_psn: RQ_PSN,
        rkey: RKEY,
        region_va: MR_VA,
        region_len: MR_LEN,
        log2_mtu: 10,
    });
    nic.set_ev_set(DEST_QP as u8, EVS, net.ev_base);
    nic.start_send_qp(
        DEST_QP as u8,
        &SqContext {
            sq_base: 0x1800_0000,
            cq_index: 1,
            addr_index: 3,
            dest_qp: u32::from(QP),
            start_psn: 0,
            pkey: PKEY,
            sq_log2_size: 4,
            log2_mtu: 10,
            ev_count: EVS as u8,
            enable: true,
            send_mpr_units: 2,
            ev_min_active: 1,
        },
    );
}

/// An MRC 1.0 WRITE-ONLY to the responder (from the peer), stamped
/// `tx_ts`, on EV `ev`, `len` payload bytes at offset `slot * 64` of the
/// region, with rkey `rkey`.
fn data_frame(net: &Net, psn: u32, ev: u32, tx_ts: u16, slot: u64, len: usize, rkey: u32) -> Vec<u8> {
    let mut p = mrc10::catalog::write(Opcode::WriteOnly, psn, len, true);
    p.ev = ev;
    p.class = TrafficClass::Trimmable;
    p.bth.dest_qp = DEST_QP;
    p.bth.ack_req = false;
    p.bth.solicited = false;
    if let Headers::Write(w) = &mut p.headers {
        w.meth = MethRepr { rq_msn: 0, msn: 0 };
        w.tseth = Some(TsethRepr {
            tx_ts,
            resolution: true,
            format: 0,
        });
        w.reth = RethRepr {
            va: MR_VA + 64 * slot,
            rkey,
            dma_len: len as u32,
        };
        w.imm = None;
    }
    p.payload = bytes::Bytes::from((0..len).map(|k| (k as u8) ^ (psn as u8)).collect::<Vec<u8>>());
    p.validate(&Profile::DEFAULT).expect("a valid MRC 1.0 packet");
    let mut f = Vec::new();
    emit_frame(&p, &net.encap.reversed(), &Profile::DEFAULT, &mut f);
    f
}

/// What the responder must answer, as the golden responder builds it
/// (`proto::model::mrc`: `build_sack`, `queue_nack`, `queue_fatal_ack`)
/// from what the RTL's ACK record carries.
enum Answer {
    /// `trigger`: the data packet the SACK answers (its PSN).
    Sack {
        cum: u32,
        base: u32,
        bitmap: u64,
        trigger: u32,
    },
    Nack {
        psn: u32,
        reason: mrc10::NackReason,
    },
    FatalAck {
        psn: u32,
        msn: u32,
    },
}

fn answer_packet(a: &Answer, ev: u32, echo: u16) -> Mrc10Packet {
    use proto::wire::mrc10::{CcStateRepr, NethRepr, SethRepr, SkipMode};
    use proto::wire::{AethRepr, Syndrome};
    let ctx = (
        choices::context_of(u32::from(DEST_QP as u8)),
        choices::context_of(u32::from(QP)),
    );
    match *a {
        Answer::Sack {
            cum,
            base,
            bitmap,
            trigger,
        } => {
            let seth = SethRepr {
                skip_mode: SkipMode::None,
                probe_response: false,
                ack_psn_offset: Psn::new(trigger)
                    .distance(Psn::new(cum))
                    .clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16,
                ev,
                sender_context: ctx.0,
                receiver_context: ctx.1,
                cum_ack_psn: Psn::new(cum),
                cc_type: choices::CC_TYPE_NSCC,
                cc_flags: choices::cc_flags_from_ce_count(0),
                mpr: (RX_WINDOW / proto::model::api::MPR_UNIT) as u8,
                sack_offset: Psn::new(base).distance(Psn::new(cum)) as i16,
                bitmap,
            };
            let cc_state = CcStateRepr {
                echo_ts: echo,
                ooo_count: 0,
                restore: false,
                cwnd_penalty: 0,
                rcvd_bytes: 0,
            };
            Mrc10Packet::control(
                ev,
                Opcode::Sack,
                PKEY,
                u32::from(QP),
                Psn::new(cum),
                Headers::Sack { seth, cc_state },
            )
        }
        Answer::Nack { psn, reason } => {
            let neth = NethRepr {
                reason,
                vendor_info: 0,
                ev,
                sender_context: ctx.0,
                receiver_context: ctx.1,
                nack_psn: Psn::new(psn),
                cc_type: choices::CC_TYPE_NSCC,
                cc_flags: 0,
                timestamp: echo,
            };
            Mrc10Packet::control(
                ev,
                Opcode::Nack,
                PKEY,
                u32::from(QP),
                Psn::new(psn),
                Headers::Nack(neth),
            )
        }
        Answer::FatalAck { psn, msn } => {
            let aeth = AethRepr {
                syndrome: Syndrome::Nak {
                    code: Syndrome::NAK_REMOTE_ACCESS,
                },
                msn,
            };
            Mrc10Packet::control(ev, Opcode::Ack, PKEY, u32::from(QP), Psn::new(psn), Headers::Ack(aeth))
        }
    }
}

/// The core set to MRC 1.0 answers MRC 1.0 WRITEs in MRC 1.0: a SACK per
/// packet (in order, opening a gap, filling it, a duplicate), a NACK
/// PSN_OOR_WINDOW for a PSN beyond the window, a NACK TRIMMED for a
/// trimmed packet, and an ACK with the remote-access NAK for a bad rkey;
/// every answer byte for byte (ICRC included) what `emit_frame` writes for
/// the golden responder's packet.
#[test]
fn core_answers_mrc10_writes_with_mrc10_sacks_and_nacks() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let built = build_core(&BuildOptions::default()).unwrap();
    for net in [V4, V6] {
        answer_and_check(&built, &net);
    }
}

/// Feed the responder its steps over `net`; check each answer.
fn answer_and_check(built: &Built, net: &Net) {
    use proto::wire::mrc10::NackReason;
    let mut nic = Nic::new(built, Stalls::default(), 21).unwrap();
    configure_responder(&mut nic, net);
    let profile = Profile::DEFAULT;
    let encap = net.encap;
    let bits = |received: &[u32], base: u32| -> u64 {
        received
            .iter()
            .map(|&p| p.wrapping_sub(base) & 0xFF_FFFF)
            .filter(|&d| d < 64)
            .fold(0u64, |b, d| b | 1 << d)
    };
    let mut received: Vec<u32> = Vec::new();
    let mut expected = RQ_PSN;
    // (PSN, trimmed, rkey): in order, a gap, its fill, a duplicate, one
    // beyond the window, a trimmed one, a bad rkey.
    let steps: [(u32, bool, u32); 8] = [
        (RQ_PSN, false, RKEY),
        (RQ_PSN + 1, false, RKEY),
        (RQ_PSN + 3, false, RKEY),
        (RQ_PSN + 2, false, RKEY),
        (RQ_PSN + 2, false, RKEY),
        (RQ_PSN + RX_WINDOW + 5, false, RKEY),
        (RQ_PSN + 4, true, RKEY),
        (RQ_PSN + 4, false, RKEY ^ 1),
    ];
    let mut checked = 0;
    for (i, &(psn, trimmed, rkey)) in steps.iter().enumerate() {
        let ev = net.ev_base + i as u32 % u32::from(EVS);
        let tx_ts = 0x7F00 + 3 * i as u16;
        let mut frame = data_frame(net, psn, ev, tx_ts, i as u64, 40, rkey);
        if trimmed {
            frame = mrc10::trim_frame(&frame, 8, false, &profile).expect("trimmable");
        }
        let answer = if trimmed {
            Answer::Nack {
                psn,
                reason: NackReason::Trimmed,
            }
        } else if psn.wrapping_sub(expected) >= RX_WINDOW && !received.contains(&psn) && psn >= expected {
            Answer::Nack {
                psn,
                reason: NackReason::PsnOorWindow,
            }
        } else if rkey != RKEY {
            // Every frame is a WRITE-ONLY: the messages completed in
            // order are the PSNs below the expected one.
            Answer::FatalAck {
                psn,
                msn: expected - RQ_PSN,
            }
        } else {
            if !received.contains(&psn) {
                received.push(psn);
            }
            while received.contains(&expected) {
                expected += 1;
            }
            Answer::Sack {
                cum: expected - 1,
                base: expected,
                bitmap: bits(&received, expected),
                trigger: psn,
            }
        };
        nic.rx.push(frame);
        nic.run(400);
        let frames: Vec<Vec<u8>> = nic.tx.frames.drain(..).collect();
        assert_eq!(
            frames.len(),
            1,
            "step {i} (PSN {psn:#x}): one answer, got {}",
            frames.len()
        );
        let want = answer_packet(&answer, ev, tx_ts);
        let mut want_frame = Vec::new();
        emit_frame(&want, &encap, &profile, &mut want_frame);
        if frames[0] != want_frame {
            let got = parse_frame(&frames[0], &profile);
            panic!(
                "step {i} (PSN {psn:#x}): answer differs from emit_frame\n core   {:x?}\n golden {:x?}\n parsed {got:?}\n wanted {want:?}",
                frames[0], want_frame
            );
        }
        checked += 1;
    }
    assert_eq!(nic.counter("rx_parser_drop"), 0);
    eprintln!(
        "{checked} MRC 1.0 answers equal to emit_frame's (EVs from {:#x})",
        net.ev_base
    );
}

/// An MRC 1.0 NACK's 16-bit timestamp reaches the retransmit engine as the
/// 32-bit send time it echoes (`hw::rx_parser` unwraps it against the
/// core's clock; the TX path keeps MRC 1.0 send times at the 64 ns grain):
/// a TRIMMED NACK echoing the packet's TSETH makes the core resend it at
/// once (as TRIMMABLE_RETX, retransmission bit set), one echoing another
/// time is stale and changes nothing.
#[test]
fn core_resends_on_an_mrc10_nack_whose_echo_is_the_send_time() {
    use proto::wire::mrc10::{NackReason, NethRepr};
    if skip_without_verilator("the verilated core") {
        return;
    }
    let built = build_core(&BuildOptions::default()).unwrap();
    let mut nic = Nic::new(&built, Stalls::default(), 13).unwrap();
    configure(&mut nic, &V4, 10, true);
    let wr = SqDescriptor {
        opcode: SqOpcode::Write,
        signaled: true,
        length: 100,
        wr_id: 1,
        local_iova: 0x2000_0000,
        remote_va: 0x5000_0000,
        rkey: RKEY,
        imm: 0,
    };
    nic.dma.mem.fill(SQ_BASE, &wr.encode().unwrap());
    nic.dma.mem.fill(wr.local_iova, &[0x5A; 100]);
    nic.doorbell(QP, 1);
    let mut cycles = 0;
    while nic.tx.frames.is_empty() && cycles < 20_000 {
        nic.step();
        cycles += 1;
    }
    let profile = Profile::DEFAULT;
    let first = nic.tx.frames.pop_front().expect("the WRITE went out");
    let (sent, _) = parse_frame(&first, &profile).expect("an MRC 1.0 frame");
    let Headers::Write(w) = sent.headers else {
        panic!("not a WRITE")
    };
    let tx_ts = w.tseth.expect("stamped").tx_ts;
    let nack = |timestamp: u16| {
        let neth = NethRepr {
            reason: NackReason::Trimmed,
            vendor_info: 0,
            ev: sent.ev,
            sender_context: choices::context_of(DEST_QP),
            receiver_context: choices::context_of(u32::from(QP)),
            nack_psn: sent.bth.psn,
            cc_type: choices::CC_TYPE_NSCC,
            cc_flags: 0,
            timestamp,
        };
        let p = Mrc10Packet::control(
            sent.ev,
            Opcode::Nack,
            PKEY,
            u32::from(QP),
            sent.bth.psn,
            Headers::Nack(neth),
        );
        let mut f = Vec::new();
        emit_frame(&p, &V4.encap.reversed(), &profile, &mut f);
        f
    };
    // A stale echo (another transmission's time): no resend.
    let resends = nic.counter("retransmit");
    nic.rx.push(nack(tx_ts.wrapping_sub(1)));
    nic.run(1500);
    assert!(nic.tx.frames.is_empty(), "a NACK with a stale echo changed nothing");
    assert_eq!(nic.counter("retransmit"), resends);
    // The echo of this transmission: resent at once.
    nic.rx.push(nack(tx_ts));
    nic.run(1500);
    let again = nic.tx.frames.pop_front().expect("the NACKed packet resent");
    let (re, _) = parse_frame(&again, &profile).expect("an MRC 1.0 frame");
    assert_eq!((re.bth.opcode, re.bth.psn), (Opcode::WriteOnly, sent.bth.psn));
    assert!(re.bth.retransmit, "retransmission bit");
    assert_eq!(re.class, TrafficClass::TrimmableRetx);
    assert_eq!(re.payload, sent.payload);
    assert_eq!(nic.counter("retransmit"), resends + 1);
    assert_eq!(nic.counter("rx_parser_drop"), 0);
}
