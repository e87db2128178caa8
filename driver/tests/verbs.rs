//! The verbs API against `MockDevice`, with the test playing the card:
//! it reads the rows and doorbells the driver wrote, fetches descriptors
//! from the send ring in host memory and writes CQEs / EV events into the
//! rings with the ring writer's phase rule (`docs/hw/ring_writer.md`).

use contract::config::table as cfg_table;
use contract::layout::{Completion, CqStatus, EvEvent, EvNewState, EvReason, SqContext, SqDescriptor, SqOpcode};
use driver::config;
use driver::mock::{CfgRow, MockDevice};
use driver::verbs::CqError;
use driver::*;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

/// A config row's field (`contract::config`'s layout).
fn field(r: &CfgRow, f: contract::field::Field) -> u64 {
    r.bits(f.bit(), f.bits)
}

/// An EV-table deny / allow row: (mask, match, allow).
fn ev_control(r: &CfgRow) -> (u64, u64, u64) {
    use contract::config::ev_control::{ALLOW, MASK, MATCH};
    (field(r, MASK), field(r, MATCH), field(r, ALLOW))
}

/// Every bit of an EV value compared (the driver's mask for one value).
const ALL_EV_BITS: u64 = 0xFFFF_FFFF;

const PEER: PeerAddress = PeerAddress {
    mac: [2, 0, 0, 0, 0, 2],
    ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
};

/// The card's side of the rings, as far as these tests need it.
struct Card {
    dev: Arc<MockDevice>,
    /// Producer index per CQ ring and for the EV ring.
    cq_pi: [u32; 256],
    ev_pi: u32,
    /// Consumer index per QP's send ring.
    sq_ci: [u32; 256],
}

impl Card {
    fn new(dev: Arc<MockDevice>) -> Card {
        Card {
            dev,
            cq_pi: [0; 256],
            ev_pi: 0,
            sq_ci: [0; 256],
        }
    }

    fn ring_row(&self, table: u8, index: u16) -> (u64, u32) {
        let r = self.dev.last_row(table, index).expect("ring set up");
        (r.bits(0, 64), r.bits(64, 8) as u32)
    }

    fn sq_ctx(&self, qpn: u32) -> SqContext {
        SqContext::decode(
            &self
                .dev
                .last_row(cfg_table::SQ_CTX, qpn as u16)
                .expect("send context")
                .data,
        )
        .unwrap()
    }

    /// Descriptors up to the QP's last doorbell, consumed.
    fn fetch(&mut self, qpn: u32) -> Vec<SqDescriptor> {
        self.fetch_indexed(qpn).into_iter().map(|(_, d)| d).collect()
    }

    /// The same, with each descriptor's SQ index.
    fn fetch_indexed(&mut self, qpn: u32) -> Vec<(u32, SqDescriptor)> {
        let ctx = self.sq_ctx(qpn);
        let pi = self
            .dev
            .doorbells()
            .iter()
            .rev()
            .find(|d| u32::from(d.0) == qpn)
            .map_or(0, |d| d.1);
        let mut out = vec![];
        while self.sq_ci[qpn as usize] != pi {
            let ci = self.sq_ci[qpn as usize];
            let slot = u64::from(ci & ((1 << ctx.sq_log2_size) - 1));
            let b = self
                .dev
                .dma_read(ctx.sq_base + 64 * slot, 64)
                .expect("SQ in host memory");
            out.push((ci, SqDescriptor::decode(&b).expect("valid SQE")));
            self.sq_ci[qpn as usize] = ci.wrapping_add(1);
        }
        out
    }

    /// Write raw CQE bytes at the CQ's producer index, phase set by the rule.
    fn write_cqe_raw(&mut self, cqn: u16, mut b: [u8; 32]) {
        let (base, log2) = self.ring_row(cfg_table::CQ_RING, cqn);
        let pi = self.cq_pi[usize::from(cqn)];
        b[0] = (b[0] & !1) | (1 - ((pi >> log2) & 1)) as u8;
        assert!(self.dev.dma_write(base + 32 * u64::from(pi & ((1 << log2) - 1)), &b));
        self.cq_pi[usize::from(cqn)] = pi.wrapping_add(1);
    }

    fn complete(&mut self, cqn: u16, c: Completion) {
        self.write_cqe_raw(cqn, c.encode().unwrap());
    }

    fn send_cqe(&mut self, cqn: u16, qp: u32, sq_index: u32, d: &SqDescriptor, status: CqStatus) {
        self.complete(
            cqn,
            Completion {
                phase: false,
                status,
                opcode: d.opcode.code(),
                qp,
                wr_id: d.wr_id,
                byte_len: d.length,
                imm: None,
                sq_index,
            },
        );
    }

    fn recv_cqe(&mut self, cqn: u16, qp: u32, len: u32, imm: u32) {
        self.complete(
            cqn,
            Completion {
                phase: false,
                status: CqStatus::Success,
                opcode: 2,
                qp,
                wr_id: 0,
                byte_len: len,
                imm: Some(imm),
                sq_index: 0,
            },
        );
    }

    fn event(&mut self, e: EvEvent) {
        let (base, log2) = self.ring_row(cfg_table::EV_RING, 0);
        let mut b = e.encode().unwrap();
        b[0] = (b[0] & !1) | (1 - ((self.ev_pi >> log2) & 1)) as u8;
        assert!(self
            .dev
            .dma_write(base + 16 * u64::from(self.ev_pi & ((1 << log2) - 1)), &b));
        self.ev_pi += 1;
    }
}

fn rts_attr() -> RtsAttr {
    RtsAttr {
        sq_psn: 0xFF_FFF0,
        send_mpr_units: 2,
        max_wimm: 2,
        timeouts: Timeouts {
            ack_timeout_exp: 8,
            retry_linear: 7,
            retry_exp: 7,
            reorder_allowance: 3,
            stall_allowance_ns: 50_000,
            stall_age_ns: 0,
        },
        evs: EvProfile {
            values: (0..8).map(|i| 0x1000 + i).collect(),
            min_active: 3,
        },
        cc: CcProfile {
            min_cwnd: 4096,
            max_cwnd: 1 << 20,
            nscc: None,
        },
    }
}

fn rtr_attr() -> RtrAttr {
    RtrAttr {
        dest_qp: 0x55,
        rq_psn: 0x123,
        peer: PEER,
        log2_mtu: 10,
        max_wimm: 2,
    }
}

struct Setup {
    dev: Arc<MockDevice>,
    card: Card,
    ctx: Context,
    pd: ProtectionDomain,
    cq: CompletionQueue,
    qp: QueuePair,
    mr: MemoryRegion,
}

fn setup(log2_sq: u8, log2_cq: u8) -> Setup {
    let dev = Arc::new(MockDevice::new());
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).unwrap();
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(log2_cq).unwrap();
    let mut qp = pd.create_qp(&mut cq, log2_sq).unwrap();
    qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    qp.modify(QpTransition::Rtr(rtr_attr())).unwrap();
    qp.modify(QpTransition::Rts(rts_attr())).unwrap();
    let buf = pd.alloc_buffer(1 << 16).unwrap();
    let mr = pd.register(&buf, Access::LocalOnly).unwrap();
    Setup {
        card: Card::new(dev.clone()),
        dev,
        ctx,
        pd,
        cq,
        qp,
        mr,
    }
}

