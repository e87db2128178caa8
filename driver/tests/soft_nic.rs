//! Two soft NICs (`driver::soft`) in one process, on two loopback
//! addresses, through the driver's verbs API: the same bring-up as a card,
//! MRC 1.0 packets over real UDP sockets, data placed byte-identically in
//! the receiver's buffer, completions in order and exactly once, with and
//! without loss on the socket path.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use contract::layout::CqStatus;
use driver::soft::{SoftNic, SoftNicConfig};
use driver::*;

/// Give up on a completion after this long: a hang guard, not a speed
/// check (a lossless loopback run takes milliseconds).
const HANG_GUARD: Duration = Duration::from_secs(60);

fn ip(host: u8, test: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, test, host))
}

/// The tests of this file run their soft NICs side by side; the one that
/// counts socket-buffer drops runs alone. Its window assumes the peer's
/// thread drains its socket, and a dozen other NICs starving two cores
/// make any window overflow it (seen in CI: 10 drops, the test alone
/// passes every time).
static NIC_TESTS: RwLock<()> = RwLock::new(());

fn beside_others() -> RwLockReadGuard<'static, ()> {
    NIC_TESTS.read().unwrap_or_else(|e| e.into_inner())
}

fn alone() -> RwLockWriteGuard<'static, ()> {
    NIC_TESTS.write().unwrap_or_else(|e| e.into_inner())
}

struct Side {
    nic: Arc<SoftNic>,
    ctx: Context,
    pd: ProtectionDomain,
    cq: CompletionQueue,
    qp: QueuePair,
}

fn side(test: u8, host: u8, tx_loss: f64) -> Side {
    side_gso(test, host, tx_loss, SoftNicConfig::default().gso)
}

fn side_gso(test: u8, host: u8, tx_loss: f64, gso: bool) -> Side {
    side_cfg(
        test,
        host,
        SoftNicConfig {
            tx_loss,
            gso,
            ..SoftNicConfig::default()
        },
    )
}

/// A side of test `test` on host `host` with `cfg` (its address and seed
/// set here).
fn side_cfg(test: u8, host: u8, cfg: SoftNicConfig) -> Side {
    let nic = Arc::new(
        SoftNic::new(SoftNicConfig {
            ip: ip(host, test),
            seed: u64::from(test) << 8 | u64::from(host),
            ..cfg
        })
        .expect("bind a loopback address"),
    );
    let ctx = Context::open(nic.clone(), &OpenOptions::default()).expect("discovery finds the card's map");
    ctx.set_local_address(&LocalAddress {
        mac: [2, 0, 0, 0, test, host],
        ip: ip(host, test),
        vlan_tci: None,
        dscp: 26,
        ttl: 64,
        wire_mrc10: false,
    });
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(10).unwrap();
    let qp = pd.create_qp(&mut cq, 8).unwrap();
    Side { nic, ctx, pd, cq, qp }
}

fn rts(sq_psn: u32, ev_base: u16) -> RtsAttr {
    RtsAttr {
        sq_psn,
        send_mpr_units: 8,
        max_wimm: 64,
        timeouts: Timeouts {
            // 1.024 us x 2^14 = 17 ms: far above a loopback RTT, also in an
            // unoptimised build on a loaded machine (the golden model's
            // ICRC alone takes about 0.1 ms per 4 KiB packet there).
            ack_timeout_exp: 14,
            ..Timeouts::default()
        },
        evs: EvProfile {
            values: (0..8).map(|i| u32::from(ev_base + i)).collect(),
            min_active: 1,
        },
        cc: CcProfile::default(),
    }
}

/// A (host 1) and B (host 2) of test `test`, connected, both in RTS.
fn pair(test: u8, tx_loss: f64) -> (Side, Side) {
    pair_with(test, tx_loss, rts)
}

/// [`pair`] with the send attributes of `rts_of(sq_psn, ev_base)`.
fn pair_with(test: u8, tx_loss: f64, rts_of: impl Fn(u32, u16) -> RtsAttr) -> (Side, Side) {
    pair_gso(test, tx_loss, rts_of, SoftNicConfig::default().gso)
}

/// [`pair_with`], A sending with segmentation offload if `gso`.
fn pair_gso(test: u8, tx_loss: f64, rts_of: impl Fn(u32, u16) -> RtsAttr, gso: bool) -> (Side, Side) {
    let a = side_gso(test, 1, tx_loss, gso);
    let b = side(test, 2, tx_loss);
    connect(test, a, b, rts_of)
}

/// A and B of test `test` (hosts 1 and 2), connected, both in RTS.
fn connect(test: u8, mut a: Side, mut b: Side, rts_of: impl Fn(u32, u16) -> RtsAttr) -> (Side, Side) {
    let (qa, qb) = (a.qp.wire_qpn(), b.qp.wire_qpn());
    let psn_a = 0xFF_FF00; // A's PSNs cross the 24-bit wrap
    let psn_b = 0x40;
    for (s, dest, rq_psn, peer_host) in [(&mut a, qb, psn_b, 2), (&mut b, qa, psn_a, 1)] {
        s.qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
        s.qp.modify(QpTransition::Rtr(RtrAttr {
            dest_qp: dest,
            rq_psn,
            peer: PeerAddress {
                mac: [2, 0, 0, 0, test, peer_host],
                ip: ip(peer_host, test),
            },
            log2_mtu: 12,
            max_wimm: 64,
        }))
        .unwrap();
    }
    // EV values are UDP source ports: each side's from a range of its own.
    a.qp.modify(QpTransition::Rts(rts_of(psn_a, 0xC000 + u16::from(test) * 64)))
        .unwrap();
    b.qp.modify(QpTransition::Rts(rts_of(psn_b, 0xD000 + u16::from(test) * 64)))
        .unwrap();
    (a, b)
}

