//! MRC 1.0 frames at the MAC of one verilated `MrcCore` (no loopback): the
//! RX core parses MRC 1.0 (docs/hw/mrc10-wire.md, "The RX core") beside
//! the legacy dialect it still sends. Each frame also goes to the golden
//! model's MRC 1.0 responder (`proto::model::Qp`, `Transport::Mrc`), and
//! the same WRITEs in the legacy dialect go to a second core: the MRC 1.0
//! WRITE must land byte for byte where its RETHs say, complete as the
//! model completes it, and move every counter exactly as the legacy
//! frames do; malformed MRC 1.0 headers are dropped and counted as the
//! golden parser (`proto::wire::mrc10::parse_frame`) drops them.

mod hostile;

use bytes::Bytes;
use contract::layout::{Completion, CqStatus};
use cosim::nic::{build_core, Nic, Stalls};
use hostile::{
    configure_globals, configure_responder, frame_with_transport, model_responder, pattern, to_nic, Dialect, CQ_BYTES,
    EVS, MR_LEN, MR_VA, MTU, PEER_QP, RECV_CQ, RESP_QP, RKEY, RQ_PSN,
};
use proto::model::{Event, Qp, QueuePair, RxError, Transport};
use proto::time::{Duration, Instant};
use proto::wire::mrc10::{self, choices::TrafficClass, Headers, MethRepr, Mrc10Packet, Profile, TsethRepr};
use proto::wire::{
    emit_frame, pad_for, parse_frame, BthRepr, DataExtRepr, MrcExtRepr, Opcode, Packet, PlacementRepr, RethRepr,
    RocePacket,
};
use proto::Psn;
use verilated::{skip_without_verilator, BuildOptions};

/// The core as the hostile benches configure it: the responder `RESP_QP`
/// (sending the legacy dialect, whatever it receives).
fn configure(nic: &mut Nic) {
    configure_globals(nic);
    configure_responder(nic);
}

/// One packet of a WRITE, in both dialects: opcode, PSN, the message's VA
/// and length, this packet's offset and payload, the immediate of a
/// `*_IMM`, a TSETH in the MRC 1.0 form.
#[derive(Clone)]
struct DataPacket {
    opcode: Opcode,
    psn: u32,
    msg_va: u64,
    msg_len: u32,
    off: u32,
    payload: Vec<u8>,
    msn: u16,
    ts: bool,
}

impl DataPacket {
    fn ev_index(&self) -> u16 {
        (self.psn % u32::from(EVS)) as u16
    }

    /// The MRC 1.0 frame: METH, [TSETH], the RETH with this packet's VA
    /// (on every packet), [ImmDt].
    fn mrc10_frame(&self) -> Vec<u8> {
        let op = mrc10::Opcode::from_u8(self.opcode.as_u8() + 0xC0).expect("a WRITE opcode");
        let mut p: Mrc10Packet = mrc10::catalog::write(op, self.psn, self.payload.len(), self.ts);
        p.ev = 0x1000 + u32::from(self.ev_index());
        p.class = TrafficClass::Trimmable;
        p.bth.dest_qp = RESP_QP;
        p.bth.ack_req = false;
        p.bth.solicited = false;
        p.bth.pad = pad_for(self.payload.len());
        if let Headers::Write(w) = &mut p.headers {
            w.meth = MethRepr {
                rq_msn: 0,
                msn: self.msn,
            };
            if self.ts {
                w.tseth = Some(TsethRepr {
                    tx_ts: 0x100 + self.psn as u16,
                    resolution: true,
                    format: 0,
                });
            }
            w.reth = RethRepr {
                va: self.msg_va + u64::from(self.off),
                rkey: RKEY,
                dma_len: self.msg_len,
            };
            w.imm = op.has_imm().then_some(0xC0DE_0000 | self.psn);
        }
        p.payload = Bytes::from(self.payload.clone());
        p.validate(&Profile::DEFAULT).expect("a valid MRC 1.0 packet");
        let mut f = Vec::new();
        mrc10::emit_frame(&p, &to_nic(), &Profile::DEFAULT, &mut f);
        f
    }

