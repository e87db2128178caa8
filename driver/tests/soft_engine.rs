//! The soft NIC's engine stepped by hand (no thread): descriptor refusals
//! and their place in the completion order, ring rows out of range, and
//! hostile datagrams from the network (random bytes, forged packets from
//! many source ports).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};

use contract::config::{self, table};
use contract::layout::{self, cqe, sqe, Completion, CqStatus, SqContext, SqDescriptor, SqOpcode};
use driver::device::{heap_dma, IovaAllocator};
use driver::regfile::CfgRow;
use driver::soft::engine::Engine;
use driver::soft::SoftNicConfig;
use proto::time::Instant;

fn row(t: u8, index: u16, fields: &[(contract::Field, u64)]) -> CfgRow {
    let mut data = [0u8; 32];
    for (f, v) in fields {
        f.put(&mut data, *v);
    }
    CfgRow { table: t, index, data }
}

fn ip(net: u8, host: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, net, host)
}

const CQ_LOG2: u32 = 6;

/// An engine with one CQ, one MR (rkey 0x101 over `data`) and QP 0 in
/// RTS towards `peer`, as the driver would set it up.
struct Nic {
    e: Engine,
    cq: driver::DmaBuffer,
    sq: driver::DmaBuffer,
    data: driver::DmaBuffer,
    cq_read: u32,
    epoch: std::time::Instant,
}

impl Nic {
    fn new(net: u8, me: u8, peer: u8, ev_ports: bool) -> Nic {
        let epoch = std::time::Instant::now();
        let iovas = IovaAllocator::new();
        let mut e = Engine::new(SoftNicConfig {
            ip: IpAddr::V4(ip(net, me)),
            ev_ports,
            ..SoftNicConfig::default()
        })
        .unwrap();
        let cq = heap_dma(&iovas, cqe::SIZE << CQ_LOG2).unwrap();
        let sq = heap_dma(&iovas, sqe::SIZE << 4).unwrap();
        let data = heap_dma(&iovas, 8192).unwrap();
        for b in [&cq, &sq, &data] {
            e.add_dma(b);
        }
        let now = Instant::from_ns(0);
        let peer_ip = u64::from(u32::from(ip(net, peer)));
        e.row(
            now,
            row(
                table::ADDR,
                0,
                &[
                    (config::addr::MAC, 0x0200_0000_0000 | u64::from(peer)),
                    (config::addr::IP_LO, peer_ip),
                ],
            ),
        );
        e.row(
            now,
            row(
                table::CQ_RING,
                0,
                &[
                    (config::ring::BASE, cq.iova()),
                    (config::ring::LOG2_SLOTS, u64::from(CQ_LOG2)),
                ],
            ),
        );
        e.row(now, row(table::RECV_QP, 0, &[(config::recv_init::START_PSN, 100)]));
        e.row(now, row(table::EV, 0, &[(config::ev_value::VALUE, 0xC000)]));
        e.row(
            now,
            row(
                table::MR,
                1,
                &[
                    (config::mr::RKEY, 0x101),
                    (config::mr::BASE_VA, data.iova()),
                    (config::mr::LENGTH, 8192),
                    (config::mr::VALID, 1),
                ],
            ),
        );
        let ctx = SqContext {
            sq_base: sq.iova(),
            cq_index: 0,
            addr_index: 0,
            // The peer's QP 0 on the wire (a soft NIC's MRC 1.0 numbers).
            dest_qp: driver::soft::engine::WIRE_QPN_OFFSET,
            start_psn: 100,
            pkey: 0xFFFF,
            sq_log2_size: 4,
            log2_mtu: 12,
            ev_count: 1,
            enable: true,
            send_mpr_units: 8,
            ev_min_active: 1,
        };
        let mut d = [0u8; 32];
        d[..layout::sq_ctx::SIZE].copy_from_slice(&ctx.encode().unwrap());
        e.row(
            now,
            CfgRow {
                table: table::SQ_CTX,
                index: 0,
                data: d,
            },
        );
        Nic {
            e,
            cq,
            sq,
            data,
            cq_read: 0,
            epoch,
        }
    }

    fn now(&self) -> Instant {
        Instant::from_ns(self.epoch.elapsed().as_nanos() as u64)
    }

