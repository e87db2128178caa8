//! The RTL on the wire: a verilated card whose MAC is bridged to a real
//! UDP socket (`cosim::udp_bridge`) exchanges RDMA WRITEs both ways with a
//! soft NIC (`driver::soft`) speaking the same dialect, each side driven
//! through the driver's verbs API; the data arrives byte-identical. Our
//! hardware and our golden model, interoperating through a socket.
//!
//! Both dialects: the card's own row picks what it sends (`wire_mrc10`),
//! and the soft NIC speaks the same one (`Dialect::Mrc10` or `Legacy`).
//! Each side names the other's QP by its wire number
//! (`QueuePair::wire_qpn`): a soft NIC's MRC 1.0 QPs are numbered from
//! 0x10 on the wire, the card's from 0.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use contract::layout::CqStatus;
use cosim::device::{CosimDevice, CosimOptions};
use cosim::nic::build_core;
use cosim::udp_bridge::{BridgeStats, UdpBridge};
use driver::soft::{Dialect, SoftNic, SoftNicConfig};
use driver::*;
use verilated::{skip_without_verilator, BuildOptions};

/// The card's (host 1) and the soft NIC's (host 2) address on loopback
/// network `net`.
fn ip(net: u8, host: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, net, host))
}
fn mac(net: u8, host: u8) -> [u8; 6] {
    [2, 0, 0, 0, net, host]
}
/// A hang guard in wall time (the card's clock is simulated and slow).
const HANG_GUARD: Duration = Duration::from_secs(120);

struct Side {
    ctx: Context,
    pd: ProtectionDomain,
    cq: CompletionQueue,
    qp: QueuePair,
    /// QPs made before `qp` and left in RST (they move its number up).
    _before: Vec<QueuePair>,
}

/// A NIC's context and its QP; `before` QPs are made first, so the QP's
/// number is not the first one.
fn side(dev: Arc<dyn Device>, ip: IpAddr, mac: [u8; 6], wire_mrc10: bool, before: usize) -> Side {
    let ctx = Context::open(dev, &OpenOptions::default()).unwrap();
    ctx.set_local_address(&LocalAddress {
        mac,
        ip,
        vlan_tci: None,
        dscp: 26,
        ttl: 64,
        wire_mrc10,
    });
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(6).unwrap();
    let _before = (0..before).map(|_| pd.create_qp(&mut cq, 4).unwrap()).collect();
    let qp = pd.create_qp(&mut cq, 4).unwrap();
    Side {
        ctx,
        pd,
        cq,
        qp,
        _before,
    }
}

fn connect(s: &mut Side, dest_qp: u32, rq_psn: u32, sq_psn: u32, peer_ip: IpAddr, peer_mac: [u8; 6], ev_base: u16) {
    s.qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    s.qp.modify(QpTransition::Rtr(RtrAttr {
        dest_qp,
        rq_psn,
        peer: PeerAddress {
            mac: peer_mac,
            ip: peer_ip,
        },
        log2_mtu: 10,
        max_wimm: 4,
    }))
    .unwrap();
    s.qp.modify(QpTransition::Rts(RtsAttr {
        sq_psn,
        send_mpr_units: 2,
        max_wimm: 4,
        timeouts: Timeouts {
            // The card answers in simulated time, which runs far slower
            // than the soft NIC's wall clock: 1.024 us x 2^18 = 268 ms,
            // with unlimited exponential retries.
            ack_timeout_exp: 18,
            retry_exp: 25,
            ..Timeouts::default()
        },
        evs: EvProfile {
            values: (0..4).map(|i| u32::from(ev_base + i)).collect(),
            min_active: 1,
        },
        cc: CcProfile::default(),
    }))
    .unwrap();
}

/// Poll both CQs (each poll of the card's CQ runs its clock, and with it
/// the bridge) until side `want` (0 card, 1 soft NIC) has a completion;
/// what the other side completes meanwhile is kept for later.
fn wait(cqs: [&mut CompletionQueue; 2], got: &mut [Vec<WorkCompletion>; 2], want: usize, what: &str) -> WorkCompletion {
    let start = Instant::now();
    let [a, b] = cqs;
    loop {
        if !got[want].is_empty() {
            return got[want].remove(0);
        }
        if let Some(wc) = a.poll_cq().unwrap() {
            got[0].push(wc);
        }
        if let Some(wc) = b.poll_cq().unwrap() {
            got[1].push(wc);
        }
        assert!(start.elapsed() < HANG_GUARD, "no completion for {what}");
    }
}

#[test]
fn the_rtl_and_a_soft_nic_exchange_writes_over_a_socket() {
    exchange(11, Dialect::Legacy);
}

/// The card sending MRC 1.0 (its own row's `wire_mrc10`) and a soft NIC in
/// its default dialect, the golden model's MRC 1.0 QP.
#[test]
fn the_rtl_and_a_soft_nic_exchange_writes_in_mrc10() {
    exchange(27, Dialect::Mrc10);
}