    /// The legacy frame of the same packet: RETH on FIRST / ONLY, the
    /// placement block otherwise.
    fn legacy_frame(&self) -> Vec<u8> {
        let opcode = self.opcode;
        let pkt = RocePacket {
            ev: 0x1000 + u32::from(self.ev_index()),
            ecn_ce: false,
            trimmed: false,
            bth: BthRepr {
                opcode,
                solicited: false,
                mig_req: true,
                pad: pad_for(self.payload.len()),
                pkey: 0xFFFF,
                fecn: false,
                becn: false,
                mrc_ext: true,
                dest_qp: RESP_QP,
                ack_req: false,
                psn: Psn::new(self.psn),
            },
            reth: opcode.has_reth().then_some(RethRepr {
                va: self.msg_va,
                rkey: RKEY,
                dma_len: self.msg_len,
            }),
            imm: opcode.has_imm().then_some(0xC0DE_0000 | self.psn),
            aeth: None,
            ext: Some(MrcExtRepr::Data(DataExtRepr {
                ev_index: self.ev_index(),
                retransmit: false,
                ev_seq: self.psn,
                tx_ts: 0x100 + self.psn,
                msg_offset: self.off,
                placement: (!opcode.has_reth()).then_some(PlacementRepr {
                    va: self.msg_va + u64::from(self.off),
                    rkey: RKEY,
                }),
            })),
            payload: Bytes::from(self.payload.clone()),
        };
        let mut f = Vec::new();
        emit_frame(&pkt, &to_nic(), &mut f);
        f
    }
}

/// A message of `len` bytes at `va` from PSN `psn`, cut at the MTU: FIRST,
/// MIDDLE.., LAST(-IMM), or ONLY(-IMM).
fn message(psn: u32, va: u64, len: usize, imm: bool, msn: u16) -> Vec<DataPacket> {
    let n = len.div_ceil(MTU).max(1);
    (0..n)
        .map(|k| {
            let opcode = match (n, k, imm) {
                (1, _, false) => Opcode::WriteOnly,
                (1, _, true) => Opcode::WriteOnlyImm,
                (_, 0, _) => Opcode::WriteFirst,
                (_, k, false) if k + 1 == n => Opcode::WriteLast,
                (_, k, true) if k + 1 == n => Opcode::WriteLastImm,
                _ => Opcode::WriteMiddle,
            };
            let off = k * MTU;
            DataPacket {
                opcode,
                psn: psn + k as u32,
                msg_va: va,
                msg_len: len as u32,
                off: off as u32,
                payload: pattern((len - off).min(MTU), psn + k as u32),
                msn,
                ts: k % 2 == 1,
            }
        })
        .collect()
}

/// The dialect whose golden model is `transport`.
fn dialect_of(transport: Transport) -> Dialect {
    match transport {
        Transport::Mrc => Dialect::Mrc10,
        _ => Dialect::Legacy,
    }
}

/// A responder core (sending legacy) and the golden responder of either
/// dialect, fed the same frames.
struct Bench {
    nic: Nic,
    model: Qp,
    now: Instant,
    base: Vec<(String, u32)>,
    /// Cumulative PSNs of the SACKs each side sent.
    hw_cums: Vec<u32>,
    model_cums: Vec<u32>,
    recv_cqes: usize,
}

impl Bench {
    fn new(transport: Transport, seed: u64) -> Bench {
        let built = build_core(&BuildOptions::default()).unwrap();
        let mut nic = Nic::new(&built, Stalls::default(), seed).unwrap();
        configure(&mut nic);
        nic.run(300);
        let base = hw::core::WIRED_COUNTERS
            .iter()
            .map(|c| (c.to_string(), nic.counter(c)))
            .collect();
        Bench {
            nic,
            model: model_responder(dialect_of(transport), RQ_PSN),
            now: Instant::from_us(1),
            base,
            hw_cums: Vec::new(),
            model_cums: Vec::new(),
            recv_cqes: 0,
        }
    }

    fn inject(&mut self, frame: Vec<u8>) -> Result<(), RxError> {
        let r = self.model.handle_frame(self.now, &frame);
        self.now += Duration::from_ns(200);
        self.nic.rx.push(frame);
        let mut n = 0;
        while !self.nic.rx.idle() && n < 10_000 {
            self.nic.step();
            n += 1;
        }
        self.nic.run(40);
        r
    }

    /// Let the ACK timers fire on both sides; collect the SACKs (the core
    /// answers in the legacy dialect, the model in its own).
    fn settle(&mut self) {
        self.nic.run(2500);
        self.now += Duration::from_us(10);
        self.model.handle_timeout(self.now);
        while let Some(p) = self.model.poll_transmit(self.now) {
            match p {
                Packet::Mrc10(p) => {
                    if let Headers::Sack { seth, .. } = p.headers {
                        self.model_cums.push(seth.cum_ack_psn.value());
                    }
                }
                Packet::Roce(p) => {
                    if let Some(MrcExtRepr::Sack(_)) = p.ext {
                        self.model_cums.push(p.bth.psn.value());
                    }
                }
            }
        }
        while let Some(ev) = self.model.poll_event() {
            if let Event::RecvCompleted(_) = ev {
                self.recv_cqes += 1;
            }
        }
        while let Some(f) = self.nic.tx.frames.pop_front() {
            let (p, _) = parse_frame(&f).unwrap_or_else(|e| panic!("the NIC sent a malformed frame: {e:?}"));
            assert_eq!(p.bth.dest_qp, PEER_QP, "ACKs go to the peer QP: {p:?}");
            if let Some(MrcExtRepr::Sack(_)) = p.ext {
                self.hw_cums.push(p.bth.psn.value());
            }
        }
    }