    fn step(&mut self) {
        let now = self.now();
        self.e.step(now);
    }

    /// The next CQE, if the engine wrote one (phase check).
    fn poll(&mut self) -> Option<Completion> {
        let slot = (self.cq_read & ((1 << CQ_LOG2) - 1)) as usize;
        let mut b = [0u8; cqe::SIZE];
        self.cq.read(slot * cqe::SIZE, &mut b).unwrap();
        if (b[0] & 1 == 1) != ((self.cq_read >> CQ_LOG2) & 1 == 0) {
            return None;
        }
        self.cq_read += 1;
        Some(Completion::decode(&b).expect("every CQE the engine writes decodes"))
    }
}

/// Good WRITE, a descriptor whose local range is in no buffer, good
/// WRITE, answered by one acknowledgement: the CQEs come in SQ order with
/// the refused one's status in the middle.
#[test]
fn a_refused_descriptor_completes_in_its_place() {
    let mut a = Nic::new(91, 1, 2, false);
    let mut b = Nic::new(91, 2, 1, false);
    let descs = [
        (0u64, a.data.iova(), 64u32),
        (1, 0xdead_0000_0000, 64),
        (2, a.data.iova() + 64, 64),
    ];
    for (i, &(wr_id, local_iova, length)) in descs.iter().enumerate() {
        let d = SqDescriptor {
            opcode: SqOpcode::Write,
            signaled: true,
            length,
            wr_id,
            local_iova,
            remote_va: b.data.iova() + 64 * i as u64,
            rkey: 0x101,
            imm: 0,
        };
        a.sq.write(i * sqe::SIZE, &d.encode().unwrap()).unwrap();
    }
    let now = a.now();
    a.e.doorbell(now, 0, 3);
    let mut got = Vec::new();
    let start = std::time::Instant::now();
    while got.len() < 3 && start.elapsed() < std::time::Duration::from_secs(10) {
        // B answers both WRITEs before A looks at its socket.
        for _ in 0..50 {
            b.step();
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
        a.step();
        while let Some(c) = a.poll() {
            got.push((c.wr_id, c.status, c.sq_index, c.byte_len));
        }
    }
    assert_eq!(
        got,
        vec![
            (0, CqStatus::Success, 0, 64),
            (1, CqStatus::BadLength, 1, 64),
            (2, CqStatus::Success, 2, 64)
        ],
        "{:?}",
        a.e.stats()
    );
    assert_eq!(a.e.stats().completion_mismatches, 0);
}

/// The card's checks in its order (opcode, flags, length); a refused
/// descriptor's CQE keeps its wr_id and length, and its opcode only if it
/// is one.
#[test]
fn refusals_carry_the_cards_status_and_fields() {
    let mut a = Nic::new(90, 1, 2, false);
    let good = SqDescriptor {
        opcode: SqOpcode::Write,
        signaled: true,
        length: 64,
        wr_id: 5,
        local_iova: a.data.iova(),
        remote_va: 0,
        rkey: 0x101,
        imm: 0,
    }
    .encode()
    .unwrap();
    let mut bad_op = good;
    bad_op[0] = 7;
    let mut bad_flags = good;
    sqe::FLAGS.put(&mut bad_flags, 0x81);
    sqe::LENGTH.put(&mut bad_flags, (1 << 31) + 1);
    let mut bad_len = good;
    sqe::LENGTH.put(&mut bad_len, (1 << 31) + 1);
    for (i, d) in [bad_op, bad_flags, bad_len].iter().enumerate() {
        a.sq.write(i * sqe::SIZE, d).unwrap();
    }
    let now = a.now();
    a.e.doorbell(now, 0, 3);
    let got: Vec<_> = std::iter::from_fn(|| a.poll())
        .map(|c| (c.status, c.opcode, c.wr_id, c.byte_len, c.sq_index))
        .collect();
    let big = (1u32 << 31) + 1;
    assert_eq!(
        got,
        vec![
            (CqStatus::BadOpcode, 0, 5, 64, 0),
            (CqStatus::BadFlags, sqe::OP_WRITE, 5, big, 1),
            (CqStatus::BadLength, sqe::OP_WRITE, 5, big, 2),
        ]
    );
}

/// Ring rows the driver never writes (more than 2^16 slots) are refused
/// and counted, not a panic on the NIC's thread.
#[test]
fn ring_rows_out_of_range_are_refused() {
    let mut a = Nic::new(99, 1, 2, false);
    let bad = a.e.stats().bad_rows;
    let base = a.cq.iova();
    for log2 in [17, 60, 64, 255] {
        let now = a.now();
        a.e.row(
            now,
            row(
                table::CQ_RING,
                0,
                &[(config::ring::BASE, base), (config::ring::LOG2_SLOTS, log2)],
            ),
        );
        a.e.row(
            now,
            row(
                table::EV_RING,
                0,
                &[(config::ring::BASE, base), (config::ring::LOG2_SLOTS, log2)],
            ),
        );
    }
    assert_eq!(a.e.stats().bad_rows, bad + 8);
}

/// Random datagrams (some shaped like MRC 1.0 WRITEs to QP 0x10): no
/// panic, each counted.
#[test]
fn random_datagrams_are_counted_not_fatal() {
    use rand::{Rng, SeedableRng};
    let mut b = Nic::new(92, 2, 1, false);
    let s = UdpSocket::bind((ip(92, 1), 0)).unwrap();
    let to: SocketAddr = (ip(92, 2), 4791).into();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let n = 4000u32;
    for i in 0..n {
        let len = rng.gen_range(0..200usize);
        let mut d: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if len >= 12 && i % 2 == 0 {
            d[0] = [0xC6u8, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB, 0xD1, 0xDC, 0xDD, 0xDE, 0xD8][rng.gen_range(0..11)];
            d[5..8].copy_from_slice(&[0, 0, 0x10]);
        }
        s.send_to(&d, to).unwrap();
        // Read as fast as they come: the socket buffer must not overflow.
        b.step();
    }
    let start = std::time::Instant::now();
    while b.e.stats().rx_datagrams < u64::from(n) && start.elapsed() < std::time::Duration::from_secs(10) {
        b.step();
    }
    let st = b.e.stats();
    assert_eq!(st.rx_datagrams, u64::from(n), "{st:?}");
    assert_eq!(
        st.rx_dropped + st.rx_unknown_qp,
        u64::from(n),
        "every one refused and counted: {st:?}"
    );
    assert_eq!(st.placed_bytes, 0);
}

/// Forged WRITEs from 300 source ports: the acknowledgements go back on
/// those EVs, but from the NIC's own socket: a stranger's ports open no
/// sockets.
#[test]
fn a_strangers_source_ports_open_no_sockets() {
    use proto::wire::mrc10::{catalog, choices::Profile, frame::emit_frame, Headers, Opcode};
    use proto::wire::{Encap, IpPair};
    let fds = || std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
    let mut b = Nic::new(97, 2, 1, true);
    let before = fds();
    let to: SocketAddr = (ip(97, 2), 4791).into();
    for port in 30000..30300u16 {
        let mut p = catalog::write(Opcode::WriteOnly, 100, 64, false);
        p.bth.dest_qp = 0x10;
        p.ev = u32::from(port);
        if let Headers::Write(w) = &mut p.headers {
            w.reth.rkey = 0xBAD;
            w.reth.va = 0x1000;
            w.reth.dma_len = 64;
        }
        let encap = Encap {
            src_mac: [2, 0, 0, 0, 0, 9],
            dst_mac: [2, 0, 0, 0, 0, 2],
            ip: IpPair::V4 {
                src: ip(97, 9).octets(),
                dst: ip(97, 2).octets(),
            },
        };
        let mut out = Vec::new();
        emit_frame(&p, &encap, &Profile::DEFAULT, &mut out);
        let s = UdpSocket::bind((ip(97, 9), port)).unwrap();
        s.send_to(&out[14 + 20 + 8..], to).unwrap();
        b.step();
    }
    for _ in 0..100 {
        b.step();
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
    let st = b.e.stats();
    assert!(st.rx_datagrams >= 300, "{st:?}");
    assert!(
        fds() < before + 10,
        "{} sockets opened for a stranger's ports",
        fds() - before
    );
}