fn wr(mr: &MemoryRegion, wr_id: u64, off: u64, len: u32) -> WriteWr<'_> {
    WriteWr {
        wr_id,
        local: mr,
        local_offset: off,
        len,
        remote_va: 0x5000_0000u64.wrapping_add(off),
        rkey: 0x1234,
        signaled: true,
        imm: None,
    }
}

fn row_pos(rows: &[CfgRow], table: u8, index: u16) -> usize {
    rows.iter()
        .rposition(|r| r.table == table && r.index == index)
        .unwrap_or_else(|| panic!("no row {table}/{index:#x}"))
}

/// A QP with NSCC parameters gets the card's NSCC unit row (table 14)
/// with `enable` set: the soft NIC's controller for those parameters
/// (`nscc_config`) in the unit's integer form, and NSCC's floor as table
/// 10's `min_cwnd`; a QP number brought up again without NSCC gets the
/// row with `enable` clear. Both before the send context that starts
/// the QP.
#[test]
fn nscc_parameters_reach_the_cards_nscc_row() {
    let dev = Arc::new(MockDevice::new());
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).unwrap();
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(6).unwrap();
    let params = NsccParams {
        base_rtt_ns: 4_000,
        target_delay_ns: 1_500,
        gamma: 0.25,
        ..NsccParams::default()
    };
    let max_cwnd = 300_000;
    let mut qp = pd.create_qp(&mut cq, 4).unwrap();
    let q = qp.qpn() as u16;
    qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    qp.modify(QpTransition::Rtr(rtr_attr())).unwrap();
    qp.modify(QpTransition::Rts(RtsAttr {
        cc: CcProfile {
            min_cwnd: 4096,
            max_cwnd,
            nscc: Some(params),
        },
        ..rts_attr()
    }))
    .unwrap();
    let mtu = 1u32 << rtr_attr().log2_mtu;
    let want = proto::model::nscc_fixed::NsccFixedParams::from_config(&driver::soft::engine::nscc_config(
        &params,
        u64::from(max_cwnd),
        mtu,
    ));
    let row = dev.last_row(cfg_table::NSCC, q).unwrap();
    use contract::config::nscc;
    let get = |f: contract::field::Field| row.bits(f.bit(), f.bits);
    assert_eq!(
        (
            get(nscc::BASE_RTT_NS),
            get(nscc::TARGET_NS),
            get(nscc::INCREASE_BYTES),
            get(nscc::INIT_CWND),
            get(nscc::DECREASE_GAIN),
            get(nscc::ENABLE)
        ),
        (4_000, 1_500, u64::from(mtu), u64::from(want.init_cwnd), 16_384, 1)
    );
    let cc = dev.last_row(cfg_table::CC, q).unwrap();
    assert_eq!(
        (cc.bits(0, 32), cc.bits(32, 32)),
        (u64::from(want.min_cwnd), u64::from(max_cwnd))
    );
    let rows = dev.rows();
    let sq_ctx_at = row_pos(&rows, cfg_table::SQ_CTX, q);
    assert!(row_pos(&rows, cfg_table::NSCC, q) < sq_ctx_at);
    assert!(row_pos(&rows, cfg_table::CC, q) < sq_ctx_at);
    // The same QP number again, without NSCC.
    drop(qp);
    let mut again = pd.create_qp(&mut cq, 4).unwrap();
    assert_eq!(again.qpn() as u16, q, "the QP number is reused");
    again.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    again.modify(QpTransition::Rtr(rtr_attr())).unwrap();
    again.modify(QpTransition::Rts(rts_attr())).unwrap();
    let row = dev.last_row(cfg_table::NSCC, q).unwrap();
    assert_eq!(row.bits(nscc::ENABLE.bit(), 1), 0, "no NSCC inherited");
    assert_eq!(dev.last_row(cfg_table::CC, q).unwrap().bits(0, 32), 4096);
}

/// Every timeout exponent of MRC 1.0 (0..=24) reaches the card as the
/// exponent itself; 25 is refused.
#[test]
fn every_timeout_exponent_up_to_24_is_written() {
    let dev = Arc::new(MockDevice::new());
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).unwrap();
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(6).unwrap();
    for t in [0u8, 8, 21, 22, 23, 24, 25] {
        let mut qp = pd.create_qp(&mut cq, 4).unwrap();
        qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
        qp.modify(QpTransition::Rtr(rtr_attr())).unwrap();
        let r = qp.modify(QpTransition::Rts(RtsAttr {
            timeouts: Timeouts {
                ack_timeout_exp: t,
                ..rts_attr().timeouts
            },
            ..rts_attr()
        }));
        if t > 24 {
            assert!(matches!(
                r,
                Err(ModifyError::BadAttribute {
                    name: "ack_timeout_exp",
                    ..
                })
            ));
            continue;
        }
        r.unwrap();
        let row = dev.last_row(cfg_table::RETX_QP, qp.qpn() as u16).unwrap();
        assert_eq!(row.bits(0, 5), u64::from(t));
    }
}

#[test]
fn an_ipv4_peer_refuses_ev_values_above_16_bits_and_an_ipv6_peer_takes_them() {
    use std::net::Ipv6Addr;
    let dev = Arc::new(MockDevice::new());
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).unwrap();
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(6).unwrap();
    // Two EVs equal in bits 15-0: over IPv4 both would leave on source
    // port 0x1234.
    let wide = RtsAttr {
        evs: EvProfile {
            values: vec![0x1234, 0xA5C3_1234],
            min_active: 1,
        },
        ..rts_attr()
    };
    let v6_peer = PeerAddress {
        ip: IpAddr::V6(Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 2)),
        ..PEER
    };
    for peer in [PEER, v6_peer] {
        let mut qp = pd.create_qp(&mut cq, 4).unwrap();
        qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
        qp.modify(QpTransition::Rtr(RtrAttr { peer, ..rtr_attr() })).unwrap();
        let rows_before = dev.rows().len();
        let r = qp.modify(QpTransition::Rts(wide.clone()));
        if peer.ip.is_ipv4() {
            match r {
                Err(ModifyError::BadAttribute { name: "evs", why }) => assert!(why.contains("0xa5c31234"), "{why}"),
                other => panic!("IPv4: {other:?}"),
            }
            assert_eq!(dev.rows().len(), rows_before, "a refused RTS writes no row");
            continue;
        }
        r.unwrap();
        let written: Vec<u64> = (0..2)
            .map(|i| {
                field(
                    &dev.last_row(cfg_table::EV, (qp.qpn() as u16) << 7 | i).unwrap(),
                    contract::config::ev_value::VALUE,
                )
            })
            .collect();
        assert_eq!(written, [0x1234, 0xA5C3_1234]);
    }
}

