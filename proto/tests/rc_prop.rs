//! Property test of the RC baseline: under random loss, reordering and
//! duplication (both directions, ACKs included) every message arrives
//! exactly once, byte-identical, sends and WRITE-IMM receives complete in
//! order, nothing panics and, with infinite retries, no QP fails.

mod rc_util;

use proptest::prelude::*;
use proto::model::*;
use proto::{Instant, Psn};
use rc_util::*;

const SLOT: u64 = 8192;

#[derive(Clone, Debug)]
struct Msg {
    len: usize,
    imm: bool,
}

fn msgs() -> impl Strategy<Value = Vec<Msg>> {
    prop::collection::vec(
        (0usize..5000, any::<bool>()).prop_map(|(len, imm)| Msg { len, imm }),
        1..12,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn delivers_exactly_once_in_order(
        seed in any::<u64>(),
        loss in 0.0f64..0.3,
        reorder in 0.0f64..0.3,
        dup in 0.0f64..0.1,
        mtu in prop_oneof![Just(256u32), Just(1024u32)],
        ack_every in 1u16..8,
        psn0 in prop_oneof![Just(0xFF_FF00u32), 0u32..(1 << 24)],
        a_to_b in msgs(),
        b_to_a in msgs(),
    ) {
        let setup = Setup {
            mtu,
            ack_every,
            sq_psn: [Psn::new(psn0), Psn::new(psn0 ^ 0x5A5A5A)],
            retry_exp: RETRY_INFINITE,
            ..Setup::default()
        };
        let mut p = Pair::new(setup, seed);
        p.loss = loss;
        p.reorder = reorder;
        p.dup = dup;
        let plan = [a_to_b, b_to_a];
        // Post half the receives up front, the rest after the run, so some
        // WRITE-IMMs are held until a receive arrives.
        let mut imms = [Vec::new(), Vec::new()];
        for (side, list) in plan.iter().enumerate() {
            for (i, m) in list.iter().enumerate() {
                let data = pattern(m.len, (side * 64 + i) as u8);
                let imm = m.imm.then_some(((side as u32) << 16) | i as u32);
                if let Some(v) = imm {
                    imms[1 - side].push((v, m.len as u32));
                }
                p.qp[side].post_write(p.now, write(i as u64, &data, i as u64 * SLOT, imm)).unwrap();
            }
        }
        let early = [imms[0].len() / 2, imms[1].len() / 2];
        for (side, n) in early.iter().enumerate() {
            for r in 0..*n {
                p.qp[side].post_recv(1000 + r as u64).unwrap();
            }
        }
        prop_assert!(p.run_until(Instant::from_us(60_000_000)), "did not go idle");
        for side in 0..2 {
            for r in early[side]..imms[side].len() {
                p.qp[side].post_recv(1000 + r as u64).unwrap();
            }
            while let Some(e) = p.qp[side].poll_event() {
                p.events[side].push(e);
            }
        }
        prop_assert!(p.rx_errors.is_empty(), "unexpected drops: {:?}", p.rx_errors);
        for (side, list) in plan.iter().enumerate() {
            let peer = 1 - side;
            prop_assert_eq!(p.qp[side].state(), QpState::Rts);
            let sc = p.send_completions(side);
            let want: Vec<(u64, WcStatus, u32)> =
                (0..list.len()).map(|i| (i as u64, WcStatus::Success, list[i].len as u32)).collect();
            let got: Vec<(u64, WcStatus, u32)> = sc.iter().map(|c| (c.wr_id, c.status, c.len)).collect();
            prop_assert_eq!(got, want);
            for (i, m) in list.iter().enumerate() {
                let data = pattern(m.len, (side * 64 + i) as u8);
                prop_assert_eq!(p.mem(peer, i as u64 * SLOT, m.len), data, "message {} of side {}", i, side);
            }
            let rc = p.recv_completions(peer);
            let got: Vec<(u64, Option<u32>, u32)> = rc.iter().map(|c| (c.wr_id, c.imm, c.len)).collect();
            let want: Vec<(u64, Option<u32>, u32)> =
                imms[peer].iter().enumerate().map(|(r, (v, len))| (1000 + r as u64, Some(*v), *len)).collect();
            prop_assert_eq!(got, want);
            let c = p.qp[side].counters();
            prop_assert_eq!(c.messages_completed, list.len() as u64);
            prop_assert_eq!(
                c.retransmitted_packets,
                c.retx_go_back_n + c.retx_timeout
            );
            // Exactly once: the peer accepted each packet once.
            let pkts: u64 = list.iter().map(|m| (m.len as u64).div_ceil(mtu as u64).max(1)).sum();
            prop_assert_eq!(p.qp[peer].counters().rx_data_packets, pkts);
        }
    }
}

fn arb_packet() -> impl Strategy<Value = proto::wire::RocePacket> {
    use proto::wire::*;
    let op = prop_oneof![
        Just(Opcode::WriteFirst),
        Just(Opcode::WriteMiddle),
        Just(Opcode::WriteLast),
        Just(Opcode::WriteLastImm),
        Just(Opcode::WriteOnly),
        Just(Opcode::WriteOnlyImm),
        Just(Opcode::Ack),
        Just(Opcode::Cnp),
    ];
    let syn = prop_oneof![
        (0u8..32).prop_map(|c| Syndrome::Ack { credits: c }),
        (0u8..32).prop_map(|c| Syndrome::Nak { code: c }),
        (0u8..32).prop_map(|t| Syndrome::Rnr { timer: t }),
        any::<u8>().prop_map(Syndrome::Reserved),
    ];
    (
        op,
        prop_oneof![Just(QPN[0]), any::<u32>()],
        // PSNs near both sides' sequence numbers, or anywhere.
        prop_oneof![90u32..140, 4990u32..5040, 0u32..(1 << 24)],
        any::<(bool, bool, bool, bool)>(),
        prop::option::of((
            prop_oneof![Just(VA), any::<u64>()],
            prop_oneof![Just(RKEY), any::<u32>()],
            0u32..5000,
        )),
        prop::option::of(any::<u32>()),
        prop::option::of((syn, any::<u32>())),
        0usize..1100,
    )
        .prop_map(
            |(opcode, dest_qp, psn, (ce, trim, ack_req, x), reth, imm, aeth, len)| RocePacket {
                ev: 1,
                ecn_ce: ce,
                trimmed: trim,
                bth: BthRepr {
                    opcode,
                    solicited: false,
                    mig_req: true,
                    pad: 0,
                    pkey: 0xFFFF,
                    fecn: false,
                    becn: false,
                    mrc_ext: x && len % 7 == 0,
                    dest_qp,
                    ack_req,
                    psn: Psn::new(psn),
                },
                reth: reth.map(|(va, rkey, dma_len)| RethRepr { va, rkey, dma_len }),
                imm,
                aeth: aeth.map(|(syndrome, msn)| AethRepr { syndrome, msn }),
                ext: None,
                payload: bytes::Bytes::from(vec![0xAB; len]),
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Arbitrary packets, timers and posts never panic and never break the
    /// counters' promise: every `Err` is one counted drop.
    #[test]
    fn arbitrary_input_never_panics(pkts in prop::collection::vec((arb_packet(), 0u64..40), 1..80)) {
        let mut p = Pair::new(Setup { mtu: 1024, ..Setup::default() }, 1);
        p.qp[0].post_write(p.now, write(1, &pattern(5000, 1), 0, Some(3))).unwrap();
        p.qp[0].post_recv(1).unwrap();
        let mut errs = 0u64;
        for (pkt, dt) in pkts {
            p.now += proto::Duration::from_us(dt);
            while p.qp[0].poll_transmit(p.now).map(roce).is_some() {}
            if p.qp[0].poll_timeout().is_some_and(|t| t <= p.now) {
                p.qp[0].handle_timeout(p.now);
            }
            if p.qp[0].handle_packet(p.now, pkt.into()).is_err() {
                errs += 1;
            }
            let _ = p.qp[0].poll_event();
        }
        prop_assert_eq!(p.qp[0].counters().drops(), errs);
    }
}