    fn deltas(&mut self) -> Vec<(String, u32)> {
        let base = self.base.clone();
        base.into_iter()
            .map(|(n, b)| {
                let d = self.nic.counter(&n).wrapping_sub(b);
                (n, d)
            })
            .collect()
    }

    fn delta(&mut self, name: &str) -> u32 {
        let b = self.base.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v);
        self.nic.counter(name).wrapping_sub(b)
    }

    /// No DMA error, nothing written outside the region and the receive
    /// CQ, the region equal to the model's memory; the receive CQEs the
    /// model's.
    fn check_memory_and_completions(&mut self) {
        assert!(self.nic.dma.errors.is_empty(), "DMA errors: {:?}", self.nic.dma.errors);
        for (a, n) in self.nic.dma.mem.writes.iter() {
            let ok = (MR_VA..MR_VA + MR_LEN).contains(&a) || (RECV_CQ..RECV_CQ + CQ_BYTES).contains(&a);
            assert!(ok, "byte {a:#x} written ({n} times) outside the region and the CQ");
        }
        let region = &self.model.memory().regions()[0];
        let hw = self.nic.dma.mem.read_vec(MR_VA, MR_LEN as usize);
        if let Some(i) = (0..region.data.len()).find(|&i| region.data[i] != hw[i]) {
            panic!(
                "host memory differs from the model's at {:#x}: {:#x} != {:#x}",
                MR_VA + i as u64,
                hw[i],
                region.data[i]
            );
        }
        for i in 0..64u64 {
            let c = Completion::decode(&self.nic.dma.mem.read_vec(RECV_CQ + 32 * i, 32));
            let written = c.as_ref().is_ok_and(|c| c.phase);
            assert_eq!(written, (i as usize) < self.recv_cqes, "receive CQE slot {i}: {c:?}");
            if written {
                let c = c.unwrap();
                assert_eq!((c.qp, c.status), (RESP_QP, CqStatus::Success), "{c:?}");
            }
        }
        assert_eq!(self.delta("completion") as usize, self.recv_cqes, "completions written");
    }
}

/// The WRITEs of the placement test: a 4-packet WRITE-IMM (FIRST, two
/// MIDDLEs, LAST-IMM), a 2-packet WRITE (FIRST, LAST), a WRITE-ONLY and a
/// WRITE-ONLY-IMM, PSNs from `RQ_PSN`, in a scrambled order.
fn scrambled_writes() -> Vec<DataPacket> {
    let mut all = Vec::new();
    all.extend(message(RQ_PSN, MR_VA + 0x100, 3 * MTU + 300, true, 1));
    all.extend(message(RQ_PSN + 4, MR_VA + 0x2000, MTU + 517, false, 2));
    all.extend(message(RQ_PSN + 6, MR_VA + 0x3003, 500, false, 3));
    all.extend(message(RQ_PSN + 7, MR_VA + 0x3400, 77, true, 4));
    // LAST-IMM first, then the MIDDLEs backwards, the second message's
    // LAST before its FIRST, the ONLYs between.
    let order = [3, 7, 5, 2, 6, 1, 0, 4];
    order.iter().map(|&i| all[i].clone()).collect()
}