#[test]
fn bring_up_writes_the_core_rows_in_order() {
    let s = setup(4, 6);
    let rows = s.dev.rows();
    let q = s.qp.qpn() as u16;
    // Globals at open.
    assert_eq!(
        s.dev.last_row(cfg_table::ACK_PARAMS, 0).unwrap().bits(0, 32),
        4 | 2000 << 16
    );
    // CQ ring: base and size.
    let (base, log2) = s.card.ring_row(cfg_table::CQ_RING, s.cq.cqn());
    assert_eq!(log2, 6);
    assert_ne!(base, 0);
    // Receive side: peer row, receive PSN in both tables.
    let ctx = s.card.sq_ctx(s.qp.qpn());
    let peer = s.dev.last_row(cfg_table::ADDR, ctx.addr_index).unwrap();
    assert_eq!(peer.bits(0, 48), 0x0200_0000_0002);
    assert_eq!(peer.bits(48, 32), 0x0A00_0002);
    assert_eq!(s.dev.last_row(cfg_table::ACK_QP_INIT, q).unwrap().bits(0, 24), 0x123);
    assert_eq!(s.dev.last_row(cfg_table::RECV_QP, q).unwrap().bits(0, 24), 0x123);
    // ... and the path MTU the RX path checks payloads against.
    assert_eq!(s.dev.last_row(cfg_table::RECV_QP, q).unwrap().bits(24, 4), 10);
    // Send side: CC window, retransmit, EVs, then the send context last.
    let cc = s.dev.last_row(cfg_table::CC, q).unwrap();
    assert_eq!((cc.bits(0, 32), cc.bits(32, 32), cc.bits(64, 16)), (4096, 1 << 20, 256));
    let rt = s.dev.last_row(cfg_table::RETX_QP, q).unwrap();
    assert_eq!(
        (
            rt.bits(0, 5),
            rt.bits(32, 32),
            rt.bits(64, 16),
            rt.bits(80, 3),
            rt.bits(83, 5)
        ),
        (8, 50_000, 3, 7, 7)
    );
    for i in 0..8u16 {
        assert_eq!(
            field(
                &s.dev.last_row(cfg_table::EV, q << 7 | i).unwrap(),
                contract::config::ev_value::VALUE
            ),
            0x1000 + u64::from(i)
        );
    }
    // The card sprays over all 128 EV slots: after an allow-all, the
    // slots beyond the set (value 0) are denied.
    let ctl_rows: Vec<&CfgRow> = rows
        .iter()
        .filter(|r| r.table == cfg_table::EV && r.index == contract::config::INDEX_SELECT | q)
        .collect();
    assert_eq!(ctl_rows.len(), 1, "a fresh QP number: nothing to allow again");
    assert_eq!(ev_control(ctl_rows[0]), (ALL_EV_BITS, 0, 0), "deny value 0");
    assert!(
        s.dev.last_row(cfg_table::EV, q << 7 | 8).is_none(),
        "no stale slots to clear on a fresh QP number"
    );
    let sq_ctx_at = row_pos(&rows, cfg_table::SQ_CTX, q);
    assert_eq!(
        sq_ctx_at,
        rows.len() - 1,
        "the send context is the last row (it starts the QP)"
    );
    assert!(row_pos(&rows, cfg_table::CC, q) < sq_ctx_at);
    assert!(row_pos(&rows, cfg_table::RETX_QP, q) < sq_ctx_at);
    assert_eq!(
        ctx,
        SqContext {
            sq_base: ctx.sq_base,
            cq_index: s.cq.cqn(),
            addr_index: ctx.addr_index,
            dest_qp: 0x55,
            start_psn: 0xFF_FFF0,
            pkey: 0xFFFF,
            sq_log2_size: 4,
            log2_mtu: 10,
            ev_count: 8,
            enable: true,
            send_mpr_units: 2,
            ev_min_active: 3,
        }
    );
    assert_eq!(ctx.sq_base % 64, 0);
    assert_eq!(s.qp.state(), QpState::Rts);
    s.ctx.sync().unwrap();
}

#[test]
fn posts_land_in_the_send_ring_with_one_doorbell_each_or_per_batch() {
    let mut s = setup(4, 6);
    let q = s.qp.qpn();
    s.qp.post_write(&wr(&s.mr, 11, 0x100, 3000)).unwrap();
    s.qp.post_write_imm(&wr(&s.mr, 12, 0x2000, 100), 0xABCD_EF01).unwrap();
    assert_eq!(s.dev.doorbells(), vec![(q as u8, 1), (q as u8, 2)]);
    let d = s.card.fetch(q);
    assert_eq!(
        d,
        vec![
            SqDescriptor {
                opcode: SqOpcode::Write,
                signaled: true,
                length: 3000,
                wr_id: 11,
                local_iova: s.mr.buffer().iova() + 0x100,
                remote_va: 0x5000_0100,
                rkey: 0x1234,
                imm: 0
            },
            SqDescriptor {
                opcode: SqOpcode::WriteImm,
                signaled: true,
                length: 100,
                wr_id: 12,
                local_iova: s.mr.buffer().iova() + 0x2000,
                remote_va: 0x5000_2000,
                rkey: 0x1234,
                imm: 0xABCD_EF01
            },
        ]
    );
    // A batch of 5: one doorbell with producer index 7.
    let batch: Vec<WriteWr> = (0..5).map(|i| wr(&s.mr, 20 + i, 64 * i, 64)).collect();
    assert_eq!(s.qp.post_writes(&batch), Ok(5));
    assert_eq!(s.dev.doorbells().last(), Some(&(q as u8, 7)));
    assert_eq!(s.dev.doorbells().len(), 3);
    let d = s.card.fetch(q);
    assert_eq!(d.iter().map(|d| d.wr_id).collect::<Vec<_>>(), vec![20, 21, 22, 23, 24]);
}