/// A WRITE with an immediate from the card to the soft NIC, and one back,
/// in `dialect`, on loopback network `net`.
fn exchange(net: u8, dialect: Dialect) {
    if skip_without_verilator("the verilated core") {
        return;
    }
    let (card_ip, card_mac, soft_ip, soft_mac) = (ip(net, 1), mac(net, 1), ip(net, 2), mac(net, 2));
    let mrc10 = dialect == Dialect::Mrc10;
    let built = build_core(&BuildOptions::default()).unwrap();
    let card = Arc::new(CosimDevice::single(&built, &CosimOptions::default()).unwrap());
    let bridge = UdpBridge::bind(card_ip, 4791, card_mac).expect("bind the card's loopback address");
    card.with_bench(|b| b.link = Some(Box::new(bridge)));
    let soft = Arc::new(
        SoftNic::new(SoftNicConfig {
            ip: soft_ip,
            dialect,
            ..SoftNicConfig::default()
        })
        .unwrap(),
    );
    // In MRC 1.0 each side's QP is its fourth: the card's is QP 4 (its QP 2,
    // the endpoint QPN, is never given out), the soft NIC's 0x13 on the
    // wire.
    let before = if mrc10 { 3 } else { 0 };
    let mut c = side(card.clone(), card_ip, card_mac, mrc10, before);
    let mut s = side(soft.clone(), soft_ip, soft_mac, mrc10, before);
    if mrc10 {
        assert_eq!((c.qp.wire_qpn(), s.qp.wire_qpn()), (4, 0x13));
    }
    let (cq_n, sq_n) = (c.qp.wire_qpn(), s.qp.wire_qpn());
    connect(&mut c, sq_n, 0x300, 0x100, soft_ip, soft_mac, 0x6000);
    connect(&mut s, cq_n, 0x100, 0x300, card_ip, card_mac, 0x7000);

    const LEN: usize = 6000; // six packets at 1 KiB MTU
    let pattern = |seed: u8| -> Vec<u8> { (0..LEN).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect() };
    let (c_src, c_dst) = (c.pd.alloc_buffer(LEN).unwrap(), c.pd.alloc_buffer(LEN).unwrap());
    let (s_src, s_dst) = (s.pd.alloc_buffer(LEN).unwrap(), s.pd.alloc_buffer(LEN).unwrap());
    c_src.write(0, &pattern(0xA5)).unwrap();
    s_src.write(0, &pattern(0x3C)).unwrap();
    let c_src_mr = c.pd.register(&c_src, Access::LocalOnly).unwrap();
    let c_dst_mr = c.pd.register(&c_dst, Access::RemoteWrite).unwrap();
    let s_src_mr = s.pd.register(&s_src, Access::LocalOnly).unwrap();
    let s_dst_mr = s.pd.register(&s_dst, Access::RemoteWrite).unwrap();

    // Card -> soft NIC, with an immediate.
    s.qp.post_recv(77).unwrap();
    c.qp.post_write(&WriteWr {
        wr_id: 1,
        local: &c_src_mr,
        local_offset: 0,
        len: LEN as u32,
        remote_va: s_dst_mr.remote_va(),
        rkey: s_dst_mr.rkey().unwrap(),
        signaled: true,
        imm: Some(0xC0FFEE),
    })
    .unwrap();
    let mut done: [Vec<WorkCompletion>; 2] = [Vec::new(), Vec::new()];
    let wc = wait([&mut c.cq, &mut s.cq], &mut done, 0, "the card's WRITE");
    assert_eq!((wc.wr_id, wc.status), (1, CqStatus::Success));
    let rc = wait([&mut c.cq, &mut s.cq], &mut done, 1, "the soft NIC's receive");
    assert_eq!((rc.wr_id, rc.imm, rc.byte_len), (77, Some(0xC0FFEE), LEN as u32));
    let mut got = vec![0u8; LEN];
    s_dst.read(0, &mut got).unwrap();
    assert!(got == pattern(0xA5), "the soft NIC's buffer holds what the card sent");

    // Soft NIC -> card.
    s.qp.post_write(&WriteWr {
        wr_id: 2,
        local: &s_src_mr,
        local_offset: 0,
        len: LEN as u32,
        remote_va: c_dst_mr.remote_va(),
        rkey: c_dst_mr.rkey().unwrap(),
        signaled: true,
        imm: None,
    })
    .unwrap();
    let wc = wait([&mut c.cq, &mut s.cq], &mut done, 1, "the soft NIC's WRITE");
    assert_eq!((wc.wr_id, wc.status), (2, CqStatus::Success));
    // The card acknowledges a packet when it has checked it; its DMA write
    // to host memory may still be in the pipeline: run its clock on.
    let start = Instant::now();
    let cycles = card.cycles();
    loop {
        c_dst.read(0, &mut got).unwrap();
        if got == pattern(0x3C) {
            break;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "the card's buffer never held what the soft NIC sent"
        );
        card.run(16);
    }
    eprintln!(
        "placed {} cycles after the soft NIC's completion",
        card.cycles() - cycles
    );

    let st = soft.stats();
    assert_eq!(st.rx_dropped, 0, "{st:?}");
    let bs = card.with_bench(|b| {
        *b.link
            .as_ref()
            .unwrap()
            .as_any()
            .downcast_ref::<UdpBridge>()
            .map(|u| &u.stats)
            .unwrap()
    });
    assert!(bs.tx_datagrams >= 6 && bs.rx_datagrams >= 6, "{bs:?}");
    assert_eq!(
        BridgeStats {
            tx_datagrams: 0,
            rx_datagrams: 0,
            ..bs
        },
        BridgeStats::default(),
        "nothing unroutable or refused: {bs:?}"
    );
    assert!(done.iter().all(Vec::is_empty), "no completion left over: {done:?}");
    drop(c.ctx);
    drop(s.ctx);
}