/// A WRITE split into MRC 1.0 packets (RETH on each, METH MSNs, TSETH on
/// every other one) and delivered out of order lands byte for byte at the
/// VAs its RETHs carry and completes as the golden MRC 1.0 responder
/// completes it; the same packets in the legacy dialect, on a second core,
/// move every counter by the same amount and leave the same memory.
#[test]
fn mrc10_write_out_of_order_is_placed_as_the_legacy_one() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let pkts = scrambled_writes();
    let mut m10 = Bench::new(Transport::Mrc, 31);
    for p in &pkts {
        m10.inject(p.mrc10_frame())
            .unwrap_or_else(|e| panic!("the golden MRC 1.0 responder accepts PSN {:#x}: {e:?}", p.psn));
    }
    m10.settle();
    m10.check_memory_and_completions();
    assert_eq!(m10.recv_cqes, 2, "the two WRITE-IMMs complete");
    // Byte for byte where the RETHs say (not only as the model).
    for p in &pkts {
        let at = p.msg_va + u64::from(p.off);
        assert_eq!(
            m10.nic.dma.mem.read_vec(at, p.payload.len()),
            p.payload,
            "PSN {:#x} at {at:#x}",
            p.psn
        );
    }
    assert_eq!(
        m10.delta("rx_parser_ok") as usize,
        pkts.len(),
        "every MRC 1.0 frame accepted"
    );
    assert_eq!(m10.delta("rx_parser_drop"), 0);
    assert_eq!(m10.delta("rx_placed") as usize, pkts.len(), "every packet placed");
    let last = RQ_PSN + pkts.len() as u32 - 1;
    assert_eq!(m10.hw_cums.last(), Some(&last), "the core's last SACK acknowledges all");
    assert_eq!(m10.model_cums.last(), Some(&last), "as the model's");

    let mut legacy = Bench::new(Transport::MrcLegacy, 31);
    for p in &pkts {
        legacy
            .inject(p.legacy_frame())
            .unwrap_or_else(|e| panic!("the legacy responder accepts PSN {:#x}: {e:?}", p.psn));
    }
    legacy.settle();
    legacy.check_memory_and_completions();
    assert_eq!(m10.deltas(), legacy.deltas(), "counters: MRC 1.0 vs legacy frames");
    assert_eq!(
        m10.nic.dma.mem.read_vec(MR_VA, MR_LEN as usize),
        legacy.nic.dma.mem.read_vec(MR_VA, MR_LEN as usize),
        "host memory: MRC 1.0 vs legacy frames"
    );
    assert_eq!(m10.hw_cums, legacy.hw_cums, "SACKs: MRC 1.0 vs legacy frames");
}

/// Truncated and corrupted MRC 1.0 headers (resealed, so they reach the
/// transport checks) are dropped by the parser and counted
/// (`rx_parser_drop`), exactly the frames the golden parser refuses, each
/// for the reason `mrc10::parse_frame` gives (the model's verdict carries
/// it); nothing is placed or acknowledged; the valid packets then are.
#[test]
fn malformed_mrc10_headers_are_dropped_and_counted() {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let mut b = Bench::new(Transport::Mrc, 32);
    let good = message(RQ_PSN, MR_VA + 0x800, MTU + 200, true, 1);
    let mut bad = Vec::new();
    for p in &good {
        let f = p.mrc10_frame();
        let at = 14 + 20 + 8;
        let t = &f[at..f.len() - 4];
        let chain = if p.ts { 36 } else { 32 } + if p.opcode.has_imm() { 4 } else { 0 };
        // Cut inside every header (BTH, METH, TSETH, RETH, ImmDt) and at
        // each boundary but the chain's end.
        for n in [12, 13, 15, 16, 18, 20, 24, 31, chain - 1] {
            bad.push(frame_with_transport(&t[..n]));
        }
        let forge = |edit: &dyn Fn(&mut Vec<u8>)| {
            let mut t2 = t.to_vec();
            edit(&mut t2);
            frame_with_transport(&t2)
        };
        bad.push(forge(&|t| t[0] = 0xC5)); // an opcode MRC 1.0 does not define
        bad.push(forge(&|t| t[1] |= 0x01)); // TVer
        bad.push(forge(&|t| t[7] = 0x02)); // a WRITE to the endpoint QP
        bad.push(forge(&|t| t[0] = 0xDC)); // a SACK opcode over WRITE bytes
        bad.push(forge(&|t| {
            // No payload, PadCnt 3: the pad beyond the packet.
            t.truncate(chain);
            t[1] |= 0x30;
        }));
    }
    let mut reasons = std::collections::BTreeMap::<String, u32>::new();
    for f in &bad {
        let golden = mrc10::parse_frame(f, &Profile::DEFAULT).expect_err("the golden parser refuses it");
        *reasons.entry(format!("{:?}", golden.kind())).or_default() += 1;
        match b.inject(f.clone()) {
            Err(RxError::Wire(e)) => assert_eq!(e.kind(), golden.kind(), "the model's reason is the parser's"),
            r => panic!("the model drops a malformed header: {r:?}"),
        }
    }
    eprintln!("{} malformed MRC 1.0 frames: {reasons:?}", bad.len());
    b.settle();
    assert_eq!(
        b.delta("rx_parser_drop") as usize,
        bad.len(),
        "each counted as a parser drop"
    );
    assert_eq!(b.delta("rx_parser_ok"), 0, "none accepted");
    assert_eq!(b.delta("rx_placed"), 0, "nothing placed");
    assert!(b.hw_cums.is_empty(), "no ACK for a dropped frame: {:?}", b.hw_cums);
    for p in good.iter().rev() {
        b.inject(p.mrc10_frame()).expect("the model accepts the valid packets");
    }
    b.settle();
    b.check_memory_and_completions();
    assert_eq!(b.recv_cqes, 1);
    assert_eq!(b.delta("rx_parser_ok") as usize, good.len());
    assert_eq!(
        b.hw_cums.last(),
        b.model_cums.last(),
        "last cumulative PSN: core vs model"
    );
}