fn poll(cq: &mut CompletionQueue, what: &str) -> WorkCompletion {
    let start = Instant::now();
    loop {
        if let Some(wc) = cq.poll_cq().expect("every CQE the soft NIC writes is valid") {
            return wc;
        }
        assert!(start.elapsed() < HANG_GUARD, "no completion for {what}");
        std::thread::yield_now();
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// `sizes` WRITEs (every third with an immediate) from A into B's buffer,
/// back to back; returns when A has every send completion and B every
/// receive completion, and checks the bytes.
fn transfer(a: &mut Side, b: &mut Side, sizes: &[usize]) {
    let total: usize = sizes.iter().sum();
    let src_buf = a.pd.alloc_buffer(total).unwrap();
    let src = a.pd.register(&src_buf, Access::LocalOnly).unwrap();
    let dst_buf = b.pd.alloc_buffer(total).unwrap();
    let dst = b.pd.register(&dst_buf, Access::RemoteWrite).unwrap();
    let want = pattern(total, sizes.len() as u8);
    src_buf.write(0, &want).unwrap();
    let imms: Vec<usize> = (0..sizes.len()).filter(|i| i % 3 == 2).collect();
    for &i in &imms {
        b.qp.post_recv(1000 + i as u64).unwrap();
    }
    let mut off = 0usize;
    let mut next_done = 0usize;
    for (i, &len) in sizes.iter().enumerate() {
        let wr = WriteWr {
            wr_id: i as u64,
            local: &src,
            local_offset: off as u64,
            len: len as u32,
            remote_va: dst.remote_va() + off as u64,
            rkey: dst.rkey().unwrap(),
            signaled: true,
            imm: (i % 3 == 2).then_some(0xABC0_0000 | i as u32),
        };
        // Keep the send queue from overflowing: reap as we go.
        while a.qp.outstanding() >= a.qp.sq_slots() {
            let wc = poll(&mut a.cq, "a send");
            assert_eq!((wc.wr_id, wc.status), (next_done as u64, CqStatus::Success), "in order");
            next_done += 1;
        }
        a.qp.post_write(&wr).unwrap();
        off += len;
    }
    while next_done < sizes.len() {
        let wc = poll(&mut a.cq, "a send");
        assert_eq!((wc.wr_id, wc.status), (next_done as u64, CqStatus::Success), "in order");
        assert_eq!(wc.byte_len as usize, sizes[next_done]);
        next_done += 1;
    }
    for &i in &imms {
        let wc = poll(&mut b.cq, "b receive");
        assert_eq!(wc.opcode, WcOpcode::RecvWriteImm);
        assert_eq!(
            (wc.wr_id, wc.imm),
            (1000 + i as u64, Some(0xABC0_0000 | i as u32)),
            "in order"
        );
        assert_eq!(wc.byte_len as usize, sizes[i]);
    }
    let mut got = vec![0u8; total];
    dst_buf.read(0, &mut got).unwrap();
    assert!(got == want, "B's buffer holds exactly what A wrote");
    assert!(b.cq.poll_cq().unwrap().is_none(), "no completion twice");
}

#[test]
fn writes_between_two_soft_nics_over_udp() {
    let _nics = beside_others();
    let (mut a, mut b) = pair(1, 0.0);
    let sizes = [1, 64, 4096, 4097, 65536, 3, 1 << 20, 100, 8191, 12_288, 0, 777];
    transfer(&mut a, &mut b, &sizes);
    let (sa, sb) = (a.nic.stats(), b.nic.stats());
    assert!(sa.tx_datagrams > 256, "1 MiB at 4 KiB MTU: {sa:?}");
    // Every full-size packet's payload left from A's buffer, not copied
    // into its frame first (B's buffer, checked above, holds it intact).
    assert!(sa.tx_payloads_gathered >= 256, "{sa:?}");
    assert_eq!((sa.rx_dropped, sb.rx_dropped), (0, 0), "{sa:?} {sb:?}");
    assert_eq!(sb.rx_unknown_qp, 0);
    assert_eq!(
        sb.placed_bytes,
        sizes.iter().sum::<usize>() as u64,
        "each byte placed once"
    );
    assert_eq!(sa.ev_port_unavailable, 0, "every EV leaves from its own port");
    // 1 MiB sprays over all 8 EVs: each has its socket, bound to its port.
    assert_eq!(sa.ev_sockets, 8, "{sa:?}");
}

#[test]
fn every_write_completes_exactly_once_with_one_percent_loss() {
    let _nics = beside_others();
    let (mut a, mut b) = pair(2, 0.01);
    let sizes: Vec<usize> = (0..48)
        .map(|i| if i % 4 == 0 { 65536 } else { 1000 + 37 * i })
        .collect();
    transfer(&mut a, &mut b, &sizes);
    let (sa, sb) = (a.nic.stats(), b.nic.stats());
    assert!(sa.tx_lost + sb.tx_lost > 0, "the knob dropped something: {sa:?} {sb:?}");
}

/// Large WRITEs with the window libmrc and `mrc rdma` configure (4 MiB,
/// 2,048 PSNs): the soft NIC keeps no more in flight than the peer's
/// socket buffer holds, so no datagram is lost and no RTO fires. Before,
/// the sender put the whole window into the socket at once: the kernel
/// dropped all but the first few dozen datagrams of each burst and timeouts
/// resent the rest into the same full buffer (a 1 MiB WRITE rate of a
/// tenth of a 256 KiB one). Counted, not timed: the kernel's drop counter
/// of each NIC's socket and the models' RTO counters.
#[test]
fn two_mib_writes_lose_nothing_to_the_socket_buffer_and_never_time_out() {
    let _alone = alone();
    fn rts_4mib(sq_psn: u32, ev_base: u16) -> RtsAttr {
        RtsAttr {
            send_mpr_units: 16,
            cc: CcProfile {
                min_cwnd: 4096,
                max_cwnd: 4 << 20,
                nscc: None,
            },
            ..rts(sq_psn, ev_base)
        }
    }
    let (mut a, mut b) = pair_with(14, 0.0, rts_4mib);
    transfer(&mut a, &mut b, &[2 << 20, 2 << 20, 2 << 20]);
    let (sa, sb) = (a.nic.stats(), b.nic.stats());
    let ca = a.nic.qp_counters(a.qp.qpn()).expect("A's QP is enabled");
    assert_eq!(
        (sa.rx_overflows, sb.rx_overflows),
        (0, 0),
        "datagrams dropped by a full socket buffer (A's QP resent {} packets, {} RTOs): {sa:?} {sb:?}",
        ca.retransmitted_packets,
        ca.rto_fired
    );
    assert_eq!((ca.rto_fired, ca.retx_timeout), (0, 0), "{ca:?}");
    assert_eq!(sb.placed_bytes, 6 << 20, "each byte placed once");
}

/// The receiving NIC's thread spins after its last work
/// (`SoftNicConfig::spin`) instead of sleeping in `ppoll`: within a stream
/// of WRITEs it never sleeps, so no datagram pays its wake-up. With a spin
/// far longer than any gap of the stream (2 s), a sleep could only come
/// from a pause of the sender that long; without the spin the thread
/// sleeps whenever its socket is empty (hundreds of times here).
#[test]
fn a_spinning_nic_thread_does_not_sleep_within_a_stream() {
    let _nics = beside_others();
    let spin = Duration::from_secs(2);
    let cfg = |spin| SoftNicConfig {
        spin,
        ..SoftNicConfig::default()
    };
    let (a, b) = (side_cfg(31, 1, cfg(Duration::ZERO)), side_cfg(31, 2, cfg(spin)));
    let (mut a, mut b) = connect(31, a, b, rts);
    // The first datagram finds B's thread asleep (it had no work yet).
    transfer(&mut a, &mut b, &[4096; 4]);
    let before = b.nic.stats().thread_sleeps;
    let start = Instant::now();
    transfer(&mut a, &mut b, &[65536; 96]);
    let slept = b.nic.stats().thread_sleeps - before;
    if start.elapsed() < spin {
        assert_eq!(slept, 0, "B's thread slept within the stream");
    }
}

/// A peer's endpoint (QPN 0x2) probes one of our EVs and sends a Port
/// Status Update: the soft NIC answers both, on the EV of the request, to
/// the RoCEv2 port of the requester.
#[test]
fn the_endpoint_answers_ev_probes_and_port_status_updates() {
    let _nics = beside_others();
    use driver::soft::datagram::{from_datagram, ip_pair, to_datagram, Arrival};
    use driver::soft::udp::UdpPort;
    use proto::model::endpoint::{Endpoint, EndpointConfig, EndpointResult};
    use proto::wire::mrc10::choices::Profile;
    use proto::wire::mrc10::{frame, EvFormat};
    use proto::wire::Encap;
    use std::net::SocketAddr;

    let nic = SoftNic::new(SoftNicConfig {
        ip: ip(2, 9),
        ..SoftNicConfig::default()
    })
    .unwrap();
    let me = UdpPort::bind(SocketAddr::new(ip(1, 9), 4791)).unwrap();
    let to = nic.local_addr().unwrap();
    let profile = Profile::DEFAULT;
    // A generous timeout: the test polls its socket every millisecond.
    let mut ep = Endpoint::new(EndpointConfig {
        timeout: proto::time::Duration::from_ms(5000),
        ..EndpointConfig::default()
    });
    let epoch = Instant::now();
    let now = || proto::time::Instant::from_ns(epoch.elapsed().as_nanos() as u64);
    let probe = ep.probe_ev(now(), 4791, 0, EvFormat::SourcePort16).unwrap();
    let status = ep.port_status_update(now(), 4791).unwrap();
    let encap = Encap {
        src_mac: [0; 6],
        dst_mac: [0; 6],
        ip: ip_pair(ip(1, 9), ip(2, 9)).unwrap(),
    };
    let mut buf = Vec::new();
    while let Some(p) = ep.poll_transmit(now()) {
        let out = to_datagram(&p, &encap, &profile, Some(4791), &mut buf);
        me.send(&buf[out.payload_at..], to, out.tos).unwrap();
    }
    let mut results = Vec::new();
    let mut rx = vec![0u8; 9216];
    let start = Instant::now();
    while results.len() < 2 {
        assert!(start.elapsed() < HANG_GUARD, "no answer: {:?}", nic.stats());
        let Some(r) = me.recv(&mut rx).unwrap() else {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        assert_eq!(r.from, to, "answered from the EV probed (4791)");
        let mut f = Vec::new();
        let at = Arrival {
            ip: ip(1, 9),
            mac: [0; 6],
        };
        from_datagram(&rx[..r.len], r.from, at, r.tos, &mut f).unwrap();
        let (pkt, _) = frame::parse_frame(&f, &profile).expect("a valid MRC 1.0 frame, ICRC included");
        ep.handle_packet(now(), &pkt).unwrap();
        results.extend(std::iter::from_fn(|| ep.poll_result()));
    }
    assert!(
        results
            .iter()
            .any(|r| matches!(r, EndpointResult::EvProbe { request_id, ev: 4791, .. } if *request_id == probe)),
        "{results:?}"
    );
    assert!(
        results
            .iter()
            .any(|r| matches!(r, EndpointResult::PortStatus { request_id, peer_ports_up: 1 } if *request_id == status)),
        "{results:?}"
    );
    assert_eq!(nic.stats().endpoint_requests, 2);
}

/// One buffer registered twice (verbs allow it): both rkeys work, and QPs
/// are still built.
#[test]
fn one_buffer_registered_twice_takes_writes_under_both_keys() {
    let _nics = beside_others();
    let (mut a, mut b) = {
        // The second registration comes before the QPs reach RTS.
        let a = side(10, 1, 0.0);
        let b = side(10, 2, 0.0);
        (a, b)
    };
    let dst_buf = b.pd.alloc_buffer(8192).unwrap();
    let k1 = b.pd.register(&dst_buf, Access::RemoteWrite).unwrap();
    let k2 = b.pd.register(&dst_buf, Access::RemoteWrite).unwrap();
    let (qa, qb) = (a.qp.wire_qpn(), b.qp.wire_qpn());
    for (s, dest, peer_host) in [(&mut a, qb, 2u8), (&mut b, qa, 1u8)] {
        s.qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
        s.qp.modify(QpTransition::Rtr(RtrAttr {
            dest_qp: dest,
            rq_psn: 0,
            peer: PeerAddress {
                mac: [2, 0, 0, 0, 10, peer_host],
                ip: ip(peer_host, 10),
            },
            log2_mtu: 12,
            max_wimm: 4,
        }))
        .unwrap();
        s.qp.modify(QpTransition::Rts(rts(0, 0xC800 + u16::from(peer_host) * 16)))
            .unwrap();
    }
    let src_buf = a.pd.alloc_buffer(8192).unwrap();
    src_buf.write(0, &pattern(8192, 9)).unwrap();
    let src = a.pd.register(&src_buf, Access::LocalOnly).unwrap();
    for (i, k) in [&k1, &k2].iter().enumerate() {
        let off = 4096 * i as u64;
        a.qp.post_write(&WriteWr {
            wr_id: i as u64,
            local: &src,
            local_offset: off,
            len: 4096,
            remote_va: k.remote_va() + off,
            rkey: k.rkey().unwrap(),
            signaled: true,
            imm: None,
        })
        .unwrap();
        let wc = poll(&mut a.cq, "a WRITE under each key");
        assert_eq!((wc.wr_id, wc.status), (i as u64, CqStatus::Success));
    }
    let mut got = vec![0u8; 8192];
    dst_buf.read(0, &mut got).unwrap();
    assert!(got == pattern(8192, 9));
}

/// An unspecified address is no NIC's address (it is in every ICRC and in
/// what peers are told): refused when the NIC is made.
#[test]
fn an_unspecified_address_is_refused() {
    let _nics = beside_others();
    for bad in ["0.0.0.0", "::", "224.0.0.1"] {
        let e = SoftNic::new(SoftNicConfig {
            ip: bad.parse().unwrap(),
            ..SoftNicConfig::default()
        });
        assert!(
            matches!(&e, Err(e) if e.kind() == std::io::ErrorKind::InvalidInput),
            "{bad}"
        );
    }
}

/// A QP reset while a WRITE is in flight and brought up again at once:
/// completions the NIC wrote for its previous life are stale (counted),
/// not errors, and the new life's WRITEs complete in order.
#[test]
fn a_qp_reset_mid_transfer_comes_back_clean() {
    let _nics = beside_others();
    let (mut a, mut b) = pair(11, 0.0);
    let dst_buf = b.pd.alloc_buffer(1 << 20).unwrap();
    let dst = b.pd.register(&dst_buf, Access::RemoteWrite).unwrap();
    let src_buf = a.pd.alloc_buffer(1 << 20).unwrap();
    let src = a.pd.register(&src_buf, Access::LocalOnly).unwrap();
    let write = |wr_id: u64, len: u32| WriteWr {
        wr_id,
        local: &src,
        local_offset: 0,
        len,
        remote_va: dst.remote_va(),
        rkey: dst.rkey().unwrap(),
        signaled: true,
        imm: None,
    };
    for round in 0..3u64 {
        a.qp.post_write(&write(round, 1 << 20)).unwrap();
        std::thread::sleep(Duration::from_micros(200 * round));
        a.qp.modify(QpTransition::Reset).unwrap();
        b.qp.modify(QpTransition::Reset).unwrap();
        let (qa, qb) = (a.qp.wire_qpn(), b.qp.wire_qpn());
        for (s, dest, rq_psn, sq_psn, peer_host) in [(&mut a, qb, 0x20, 0x10, 2u8), (&mut b, qa, 0x10, 0x20, 1u8)] {
            s.qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
            s.qp.modify(QpTransition::Rtr(RtrAttr {
                dest_qp: dest,
                rq_psn,
                peer: PeerAddress {
                    mac: [2, 0, 0, 0, 11, peer_host],
                    ip: ip(peer_host, 11),
                },
                log2_mtu: 12,
                max_wimm: 4,
            }))
            .unwrap();
            s.qp.modify(QpTransition::Rts(rts(sq_psn, 0xCA00 + u16::from(peer_host) * 16)))
                .unwrap();
        }
        for i in 0..4u64 {
            let id = 100 * (round + 1) + i;
            a.qp.post_write(&write(id, 4096 * (i as u32 + 1))).unwrap();
            let wc = poll(&mut a.cq, "a WRITE after the reset");
            assert_eq!((wc.wr_id, wc.status), (id, CqStatus::Success), "round {round}");
        }
    }
}

/// The EV control plane on a soft NIC: a deny and an allow through the
/// driver's controller reach the model's EV set and come back as EV
/// events carrying the EV's value; WRITEs go on over the other EVs.
#[test]
fn ev_denials_come_back_as_events_with_the_ev_value() {
    let _nics = beside_others();
    use contract::layout::{EvNewState, EvReason};
    let (mut a, mut b) = pair(12, 0.0);
    let mut ctl = a.ctx.controller(8).unwrap();
    let ev0 = 0xC000 + 12 * 64;
    ctl.deny(&a.qp, 0xFFFF, ev0);
    // The next event of `ev0` (a loaded machine may also time an EV out).
    let next = |ctl: &mut Controller| {
        let start = Instant::now();
        loop {
            if let Some(e) = ctl.poll_event().unwrap() {
                if e.ev == ev0 && e.reason == EvReason::Control {
                    return e;
                }
                continue;
            }
            assert!(start.elapsed() < HANG_GUARD, "no EV event");
            std::thread::yield_now();
        }
    };
    let e = next(&mut ctl);
    assert_eq!(
        (e.qp, e.ev, e.ev_index, e.new_state, e.reason),
        (a.qp.qpn(), ev0, 0, EvNewState::Denied, EvReason::Control)
    );
    transfer(&mut a, &mut b, &[65536, 100]);
    ctl.allow(&a.qp, 0xFFFF, ev0);
    let e = next(&mut ctl);
    assert_eq!(
        (e.ev, e.new_state, e.reason),
        (ev0, EvNewState::Good, EvReason::Control)
    );
}

/// The program's own memory, registered as `ibv_reg_mr` registers it: the
/// peer writes to the address the program sees, and the bytes land in the
/// program's `Vec`. The same memory registered twice works under both
/// keys.
#[test]
fn writes_land_in_the_programs_own_memory() {
    let _nics = beside_others();
    let (mut a, b) = pair(13, 0.0);
    let mut mine = vec![0u8; 20_000];
    let ptr = std::ptr::NonNull::new(mine.as_mut_ptr()).unwrap();
    // SAFETY: `mine` outlives both regions (dropped at the end of the test,
    // after them) and is not touched while the NIC may write it.
    let (k1, k2) = unsafe {
        (
            b.pd.register_host(ptr, mine.len(), Access::RemoteWrite).unwrap(),
            b.pd.register_host(ptr, 10_000, Access::RemoteWrite).unwrap(),
        )
    };
    assert_eq!(
        k1.remote_va(),
        ptr.as_ptr() as u64,
        "the soft NIC's IOVA is the host address"
    );
    let src_buf = a.pd.alloc_buffer(20_000).unwrap();
    src_buf.write(0, &pattern(20_000, 13)).unwrap();
    let src = a.pd.register(&src_buf, Access::LocalOnly).unwrap();
    for (i, (k, off, len)) in [(&k2, 0u64, 10_000u32), (&k1, 10_000, 10_000)].into_iter().enumerate() {
        a.qp.post_write(&WriteWr {
            wr_id: i as u64,
            local: &src,
            local_offset: off,
            len,
            remote_va: ptr.as_ptr() as u64 + off,
            rkey: k.rkey().unwrap(),
            signaled: true,
            imm: None,
        })
        .unwrap();
        let wc = poll(&mut a.cq, "a WRITE into program memory");
        assert_eq!((wc.wr_id, wc.status), (i as u64, CqStatus::Success));
    }
    drop((k1, k2));
    assert!(mine == pattern(20_000, 13), "the program's Vec holds what A wrote");
}

/// What `path_window` assumes of the kernel, checked on this one: a soft
/// NIC's socket holds, unread, twice a QP's window of full-size datagrams
/// at every MTU (so a window sent in one burst fits with room to spare),
/// and the drop counter behind `SoftStats::rx_overflows` counts what does
/// not fit.
#[test]
fn a_soft_nics_socket_holds_twice_the_window_it_grants() {
    let _nics = beside_others();
    use driver::soft::engine::path_window;
    use driver::soft::udp::UdpPort;
    use driver::soft::RX_BUFFER;
    for (k, mtu) in [256u32, 1024, 4096, 8192].into_iter().enumerate() {
        let rx = UdpPort::bind(std::net::SocketAddr::new(ip(1, 15), 4791 + k as u16)).unwrap();
        let granted = rx.set_receive_buffer(RX_BUFFER).unwrap();
        let tx = UdpPort::bind(std::net::SocketAddr::new(ip(2, 15), 0)).unwrap();
        let to = rx.local_addr().unwrap();
        let datagram = vec![0u8; mtu as usize + proto::wire::mrc10::MAX_DATA_OVERHEAD];
        let fits = 2 * path_window(granted, mtu) / u64::from(mtu);
        for _ in 0..fits {
            tx.send(&datagram, to, 0).unwrap();
        }
        assert_eq!(
            rx.receive_drops(),
            Some(0),
            "MTU {mtu}: {fits} datagrams in {granted} bytes"
        );
        // Far more than fits: the kernel drops, and the counter says so.
        for _ in 0..(granted / mtu as usize + 16) {
            tx.send(&datagram, to, 0).unwrap();
        }
        assert!(rx.receive_drops().unwrap() > 0, "MTU {mtu}: the overflow is counted");
        let mut buf = vec![0u8; datagram.len() + 64];
        let mut got = 0u64;
        while rx.recv(&mut buf).unwrap().is_some() {
            got += 1;
        }
        assert!(got >= fits, "MTU {mtu}: {got} datagrams queued, {fits} expected to fit");
    }
}

/// A sends with UDP segmentation offload (runs of equal-size datagrams
/// as one send), B reads with UDP_GRO where the kernel has it: every
/// WRITE lands once, every datagram is counted as one, with 1% loss too.
#[test]
fn writes_with_segmentation_offload_land_once() {
    let _nics = beside_others();
    let (mut a, mut b) = pair_gso(16, 0.01, rts, true);
    let sizes = [1, 64, 4096, 65536, 3, 1 << 20, 100, 8191, 0, 65536];
    transfer(&mut a, &mut b, &sizes);
    let (sa, sb) = (a.nic.stats(), b.nic.stats());
    assert_eq!(sa.gso_refused, 0, "loopback takes UDP_SEGMENT: {sa:?}");
    assert_eq!((sa.rx_dropped, sb.rx_dropped), (0, 0), "{sa:?} {sb:?}");
    assert!(
        sb.rx_datagrams + sa.tx_lost + sa.tx_busy >= 256,
        "1 MiB at 4 KiB MTU: {sb:?}"
    );
}

/// A run sent with segmentation offload reaches a socket without UDP_GRO
/// as separate datagrams of the run's sizes, and one with UDP_GRO as one
/// buffer with the segment size, split back into the same datagrams.
#[test]
fn a_segmented_run_arrives_as_its_datagrams() {
    let _nics = beside_others();
    use driver::soft::udp::{RecvBatch, SendBatch, SendOutcome, UdpPort};
    let tx = UdpPort::bind(std::net::SocketAddr::new(ip(1, 17), 0)).unwrap();
    tx.enable_gso(true);
    let plain = UdpPort::bind(std::net::SocketAddr::new(ip(2, 17), 0)).unwrap();
    let mut gro = UdpPort::bind(std::net::SocketAddr::new(ip(3, 17), 0)).unwrap();
    let has_gro = gro.enable_gro();
    let lens = [1000, 1000, 1000, 400];
    for to in [plain.local_addr().unwrap(), gro.local_addr().unwrap()] {
        let mut batch = SendBatch::default();
        for (i, &len) in lens.iter().enumerate() {
            let o = batch.push();
            o.frame.resize(len + 2, i as u8);
            o.payload_at = 2;
            o.to = to;
            o.tos = 0;
            o.src_port = 0;
        }
        let runs = batch.runs();
        assert_eq!(runs.len(), 1);
        let mut out = SendOutcome::default();
        tx.send_batch(&mut batch, runs[0].1, runs[0].2, &mut out);
        assert_eq!(out.sent, 4, "{out:?}");
        assert_eq!(out.gso_refused, 0, "{out:?}");
    }
    let mut got = Vec::new();
    let mut buf = vec![0u8; 9216];
    let start = Instant::now();
    while got.len() < 4 {
        assert!(start.elapsed() < HANG_GUARD);
        if let Some(r) = plain.recv(&mut buf).unwrap() {
            got.push(buf[..r.len].to_vec());
        }
    }
    let want: Vec<Vec<u8>> = lens.iter().enumerate().map(|(i, &l)| vec![i as u8; l]).collect();
    assert_eq!(got, want, "a socket without UDP_GRO reads each datagram");
    let mut rb = RecvBatch::new(4, 65536);
    let mut split = Vec::new();
    let start = Instant::now();
    while split.len() < 4 {
        assert!(start.elapsed() < HANG_GUARD);
        gro.recv_batch(&mut rb).unwrap();
        for (i, r) in rb.got.iter().enumerate() {
            let d = rb.datagram(i);
            if r.segment == 0 {
                split.push(d.to_vec());
            } else {
                assert!(has_gro);
                split.extend(d.chunks(r.segment).map(|c| c.to_vec()));
            }
        }
    }
    assert_eq!(
        split, want,
        "a socket with UDP_GRO reads the run, split into the same datagrams"
    );
}

/// Taking a soft NIC's port down with WRITEs in flight (docs/host.md,
/// "Ports"): A tells B (a Port Status Update with mask 0) before its port
/// stops, B records it and denies the EVs of its QP to A, A denies its
/// own EVs; while the port is down (a second: until A's update gives up on
/// the answer the port dropped) A's QP is held (it sends nothing and no
/// retransmission timeout fires), nothing reaches B's memory and nothing
/// completes; after the port is up every WRITE completes exactly once, in
/// order, and B's buffer holds exactly what A wrote.
#[test]
fn a_port_down_holds_the_writes_and_after_up_each_completes_once() {
    let _nics = beside_others();
    use contract::layout::{EvNewState, EvReason};
    let (mut a, b) = pair(18, 0.0);
    let (ip_a, ip_b) = (ip(1, 18), ip(2, 18));
    let mut ctl_a = a.ctx.controller(8).unwrap();
    let mut ctl_b = b.ctx.controller(8).unwrap();
    let wait = |what: &str, mut done: Box<dyn FnMut() -> bool + '_>| {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < HANG_GUARD, "never: {what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    // The EV events with reason Control of `qp` and state `to` (a loaded
    // machine may also time an EV out: those are left aside).
    let control_events = |ctl: &mut Controller, qp: u32, to: EvNewState, want: usize| {
        let mut evs = Vec::new();
        let start = Instant::now();
        while evs.len() < want {
            match ctl.poll_event().unwrap() {
                Some(e) if e.qp == qp && e.reason == EvReason::Control && e.new_state == to => evs.push(e.ev),
                Some(_) => {}
                None => {
                    assert!(start.elapsed() < HANG_GUARD, "{} of {want} {to:?} events", evs.len());
                    std::thread::yield_now();
                }
            }
        }
        evs.sort_unstable();
        evs
    };

    let n = a.qp.sq_slots() as usize;
    let len = 1usize << 20;
    let total = n * len;
    let src_buf = a.pd.alloc_buffer(total).unwrap();
    let src = a.pd.register(&src_buf, Access::LocalOnly).unwrap();
    let dst_buf = b.pd.alloc_buffer(total).unwrap();
    let dst = b.pd.register(&dst_buf, Access::RemoteWrite).unwrap();
    let want = pattern(total, 18);
    src_buf.write(0, &want).unwrap();
    for i in 0..n {
        a.qp.post_write(&WriteWr {
            wr_id: i as u64,
            local: &src,
            local_offset: (i * len) as u64,
            len: len as u32,
            remote_va: dst.remote_va() + (i * len) as u64,
            rkey: dst.rkey().unwrap(),
            signaled: true,
            imm: None,
        })
        .unwrap();
    }
    // The doorbells' datagrams leave at the program's next poll: poll once,
    // so they leave before the port goes down (and B reads them before
    // A's "down" update, which follows them).
    let mut done = Vec::new();
    if let Some(wc) = a.cq.poll_cq().unwrap() {
        done.push((wc.wr_id, wc.status));
    }
    a.ctx
        .device()
        .set_port_up(0, false)
        .expect("a soft NIC takes its port down");
    assert_eq!(a.ctx.device().port_up(0), Some(false));
    assert_eq!(a.ctx.device().port_up(1), None, "one port");
    assert!(a.ctx.device().set_port_up(1, false).is_err(), "no port 1");

    // B got the update: A's port mask is 0, and B's QP to A denies its EVs.
    wait(
        "B learns A's port is down",
        Box::new(|| b.nic.peer_ports_up(ip_a) == Some(0)),
    );
    let evs_b: Vec<u32> = (0..8).map(|i| 0xD000 + 18 * 64 + i).collect();
    let evs_a: Vec<u32> = (0..8).map(|i| 0xC000 + 18 * 64 + i).collect();
    assert_eq!(control_events(&mut ctl_b, b.qp.qpn(), EvNewState::Denied, 8), evs_b);
    assert_eq!(control_events(&mut ctl_a, a.qp.qpn(), EvNewState::Denied, 8), evs_a);

    // What completed before the port went down (B had read everything A
    // sent before the update: it read the update after it).
    while let Some(wc) = a.cq.poll_cq().unwrap() {
        done.push((wc.wr_id, wc.status));
    }
    assert!(
        done.len() < n,
        "WRITEs were in flight when the port went down: {done:?}"
    );
    let down = a.nic.stats();
    let rtos = a.nic.qp_counters(a.qp.qpn()).unwrap().rto_fired;
    // A's thread may have flushed datagrams after its "down" update went
    // out and before it saw the port down (a loaded run placed 6 more
    // packets at B after B had the update): B's memory is measured once B
    // has received every datagram A sent by now (B hears from A alone).
    wait(
        "B receives what A sent before its port went down",
        Box::new(|| b.nic.stats().rx_datagrams >= down.tx_datagrams),
    );
    let placed = b.nic.stats().placed_bytes;
    // The port stays down until A's "down" update gives up on its answer
    // (B answered it, to a port that was down: dropped), a second later.
    wait(
        "A's down update times out",
        Box::new(|| {
            assert!(
                a.cq.poll_cq().unwrap().is_none(),
                "nothing completes while the port is down"
            );
            a.nic.stats().port_updates_timed_out == 1
        }),
    );
    let held = a.nic.stats();
    assert!(held.rx_port_down >= 1, "B's answer was dropped at the port: {held:?}");
    assert_eq!(
        held.tx_datagrams, down.tx_datagrams,
        "nothing sent while down: {held:?}"
    );
    assert_eq!(
        b.nic.stats().placed_bytes,
        placed,
        "nothing reaches B while A's port is down"
    );
    assert_eq!(
        a.nic.qp_counters(a.qp.qpn()).unwrap().rto_fired,
        rtos,
        "A's QP is held: no retransmission timeout spent while its port is down"
    );

    a.ctx.device().set_port_up(0, true).expect("and up again");
    assert_eq!(a.ctx.device().port_up(0), Some(true));
    wait(
        "B learns A's port is up",
        Box::new(|| b.nic.peer_ports_up(ip_a) == Some(1)),
    );
    assert_eq!(control_events(&mut ctl_a, a.qp.qpn(), EvNewState::Good, 8), evs_a);
    assert_eq!(control_events(&mut ctl_b, b.qp.qpn(), EvNewState::Good, 8), evs_b);
    while done.len() < n {
        let wc = poll(&mut a.cq, "a WRITE after the port came up");
        done.push((wc.wr_id, wc.status));
    }
    let expect: Vec<(u64, CqStatus)> = (0..n as u64).map(|i| (i, CqStatus::Success)).collect();
    assert_eq!(done, expect, "every WRITE once, in order, none failed");
    let mut got = vec![0u8; total];
    dst_buf.read(0, &mut got).unwrap();
    assert!(got == want, "B's buffer holds exactly what A wrote");
    assert_eq!(b.nic.stats().placed_bytes, total as u64, "each byte placed once");
    // A's "down" update was answered to a port that was down (it times
    // out, ENDPOINT_TIMEOUT); its "up" update is answered, with B's mask.
    wait(
        "A's two updates come to their ends",
        Box::new(|| {
            let s = a.nic.stats();
            s.port_updates_answered + s.port_updates_timed_out == 2
        }),
    );
    assert!(a.cq.poll_cq().unwrap().is_none(), "no completion twice");
    let (sa, sb) = (a.nic.stats(), b.nic.stats());
    assert_eq!((sa.port_downs, sa.port_ups, sa.port_updates_sent), (1, 1, 2), "{sa:?}");
    assert_eq!((sa.port_updates_answered, sa.port_updates_timed_out), (1, 1), "{sa:?}");
    assert!(
        sa.rx_port_down >= 1,
        "B's answer to the down update was dropped: {sa:?}"
    );
    assert_eq!(a.nic.peer_ports_up(ip_b), Some(1), "B's answer carried its ports");
    assert_eq!((sb.peer_port_updates, sb.endpoint_requests), (2, 2), "{sb:?}");
    assert_eq!((sb.tx_port_down, sb.rx_port_down), (0, 0), "B's port stayed up");
}

/// A port down and up lifts only the denials the NIC made: an EV the
/// control plane denied before stays DENIED (the model's `allow_port`
/// would lift it too), and WRITEs still go after the port is up.
#[test]
fn a_port_cycle_keeps_the_control_planes_denials() {
    let _nics = beside_others();
    use contract::layout::{EvEvent, EvNewState, EvReason};
    let (mut a, mut b) = pair(23, 0.0);
    let mut ctl = a.ctx.controller(8).unwrap();
    let ev0 = 0xC000 + 23 * 64;
    // Control events of A's QP until `want` with state `to` came.
    let control = |ctl: &mut Controller, to: EvNewState, want: usize| {
        let mut got: Vec<EvEvent> = Vec::new();
        let start = Instant::now();
        while got.iter().filter(|e| e.new_state == to).count() < want {
            match ctl.poll_event().unwrap() {
                Some(e) if e.reason == EvReason::Control => got.push(e),
                Some(_) => {}
                None => {
                    assert!(start.elapsed() < HANG_GUARD, "{got:?}");
                    std::thread::yield_now();
                }
            }
        }
        got
    };
    ctl.deny(&a.qp, 0xFFFF, ev0);
    let e = control(&mut ctl, EvNewState::Denied, 1);
    assert_eq!((e.len(), e[0].ev), (1, ev0));
    a.ctx.device().set_port_up(0, false).unwrap();
    let e = control(&mut ctl, EvNewState::Denied, 7);
    assert_eq!(e.len(), 7, "only the 7 EVs that were not DENIED: {e:?}");
    assert!(e.iter().all(|e| e.ev != ev0), "{e:?}");
    a.ctx.device().set_port_up(0, true).unwrap();
    let e = control(&mut ctl, EvNewState::Good, 7);
    assert_eq!(e.len(), 7, "{e:?}");
    assert!(e.iter().all(|e| e.ev != ev0), "the control plane's denial stays: {e:?}");
    transfer(&mut a, &mut b, &[65536, 100]);
    ctl.allow(&a.qp, 0xFFFF, ev0);
    let e = control(&mut ctl, EvNewState::Good, 1);
    assert_eq!((e.len(), e[0].ev), (1, ev0));
    let s = a.nic.stats();
    assert_eq!((s.port_downs, s.port_ups, s.port_updates_sent), (1, 1, 2), "{s:?}");
}

/// A 64-byte source region on A and a 64-byte target region on B:
/// `write(i)` is WRITE `i` of the one to the other.
struct SmallWrites {
    src: MemoryRegion,
    dst: MemoryRegion,
}

impl SmallWrites {
    /// A and B of test `test`, and their regions.
    fn pair(test: u8) -> (Side, Side, SmallWrites) {
        let (a, b) = pair(test, 0.0);
        let src = a.pd.register(&a.pd.alloc_buffer(64).unwrap(), Access::LocalOnly);
        let dst = b.pd.register(&b.pd.alloc_buffer(64).unwrap(), Access::RemoteWrite);
        let w = SmallWrites {
            src: src.unwrap(),
            dst: dst.unwrap(),
        };
        (a, b, w)
    }

    fn write(&self, wr_id: u64) -> WriteWr<'_> {
        WriteWr {
            wr_id,
            local: &self.src,
            local_offset: 0,
            len: 64,
            remote_va: self.dst.remote_va(),
            rkey: self.dst.rkey().unwrap(),
            signaled: true,
            imm: None,
        }
    }
}

/// A polling program's doorbell leaves its datagrams to the program's
/// next poll (WRITEs posted one by one between two polls then leave
/// together), and the poll sends them: right after a post nothing has left
/// (checked only when the post and the look took less than
/// `UNSENT_GRACE_NS`, after which the NIC's thread sends on its own).
#[test]
fn a_doorbell_leaves_its_datagrams_to_the_next_poll() {
    let _nics = beside_others();
    let (mut a, _b, w) = SmallWrites::pair(24);
    let grace = Duration::from_nanos(driver::soft::UNSENT_GRACE_NS);
    let mut checked = 0;
    for i in 0..200u64 {
        let before = a.nic.stats().tx_datagrams;
        // The NIC's thread counts the grace from the end of the doorbell:
        // a post and a look within it leave the thread no time to send.
        let t = Instant::now();
        a.qp.post_write(&w.write(i)).unwrap();
        let after_post = a.nic.stats().tx_datagrams;
        if t.elapsed() < grace {
            checked += 1;
            assert_eq!(after_post, before, "round {i}: sent before the next poll");
        }
        let wc = poll(&mut a.cq, "the WRITE");
        assert_eq!((wc.wr_id, wc.status), (i, CqStatus::Success));
        assert!(a.nic.stats().tx_datagrams > before, "round {i}: the poll sent it");
    }
    // A post takes microseconds; of 200, some must fall within the grace,
    // or the test has shown nothing.
    assert!(checked > 0, "no round posted and checked within {grace:?}");
}

/// A WRITE posted by a polling program that then stops polling leaves from
/// the NIC's thread (its packets are made by the thread once the program
/// has left the NIC alone for the grace), and so does one posted after the
/// program said it will wait for an interrupt (`Device::program_waits`,
/// which libmrc calls when a CQ is armed).
#[test]
fn a_post_the_program_does_not_poll_for_leaves_from_the_nics_thread() {
    let _nics = beside_others();
    let (mut a, _b, w) = SmallWrites::pair(25);
    for (i, waits) in [(0u64, false), (1, true), (2, false), (3, true)] {
        // Polling first: the NIC's thread naps meanwhile.
        for _ in 0..1000 {
            assert!(a.cq.poll_cq().unwrap().is_none());
        }
        let before = a.nic.stats().tx_datagrams;
        a.qp.post_write(&w.write(i)).unwrap();
        if waits {
            a.nic.program_waits();
        }
        let start = Instant::now();
        while a.nic.stats().tx_datagrams == before {
            assert!(start.elapsed() < Duration::from_secs(5), "WRITE {i} never left");
            std::thread::sleep(Duration::from_micros(50));
        }
        let wc = poll(&mut a.cq, "the WRITE");
        assert_eq!((wc.wr_id, wc.status), (i, CqStatus::Success));
    }
}

/// A QP given NSCC parameters runs the golden model's NSCC on the soft
/// NIC (its window moves with the feedback), one without runs the fixed
/// window, and the parameters shape it: `max_cwnd` the start (two thirds
/// of the ceiling) and the cap, the target delay and quick adapt whether
/// the loopback's delays grow or shrink it.
#[test]
fn nscc_parameters_drive_the_soft_nics_window() {
    let _nics = beside_others();
    const CEILING: u32 = 128 << 10;
    let with = |max_cwnd: u32, nscc: Option<NsccParams>| {
        move |psn: u32, ev: u16| RtsAttr {
            cc: CcProfile {
                min_cwnd: 4096,
                max_cwnd,
                nscc,
            },
            ..rts(psn, ev)
        }
    };
    let window = |s: &Side| s.nic.qp_window(s.qp.qpn()).expect("an enabled QP");
    let sizes = vec![16 << 10; 64];

    let (mut a, mut b) = pair_with(41, 0.0, with(CEILING, None));
    let (name, fixed) = window(&a);
    assert_eq!(name, "fixed");
    // The ceiling, or less where the path holds less (`path_window`).
    assert!(fixed <= u64::from(CEILING) && fixed >= 64 << 10, "{fixed}");
    transfer(&mut a, &mut b, &sizes);
    assert_eq!(window(&a), ("fixed", fixed), "a fixed window stays");

    // Far below any queueing delay here: every ACK grows the window, to
    // the ceiling.
    let grow = NsccParams {
        base_rtt_ns: 1_000,
        target_delay_ns: 1_000_000_000,
        disable_qa: true,
        ..NsccParams::default()
    };
    let (mut a, mut b) = pair_with(42, 0.0, with(CEILING, Some(grow)));
    assert_eq!(window(&a), ("nscc", fixed * 2 / 3), "NSCC starts below its ceiling");
    // Four times the traffic above: each ACK grows the window by a
    // bounded step, and with 64 messages it stopped short twice in
    // whole suites on a loaded host (83,922 and 126,951 bytes; not
    // reproduced alone, so the margin is the fix, not a known cause).
    for _ in 0..4 {
        transfer(&mut a, &mut b, &sizes);
    }
    assert_eq!(window(&a), ("nscc", fixed), "grown to the ceiling by the ACKs");

    let (small, _) = pair_with(43, 0.0, with(CEILING / 4, Some(grow)));
    assert_eq!(
        window(&small),
        ("nscc", u64::from(CEILING / 4) * 2 / 3),
        "max_cwnd sets the start"
    );

    // A target and a quick-adapt threshold of 1 ns: every delay is above
    // them, and quick adapt cuts the window to what an epoch delivered.
    let shrink = NsccParams {
        base_rtt_ns: 1,
        target_delay_ns: 1,
        qa_threshold_ns: 1,
        qa_gate: 0,
        ..NsccParams::default()
    };
    let (mut a, mut b) = pair_with(44, 0.0, with(CEILING, Some(shrink)));
    transfer(&mut a, &mut b, &sizes);
    let (name, w) = window(&a);
    assert_eq!(name, "nscc");
    assert!(w < fixed * 2 / 3, "the window shrank below its start: {w}");
}

/// An endpoint request's DSCP (`req_tc` of `mrc_ctl_ep_batch_send_wait`)
/// is the traffic class its datagram leaves with: the peer's receive path
/// reads it back. Without one the request keeps the NIC's own; more than
/// six bits is refused.
#[test]
fn an_endpoint_requests_dscp_is_its_datagrams_traffic_class() {
    let _nics = beside_others();
    use driver::device::EndpointRequest;
    const TEST: u8 = 45;
    let nic = |host| {
        SoftNic::new(SoftNicConfig {
            ip: ip(host, TEST),
            ..SoftNicConfig::default()
        })
        .unwrap()
    };
    let (a, b) = (nic(1), nic(2));
    let probe = |dscp| EndpointRequest::EvProbe {
        peer: ip(2, TEST),
        ev: 0xC0DE,
        port: 1,
        dscp,
    };
    // The probe's answer has come: the request reached B before it.
    let answered = |id: u16| {
        let start = Instant::now();
        loop {
            assert!(start.elapsed() < HANG_GUARD, "no answer to request {id}");
            match a.endpoint_result() {
                Some(proto::model::endpoint::EndpointResult::EvProbe { request_id, .. }) if request_id == id => return,
                Some(r) => panic!("{r:?}"),
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    };
    let dscp_at_b = || b.endpoint_tos().map(|t| t >> 2);
    answered(a.endpoint_request(probe(None)).unwrap());
    let own = dscp_at_b().expect("B read the probe's traffic class");
    for dscp in [46u8, 10, 0, 63] {
        assert_ne!(dscp, own, "a DSCP other than the NIC's own");
        answered(a.endpoint_request(probe(Some(dscp))).unwrap());
        assert_eq!(dscp_at_b(), Some(dscp));
    }
    assert!(a.endpoint_request(probe(Some(64))).is_err(), "six bits");
    let status = EndpointRequest::PortStatusUpdate {
        peer: ip(2, TEST),
        ev: 0xC0DE,
        dscp: Some(34),
    };
    a.endpoint_request(status).unwrap();
    let start = Instant::now();
    while dscp_at_b() != Some(34) {
        assert!(start.elapsed() < HANG_GUARD, "no Port Status Update at B");
        std::thread::sleep(Duration::from_millis(1));
    }
}