#[test]
fn misuse_is_refused_with_typed_errors() {
    let dev = Arc::new(MockDevice::new());
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).unwrap();
    let pd = ctx.alloc_pd();
    let other_pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(4).unwrap();
    let mut qp = pd.create_qp(&mut cq, 2).unwrap();
    let buf = pd.alloc_buffer(4096).unwrap();
    let mr = pd.register(&buf, Access::LocalOnly).unwrap();
    // Posting before RTS, in every earlier state.
    assert_eq!(
        qp.post_write(&wr(&mr, 1, 0, 8)),
        Err(PostError::NotReady(QpState::Reset))
    );
    assert_eq!(qp.post_recv(1), Err(PostError::RecvNotReady(QpState::Reset)));
    assert!(matches!(
        qp.modify(QpTransition::Rts(rts_attr())),
        Err(ModifyError::BadTransition {
            from: QpState::Reset,
            ..
        })
    ));
    qp.modify(QpTransition::Init { pkey: 0x8001 }).unwrap();
    assert_eq!(
        qp.post_write(&wr(&mr, 1, 0, 8)),
        Err(PostError::NotReady(QpState::Init))
    );
    assert!(matches!(
        qp.modify(QpTransition::Init { pkey: 1 }),
        Err(ModifyError::BadTransition { .. })
    ));
    let rows_before = dev.rows().len();
    assert!(matches!(
        qp.modify(QpTransition::Rtr(RtrAttr {
            log2_mtu: 14,
            ..rtr_attr()
        })),
        Err(ModifyError::BadAttribute { name: "log2_mtu", .. })
    ));
    assert!(matches!(
        qp.modify(QpTransition::Rtr(RtrAttr {
            dest_qp: 1 << 24,
            ..rtr_attr()
        })),
        Err(ModifyError::BadAttribute { name: "dest_qp", .. })
    ));
    assert_eq!(dev.rows().len(), rows_before, "a refused transition writes nothing");
    assert_eq!(qp.state(), QpState::Init);
    qp.modify(QpTransition::Rtr(rtr_attr())).unwrap();
    assert_eq!(qp.post_write(&wr(&mr, 1, 0, 8)), Err(PostError::NotReady(QpState::Rtr)));
    let bad_rts = [
        (
            "ack_timeout_exp",
            RtsAttr {
                timeouts: Timeouts {
                    ack_timeout_exp: 25,
                    ..Timeouts::default()
                },
                ..rts_attr()
            },
        ),
        (
            "retry_linear",
            RtsAttr {
                timeouts: Timeouts {
                    retry_linear: 8,
                    ..Timeouts::default()
                },
                ..rts_attr()
            },
        ),
        (
            "retry_exp",
            RtsAttr {
                timeouts: Timeouts {
                    retry_exp: 26,
                    ..Timeouts::default()
                },
                ..rts_attr()
            },
        ),
        (
            "evs",
            RtsAttr {
                evs: EvProfile {
                    values: vec![],
                    min_active: 1,
                },
                ..rts_attr()
            },
        ),
        (
            "evs",
            RtsAttr {
                evs: EvProfile {
                    values: (1..130).collect(),
                    min_active: 1,
                },
                ..rts_attr()
            },
        ),
        (
            "evs",
            RtsAttr {
                evs: EvProfile {
                    values: vec![5, 0, 6],
                    min_active: 1,
                },
                ..rts_attr()
            },
        ),
        (
            "evs",
            RtsAttr {
                evs: EvProfile {
                    values: vec![7, 8, 7],
                    min_active: 1,
                },
                ..rts_attr()
            },
        ),
        (
            "cc",
            RtsAttr {
                cc: CcProfile {
                    min_cwnd: 0,
                    max_cwnd: 10,
                    nscc: None,
                },
                ..rts_attr()
            },
        ),
        (
            "cc",
            RtsAttr {
                cc: CcProfile {
                    min_cwnd: 100,
                    max_cwnd: 10,
                    nscc: None,
                },
                ..rts_attr()
            },
        ),
        (
            "send_mpr_units",
            RtsAttr {
                send_mpr_units: 0,
                ..rts_attr()
            },
        ),
        (
            "max_wimm",
            RtsAttr {
                max_wimm: 0,
                ..rts_attr()
            },
        ),
        (
            "sq_psn",
            RtsAttr {
                sq_psn: 1 << 24,
                ..rts_attr()
            },
        ),
    ];
    let rows_before = dev.rows().len();
    for (name, a) in bad_rts {
        match qp.modify(QpTransition::Rts(a)) {
            Err(ModifyError::BadAttribute { name: n, .. }) => assert_eq!(n, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    assert_eq!(dev.rows().len(), rows_before);
    qp.modify(QpTransition::Rts(rts_attr())).unwrap();

    // Oversize, out of region, other PD, deregistered.
    assert_eq!(
        qp.post_write(&wr(&mr, 1, 0, (1 << 31) + 1)),
        Err(PostError::Oversize {
            len: (1 << 31) + 1,
            max: 1 << 31
        })
    );
    assert_eq!(
        qp.post_write(&wr(&mr, 1, 4000, 97)),
        Err(PostError::OutOfRegion {
            offset: 4000,
            len: 97,
            size: 4096
        })
    );
    assert!(matches!(
        qp.post_write(&wr(&mr, 1, u64::MAX, 1)),
        Err(PostError::OutOfRegion { .. })
    ));
    let foreign = other_pd
        .register(&other_pd.alloc_buffer(4096).unwrap(), Access::LocalOnly)
        .unwrap();
    assert_eq!(qp.post_write(&wr(&foreign, 1, 0, 8)), Err(PostError::PdMismatch));
    let mut gone = pd.register(&buf, Access::RemoteWrite).unwrap();
    gone.deregister();
    assert_eq!(qp.post_write(&wr(&gone, 1, 0, 8)), Err(PostError::Deregistered));
    assert!(dev.doorbells().is_empty(), "nothing refused was rung");

    // A full queue (4 slots), then the WRITE-IMM budget (2).
    for i in 0..4 {
        qp.post_write(&wr(&mr, i, 0, 8)).unwrap();
    }
    assert_eq!(qp.post_write(&wr(&mr, 9, 0, 8)), Err(PostError::QueueFull(4)));
    assert_eq!(qp.outstanding(), 4);
    // Receives: bounded by max_wimm.
    qp.post_recv(1).unwrap();
    qp.post_recv(2).unwrap();
    assert_eq!(qp.post_recv(3), Err(PostError::RecvQueueFull(2)));
    let batch = vec![wr(&mr, 1, 0, 8); 5];
    assert_eq!(qp.post_writes(&batch), Err((0, PostError::BatchTooLarge(5))));
}

#[test]
fn completions_free_slots_and_enforce_the_imm_budget() {
    let mut s = setup(2, 3);
    let q = s.qp.qpn();
    let cqn = s.cq.cqn();
    assert_eq!(s.cq.poll_cq(), Ok(None));
    s.qp.post_write_imm(&wr(&s.mr, 1, 0, 8), 1).unwrap();
    s.qp.post_write_imm(&wr(&s.mr, 2, 0, 8), 2).unwrap();
    assert_eq!(
        s.qp.post_write_imm(&wr(&s.mr, 3, 0, 8), 3),
        Err(PostError::ImmBudget(2))
    );
    // An unsignaled WRITE, then a signaled one.
    s.qp.post_write(&WriteWr {
        signaled: false,
        ..wr(&s.mr, 4, 0, 8)
    })
    .unwrap();
    s.qp.post_write(&wr(&s.mr, 5, 0, 16)).unwrap();
    assert_eq!(s.qp.post_write(&wr(&s.mr, 6, 0, 8)), Err(PostError::QueueFull(4)));
    let d = s.card.fetch(q);
    assert_eq!(d.len(), 4);
    assert!(!d[2].signaled);
    s.card.send_cqe(cqn, q, 0, &d[0], CqStatus::Success);
    let wc = s.cq.poll_cq().unwrap().unwrap();
    assert_eq!(
        wc,
        WorkCompletion {
            wr_id: 1,
            status: CqStatus::Success,
            opcode: WcOpcode::WriteImm,
            qp: q,
            byte_len: 8,
            imm: None
        }
    );
    // One WRITE-IMM completed: the budget has room again.
    s.qp.post_write_imm(&wr(&s.mr, 7, 0, 8), 7).unwrap();
    assert_eq!(
        s.qp.post_write_imm(&wr(&s.mr, 8, 0, 8), 8),
        Err(PostError::QueueFull(4)),
        "room is checked first"
    );
    // The CQE of WR 5 (index 3) also completes the unsignaled WR 4 (index 2) and WR 2.
    s.card.send_cqe(cqn, q, 1, &d[1], CqStatus::Success);
    s.card.send_cqe(cqn, q, 3, &d[3], CqStatus::Success);
    assert_eq!(s.cq.poll_cq().unwrap().map(|w| w.wr_id), Some(2));
    assert_eq!(s.cq.poll_cq().unwrap().map(|w| (w.wr_id, w.byte_len)), Some((5, 16)));
    assert_eq!(s.cq.poll_cq(), Ok(None));
    assert_eq!(s.qp.outstanding(), 1, "only WR 7 is left");
    // Consumer index reported to the card after a quarter of the 8-slot CQ (2).
    let ci = s
        .dev
        .last_row(cfg_table::CQ_RING, contract::config::INDEX_SELECT | cqn)
        .expect("consumer index row");
    assert!(ci.bits(0, 32) >= 2);
}

#[test]
fn unsignaled_streams_are_reclaimed_through_hidden_completions() {
    let mut s = setup(3, 4);
    let q = s.qp.qpn();
    let cqn = s.cq.cqn();
    let mut refused = 0;
    // 100 unsignaled WRs through an 8-slot SQ: the driver signals one per
    // half ring itself; the card completes only signaled descriptors, as
    // the hardware does.
    for n in 0..100u64 {
        loop {
            match s.qp.post_write(&WriteWr {
                signaled: false,
                ..wr(&s.mr, n, 0, 8)
            }) {
                Ok(()) => break,
                Err(PostError::QueueFull(8)) => {
                    refused += 1;
                    assert!(refused < 1000, "the queue never drains");
                    for (idx, d) in s.card.fetch_indexed(q) {
                        if d.signaled {
                            s.card.send_cqe(cqn, q, idx, &d, CqStatus::Success);
                        }
                    }
                    assert_eq!(s.cq.poll_cq(), Ok(None), "driver-signaled completions are hidden");
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    assert!(refused >= 10, "the queue filled and drained repeatedly ({refused})");
    assert!(s.qp.outstanding() <= 8);
}

#[test]
fn receive_completions_consume_posted_receives_or_wait_for_one() {
    let mut s = setup(4, 4);
    let q = s.qp.qpn();
    let cqn = s.cq.cqn();
    s.qp.post_recv(100).unwrap();
    s.card.recv_cqe(cqn, q, 64, 0xAA);
    assert_eq!(
        s.cq.poll_cq(),
        Ok(Some(WorkCompletion {
            wr_id: 100,
            status: CqStatus::Success,
            opcode: WcOpcode::RecvWriteImm,
            qp: q,
            byte_len: 64,
            imm: Some(0xAA)
        }))
    );
    // Two arrive with no receive posted: held, in order.
    s.card.recv_cqe(cqn, q, 1, 0xB1);
    s.card.recv_cqe(cqn, q, 2, 0xB2);
    assert_eq!(s.cq.poll_cq(), Ok(None));
    assert_eq!(s.qp.held_receives(), 2);
    s.qp.post_recv(201).unwrap();
    s.qp.post_recv(202).unwrap();
    assert_eq!(s.qp.held_receives(), 0);
    let a = s.cq.poll_cq().unwrap().unwrap();
    let b = s.cq.poll_cq().unwrap().unwrap();
    assert_eq!((a.wr_id, a.imm, b.wr_id, b.imm), (201, Some(0xB1), 202, Some(0xB2)));
    assert_eq!(s.cq.poll_cq(), Ok(None));
    // A receive CQE that is not a successful WRITE-IMM is refused.
    let mut bad = Completion {
        phase: false,
        status: CqStatus::Success,
        opcode: 1,
        qp: q,
        wr_id: 0,
        byte_len: 1,
        imm: Some(1),
        sq_index: 0,
    };
    s.card.complete(cqn, bad);
    assert_eq!(
        s.cq.poll_cq(),
        Err(CqError::BadReceive {
            qp: q,
            status: CqStatus::Success,
            opcode: 1
        })
    );
    bad.opcode = 2;
    bad.status = CqStatus::RemoteAccess;
    s.card.complete(cqn, bad);
    assert!(matches!(
        s.cq.poll_cq(),
        Err(CqError::BadReceive {
            status: CqStatus::RemoteAccess,
            ..
        })
    ));
}

#[test]
fn invalid_completions_are_typed_errors_and_the_cq_goes_on() {
    let mut s = setup(4, 5);
    let q = s.qp.qpn();
    let cqn = s.cq.cqn();
    s.qp.post_write(&wr(&s.mr, 7, 0, 8)).unwrap();
    s.qp.post_write(&wr(&s.mr, 8, 0, 8)).unwrap();
    let d = s.card.fetch(q);
    // Another QP number.
    s.card.send_cqe(cqn, 200, 0, &d[0], CqStatus::Success);
    assert_eq!(s.cq.poll_cq(), Err(CqError::UnknownQp(200)));
    // An index never posted, and one behind the consumer index.
    s.card.send_cqe(cqn, q, 2, &d[0], CqStatus::Success);
    assert_eq!(
        s.cq.poll_cq(),
        Err(CqError::IndexOutOfRange {
            qp: q,
            index: 2,
            ci: 0,
            pi: 2
        })
    );
    s.card.send_cqe(cqn, q, u32::MAX, &d[0], CqStatus::Success);
    assert!(matches!(
        s.cq.poll_cq(),
        Err(CqError::IndexOutOfRange { index: u32::MAX, .. })
    ));
    // A wr_id or opcode other than posted.
    s.card
        .send_cqe(cqn, q, 0, &SqDescriptor { wr_id: 99, ..d[0] }, CqStatus::Success);
    assert_eq!(
        s.cq.poll_cq(),
        Err(CqError::Mismatch {
            qp: q,
            index: 0,
            field: "wr_id",
            got: 99,
            want: 7
        })
    );
    s.card.send_cqe(
        cqn,
        q,
        0,
        &SqDescriptor {
            opcode: SqOpcode::WriteImm,
            ..d[0]
        },
        CqStatus::Success,
    );
    assert!(matches!(s.cq.poll_cq(), Err(CqError::Mismatch { field: "opcode", .. })));
    // Undefined status, reserved bits.
    let mut raw = Completion {
        phase: false,
        status: CqStatus::Success,
        opcode: 1,
        qp: q,
        wr_id: 7,
        byte_len: 8,
        imm: None,
        sq_index: 0,
    }
    .encode()
    .unwrap();
    raw[1] = 8;
    s.card.write_cqe_raw(cqn, raw);
    assert!(matches!(s.cq.poll_cq(), Err(CqError::Malformed(_))));
    raw[1] = 0;
    raw[0] = 0x80;
    s.card.write_cqe_raw(cqn, raw);
    assert!(matches!(s.cq.poll_cq(), Err(CqError::Malformed(_))));
    // A rejected doorbell.
    s.card.complete(
        cqn,
        Completion {
            phase: false,
            status: CqStatus::BadDoorbell,
            opcode: 0,
            qp: q,
            wr_id: 0,
            byte_len: 0,
            imm: None,
            sq_index: 77,
        },
    );
    assert_eq!(s.cq.poll_cq(), Err(CqError::DoorbellRejected { qp: q, producer: 77 }));
    // None of that consumed a send slot: the real CQEs still complete.
    assert_eq!(s.qp.outstanding(), 2);
    s.card.send_cqe(cqn, q, 0, &d[0], CqStatus::Success);
    s.card.send_cqe(cqn, q, 1, &d[1], CqStatus::Success);
    assert_eq!(s.cq.poll_cq().unwrap().map(|w| w.wr_id), Some(7));
    assert_eq!(s.cq.poll_cq().unwrap().map(|w| w.wr_id), Some(8));
    assert_eq!(s.cq.poll_cq(), Ok(None));
    assert_eq!(s.qp.outstanding(), 0);
}

#[test]
fn random_cqe_bytes_never_panic_or_corrupt_the_queue() {
    let mut s = setup(5, 6);
    let q = s.qp.qpn();
    let cqn = s.cq.cqn();
    let mut rng = tb::rng::Rng::from_state(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut errs) = (0, 0);
    for i in 0..3000u64 {
        let mut raw = [0u8; 32];
        for chunk in raw.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes()[..chunk.len()]);
        }
        // Half of them aimed at the live QP, to get past the QP check.
        if i % 2 == 0 {
            raw[4..7].copy_from_slice(&q.to_le_bytes()[..3]);
            raw[1] = (rng.next_u64() % 9) as u8;
            raw[2] = (rng.next_u64() % 3) as u8;
            raw[0] &= 1;
            raw[28] &= 1;
        }
        s.card.write_cqe_raw(cqn, raw);
        match s.cq.poll_cq() {
            Ok(_) => ok += 1,
            Err(_) => errs += 1,
        }
    }
    assert_eq!(ok + errs, 3000);
    assert!(errs > 1000, "garbage is refused ({errs} refused, {ok} accepted)");
    // With nothing posted, the only acceptable entries are well-formed
    // receive completions, held for want of a receive; the send queue is
    // untouched and still works.
    assert!(ok > 0, "some garbage is a valid receive completion");
    assert_eq!(s.qp.held_receives(), ok);
    assert_eq!(s.qp.outstanding(), 0);
    assert_eq!(s.qp.state(), QpState::Rts);
    s.qp.post_write(&wr(&s.mr, 5, 0, 8)).unwrap();
    let d = s.card.fetch(q);
    s.card.send_cqe(cqn, q, 0, &d[0], CqStatus::Success);
    assert_eq!(s.cq.poll_cq().unwrap().map(|w| w.wr_id), Some(5));
}

/// Every error status the card reports puts the QP in error, as retries
/// exceeded does: a remote access NACK, a descriptor the card refused.
#[test]
fn every_error_completion_puts_the_qp_in_error() {
    for status in [CqStatus::RemoteAccess, CqStatus::BadLength, CqStatus::BadOpcode] {
        let mut s = setup(4, 5);
        let q = s.qp.qpn();
        let cqn = s.cq.cqn();
        s.qp.post_write(&wr(&s.mr, 1, 0, 8)).unwrap();
        s.qp.post_write(&wr(&s.mr, 2, 0, 8)).unwrap();
        let d = s.card.fetch(q);
        s.card.send_cqe(cqn, q, 0, &d[0], status);
        assert_eq!(s.cq.poll_cq().unwrap().map(|w| (w.wr_id, w.status)), Some((1, status)));
        assert_eq!(
            s.cq.poll_cq().unwrap().map(|w| (w.wr_id, w.status)),
            Some((2, CqStatus::Flushed)),
            "{status:?}"
        );
        assert_eq!(s.qp.state(), QpState::Error, "{status:?}");
    }
}

#[test]
fn error_flushes_in_order_and_retry_exceeded_puts_the_qp_in_error() {
    let mut s = setup(4, 5);
    let q = s.qp.qpn();
    let cqn = s.cq.cqn();
    for i in 1..=3 {
        s.qp.post_write(&wr(&s.mr, i, 0, 8)).unwrap();
    }
    s.qp.post_recv(50).unwrap();
    let d = s.card.fetch(q);
    // The card gives up on WR 2: WR 1 (implied, unsignaled or not) done,
    // WR 2 RetryExceeded, WR 3 flushed, the receive flushed later on ERR.
    s.card.send_cqe(cqn, q, 0, &d[0], CqStatus::Success);
    s.card.send_cqe(cqn, q, 1, &d[1], CqStatus::RetryExceeded);
    assert_eq!(
        s.cq.poll_cq().unwrap().map(|w| (w.wr_id, w.status)),
        Some((1, CqStatus::Success))
    );
    assert_eq!(
        s.cq.poll_cq().unwrap().map(|w| (w.wr_id, w.status)),
        Some((2, CqStatus::RetryExceeded))
    );
    assert_eq!(
        s.cq.poll_cq().unwrap().map(|w| (w.wr_id, w.status)),
        Some((3, CqStatus::Flushed))
    );
    assert_eq!(s.qp.state(), QpState::Error);
    assert_eq!(
        s.qp.post_write(&wr(&s.mr, 9, 0, 8)),
        Err(PostError::NotReady(QpState::Error))
    );
    // A late CQE for the QP in error is dropped and counted.
    s.card.send_cqe(cqn, q, 2, &d[2], CqStatus::Success);
    assert_eq!(s.cq.poll_cq(), Ok(None));
    assert_eq!(s.cq.stale_entries(), 1);
    s.qp.modify(QpTransition::Error).unwrap();
    assert_eq!(
        s.cq.poll_cq().unwrap(),
        Some(WorkCompletion {
            wr_id: 50,
            status: CqStatus::Flushed,
            opcode: WcOpcode::RecvWriteImm,
            qp: q,
            byte_len: 0,
            imm: None
        })
    );
    // The send context was rewritten disabled.
    assert!(!s.card.sq_ctx(q).enable);
    // Back to work through RST.
    s.qp.modify(QpTransition::Reset).unwrap();
    s.qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    s.qp.modify(QpTransition::Rtr(rtr_attr())).unwrap();
    let before = s.dev.rows().len();
    // A smaller EV set this time: the slots the first set used beyond it
    // go back to value 0, everything is allowed again, then value 0 denied.
    s.qp.modify(QpTransition::Rts(RtsAttr {
        evs: EvProfile {
            values: vec![0x2000, 0x2001, 0x2002],
            min_active: 1,
        },
        ..rts_attr()
    }))
    .unwrap();
    let ev_rows: Vec<CfgRow> = s
        .dev
        .rows()
        .into_iter()
        .skip(before)
        .filter(|r| r.table == cfg_table::EV)
        .collect();
    let q16 = q as u16;
    let values: Vec<(u16, u64)> = ev_rows
        .iter()
        .filter(|r| r.index & 0x8000 == 0)
        .map(|r| (r.index, field(r, contract::config::ev_value::VALUE)))
        .collect();
    let want: Vec<(u16, u64)> = (0..8u16)
        .map(|i| (q16 << 7 | i, if i < 3 { 0x2000 + u64::from(i) } else { 0 }))
        .collect();
    assert_eq!(values, want);
    let ctl: Vec<(u64, u64, u64)> = ev_rows
        .iter()
        .filter(|r| r.index & 0x8000 != 0)
        .map(ev_control)
        .collect();
    assert_eq!(
        ctl,
        vec![(0, 0, 1), (ALL_EV_BITS, 0, 0)],
        "allow all, then deny the unused slots"
    );
    assert!(s.card.sq_ctx(q).enable);
    s.card.sq_ci[q as usize] = 0; // the card's send state restarts with the context
    s.qp.post_write(&wr(&s.mr, 60, 0, 8)).unwrap();
    let d = s.card.fetch(q);
    s.card.send_cqe(cqn, q, 0, &d[0], CqStatus::Success);
    assert_eq!(s.cq.poll_cq().unwrap().map(|w| w.wr_id), Some(60));
}

#[test]
fn user_error_transition_flushes_sends_then_receives() {
    let mut s = setup(4, 5);
    for i in 1..=3 {
        s.qp.post_write(&wr(&s.mr, i, 0, 8)).unwrap();
    }
    s.qp.post_recv(40).unwrap();
    s.qp.modify(QpTransition::Error).unwrap();
    let mut got = vec![];
    s.cq.poll_batch(&mut got, 10).unwrap();
    let ids: Vec<_> = got.iter().map(|w| (w.wr_id, w.status, w.opcode)).collect();
    assert_eq!(
        ids,
        vec![
            (1, CqStatus::Flushed, WcOpcode::Write),
            (2, CqStatus::Flushed, WcOpcode::Write),
            (3, CqStatus::Flushed, WcOpcode::Write),
            (40, CqStatus::Flushed, WcOpcode::RecvWriteImm)
        ]
    );
    assert_eq!(s.qp.outstanding(), 0);
    assert!(matches!(
        s.qp.modify(QpTransition::Rts(rts_attr())),
        Err(ModifyError::BadTransition {
            from: QpState::Error,
            ..
        })
    ));
}

#[test]
fn memory_regions_get_distinct_slots_and_fresh_keys() {
    let s = setup(2, 2);
    let buf = s.pd.alloc_buffer(8192).unwrap();
    let a = s.pd.register(&buf, Access::RemoteWrite).unwrap();
    let b = s.pd.register(&buf, Access::RemoteWrite).unwrap();
    let (ka, kb) = (a.rkey().unwrap(), b.rkey().unwrap());
    assert_ne!(
        ka & 0xFF,
        kb & 0xFF,
        "live regions have distinct low bytes (direct-mapped MR table)"
    );
    let row = s.dev.last_row(cfg_table::MR, (ka & 0xFF) as u16).unwrap();
    assert_eq!(
        (row.bits(0, 32), row.bits(32, 64), row.bits(96, 64), row.bits(160, 1)),
        (u64::from(ka), buf.iova(), 8192, 1)
    );
    assert_eq!(a.remote_va(), buf.iova());
    assert_eq!(s.mr.rkey(), None, "local-only regions have no rkey");
    drop(a);
    let row = s.dev.last_row(cfg_table::MR, (ka & 0xFF) as u16).unwrap();
    assert_eq!(row.bits(160, 1), 0, "deregistered on drop");
    let c = s.pd.register(&buf, Access::RemoteWrite).unwrap();
    let kc = c.rkey().unwrap();
    assert_eq!(kc & 0xFF, ka & 0xFF, "the freed slot is reused");
    assert_ne!(kc, ka, "with a new key: a stale rkey misses");
    // 256 slots: the 257th live region is refused.
    let mut live = vec![b, c];
    loop {
        match s.pd.register(&buf, Access::RemoteWrite) {
            Ok(m) => live.push(m),
            Err(Error::Exhausted(what)) => {
                assert_eq!(what, "memory-region slot");
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(live.len(), 256);
}

#[test]
fn controller_reads_events_and_writes_deny_allow_rows() {
    let mut s = setup(2, 2);
    let q = s.qp.qpn();
    let mut c = s.ctx.controller(2).unwrap();
    assert!(matches!(s.ctx.controller(2), Err(Error::ControllerBusy)));
    assert_eq!(c.poll_event(), Ok(None));
    let ev = EvEvent {
        phase: false,
        new_state: EvNewState::AssumedBad,
        reason: EvReason::Loss,
        qp: q,
        ev: 0,
        ev_index: 3,
        time_ns: 1234,
    };
    for k in 0..6 {
        s.card.event(EvEvent { ev_index: k, ..ev });
        let got = c.poll_event().unwrap().unwrap();
        assert_eq!(
            (got.ev_index, got.new_state, got.reason, got.time_ns),
            (k, EvNewState::AssumedBad, EvReason::Loss, 1234)
        );
    }
    s.card.event(EvEvent { qp: 77, ..ev });
    assert_eq!(c.poll_event(), Err(driver::verbs::EventError::UnknownQp(77)));
    let mut raw = ev.encode().unwrap();
    raw[1] = 9;
    let (base, log2) = s.card.ring_row(cfg_table::EV_RING, 0);
    raw[0] = (1 - ((s.card.ev_pi >> log2) & 1)) as u8;
    assert!(s.dev.dma_write(base + 16 * u64::from(s.card.ev_pi & 3), &raw));
    s.card.ev_pi += 1;
    assert!(matches!(c.poll_event(), Err(driver::verbs::EventError::Malformed(_))));
    assert_eq!(c.poll_event(), Ok(None));
    // The consumer index went back to the card (4-slot ring: every entry).
    assert_eq!(
        s.dev
            .last_row(cfg_table::EV_RING, contract::config::INDEX_SELECT)
            .unwrap()
            .bits(0, 32),
        8
    );

    let ctl = contract::config::INDEX_SELECT | q as u16;
    c.deny(&s.qp, 0xFFF0, 0x1000);
    let r = s.dev.last_row(cfg_table::EV, ctl).unwrap();
    assert_eq!(ev_control(&r), (0xFFF0, 0x1000, 0));
    c.allow(&s.qp, 0xFFFF, 0x1003);
    let r = s.dev.last_row(cfg_table::EV, ctl).unwrap();
    assert_eq!(ev_control(&r), (0xFFFF, 0x1003, 1));
    s.dev.clear_log();
    c.readmit(&s.qp, 0x1005);
    let rows = s.dev.rows();
    assert_eq!(rows.len(), 2);
    assert_eq!(ev_control(&rows[0]), (ALL_EV_BITS, 0x1005, 0), "deny first");
    assert_eq!(ev_control(&rows[1]), (ALL_EV_BITS, 0x1005, 1), "then allow");
    // An allow that matches value 0 re-denies the unused slots.
    s.dev.clear_log();
    c.allow(&s.qp, 0, 0);
    let rows = s.dev.rows();
    assert_eq!(rows.len(), 2);
    assert_eq!(ev_control(&rows[1]), (ALL_EV_BITS, 0, 0), "unused slots denied again");
    drop(c);
    assert!(
        s.ctx.controller(2).is_ok(),
        "one controller at a time, reopened after drop"
    );
}

#[test]
fn surprise_removal_and_lost_rows_are_typed_errors() {
    let dev = Arc::new(MockDevice::new());
    dev.set_all_ones(true);
    assert!(matches!(
        Context::open(dev.clone(), &OpenOptions::default()),
        Err(Error::Discovery(DiscoveryError::AllOnes { offset: 0 }))
    ));
    dev.set_all_ones(false);
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).unwrap();
    let pd = ctx.alloc_pd();
    let mut cq = ctx.create_cq(3).unwrap();
    let mut qp = pd.create_qp(&mut cq, 3).unwrap();
    qp.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    qp.modify(QpTransition::Rtr(rtr_attr())).unwrap();
    // The card disappears: the move to RTS reads back the row count.
    dev.set_all_ones(true);
    assert!(matches!(
        qp.modify(QpTransition::Rts(rts_attr())),
        Err(ModifyError::Config(config::ConfigError::DeviceGone))
    ));
    assert_eq!(qp.state(), QpState::Rtr);
    assert!(matches!(ctx.sync(), Err(config::ConfigError::DeviceGone)));
    // Counters read all-ones too; a poll of an empty CQ needs no MMIO.
    assert_eq!(ctx.counter("completion").unwrap(), u32::MAX);
    assert_eq!(cq.poll_cq(), Ok(None));
    dev.set_all_ones(false);
    // A card that drops config rows.
    let dev = Arc::new(MockDevice::new());
    let ctx = Context::open(dev.clone(), &OpenOptions::default()).unwrap();
    dev.set_swallow_rows(true);
    ctx.set_ack_params(4, 2000);
    assert!(matches!(ctx.sync(), Err(config::ConfigError::RowsLost { .. })));
    // A mismatched bitstream is refused at open.
    let dev = Arc::new(MockDevice::new());
    dev.override_reg(u64::from(contract::regmap::doorbell::BASE) + 4, 0x0002_0000);
    let e = Context::open(dev, &OpenOptions::default()).err().unwrap();
    assert!(
        matches!(
            e,
            Error::Discovery(DiscoveryError::VersionMismatch { name: "doorbell", .. })
        ),
        "{e}"
    );
}

#[test]
fn counters_by_name_and_resource_limits() {
    let s = setup(2, 2);
    let slot = contract::regmap::counter_slot("retransmit");
    s.dev.set_counter(slot, 42);
    assert_eq!(s.ctx.counter("retransmit").unwrap(), 42);
    assert!(matches!(s.ctx.counter("no_such"), Err(Error::UnknownCounter(_))));
    // A bitstream with fewer counters than this driver knows.
    s.dev.override_reg(
        u64::from(contract::regmap::counters::BASE + contract::regmap::counters::NUM),
        4,
    );
    let ctx2 = Context::open(s.dev.clone(), &OpenOptions::default()).unwrap();
    assert!(matches!(
        ctx2.counter("retransmit"),
        Err(Error::CounterAbsent { slot: 9, num: 4, .. })
    ));
    // 256 QPs, 256 CQs (one CQ and one QP are taken by the setup; QP 2,
    // MRC 1.0's endpoint QPN, is never given out).
    let pd = s.ctx.alloc_pd();
    let mut cqs = vec![];
    while let Ok(cq) = s.ctx.create_cq(0) {
        cqs.push(cq);
    }
    assert_eq!(cqs.len(), 255);
    let mut qps = vec![];
    while let Ok(qp) = pd.create_qp(&mut cqs[0], 1) {
        qps.push(qp);
    }
    assert_eq!(qps.len(), 254);
    assert!(qps.iter().all(|q| q.wire_qpn() != 2), "no QP is the endpoint's");
    assert!(matches!(
        pd.create_qp(&mut cqs[0], 1),
        Err(Error::Exhausted("queue pair"))
    ));
    qps.pop();
    assert!(pd.create_qp(&mut cqs[0], 1).is_ok(), "a dropped QP frees its number");
    assert!(
        matches!(pd.create_qp(&mut cqs[0], 17), Err(Error::Ring(_))),
        "the card takes SQs of 2^0..=2^16 slots"
    );
}

#[test]
fn two_qps_share_a_cq_and_are_checked_against_their_own_queues() {
    let mut s = setup(3, 5);
    let mut qp2 = s.pd.create_qp(&mut s.cq, 2).unwrap();
    qp2.modify(QpTransition::Init { pkey: 0xFFFF }).unwrap();
    qp2.modify(QpTransition::Rtr(RtrAttr {
        dest_qp: 0x66,
        ..rtr_attr()
    }))
    .unwrap();
    qp2.modify(QpTransition::Rts(rts_attr())).unwrap();
    let (q1, q2) = (s.qp.qpn(), qp2.qpn());
    assert_ne!(q1, q2);
    // Both QPs talk to the same peer: one address row, shared.
    assert_eq!(s.card.sq_ctx(q1).addr_index, s.card.sq_ctx(q2).addr_index);
    assert_eq!(s.card.sq_ctx(q2).cq_index, s.cq.cqn());
    for i in 0..3 {
        s.qp.post_write(&wr(&s.mr, 100 + i, 0, 8)).unwrap();
        qp2.post_write(&wr(&s.mr, 200 + i, 0, 8)).unwrap();
    }
    let d1 = s.card.fetch(q1);
    let d2 = s.card.fetch(q2);
    let cqn = s.cq.cqn();
    // Interleaved; QP 2's index 0 carrying QP 1's wr_id is refused.
    s.card.send_cqe(cqn, q2, 0, &d1[0], CqStatus::Success);
    assert!(matches!(s.cq.poll_cq(), Err(CqError::Mismatch { field: "wr_id", .. })));
    let mut want = vec![];
    for i in 0..3 {
        s.card.send_cqe(cqn, q1, i as u32, &d1[i], CqStatus::Success);
        s.card.send_cqe(cqn, q2, i as u32, &d2[i], CqStatus::Success);
        want.extend([(q1, 100 + i as u64), (q2, 200 + i as u64)]);
    }
    let mut got = vec![];
    s.cq.poll_batch(&mut got, 100).unwrap();
    assert_eq!(got.iter().map(|w| (w.qp, w.wr_id)).collect::<Vec<_>>(), want);
    assert_eq!((s.qp.outstanding(), qp2.outstanding()), (0, 0));
    // A dropped QP's number is unknown to the CQ from then on.
    drop(qp2);
    s.card.send_cqe(cqn, q2, 3, &d2[0], CqStatus::Success);
    assert_eq!(s.cq.poll_cq(), Err(CqError::UnknownQp(q2)));
}
