//! Several QP pairs sharing one link (`proto::loopback::pairs`): the
//! packets of one pair wait behind the other pairs' windows in the link's
//! serialisation queue. That is queueing, not loss: on a lossless link no
//! packet may be declared lost (docs/model-mrc.md 2.5.1 and 2.5.2).

use proto::loopback::pairs::{run_pairs, PairSpec};
use proto::loopback::{message_data, MessageSpec, Scenario, REFUSED_RKEY, REGION_RKEY, REGION_VA};
use proto::model::cc::CcConfig;
use proto::model::Transport;
use proto::time::Duration;

/// Pairs sharing the link: as many as the co-simulation's `16-qps`.
const PAIRS: usize = 16;
/// Messages each pair writes.
const MESSAGES_PER_PAIR: usize = 12;
/// Messages each pair keeps in flight (the co-simulation's default).
const IN_FLIGHT: usize = 4;
/// Largest message: 8 packets of 1 KiB, so 16 pairs x 4 messages queue
/// up to about 46 us of frames at 100 Gb/s.
const MAX_MESSAGE: u32 = 8 * 1024;
/// RTO exponent 6 (65.5 us): longer than the deepest queue, so only loss
/// inference could resend.
const TIMEOUT_EXP: u8 = 6;

/// Pair `q` of the run: its own QP numbers, PSN range and messages.
fn pair(transport: Transport, q: usize) -> PairSpec {
    let messages: Vec<MessageSpec> = (0..MESSAGES_PER_PAIR)
        .map(|i| MessageSpec {
            // Sizes spread over 1 byte .. MAX_MESSAGE, different per pair.
            len: 1 + ((q * MESSAGES_PER_PAIR + i) as u32 * 2_971) % MAX_MESSAGE,
            imm: (i % 3 == 0).then_some(i as u32),
        })
        .collect();
    let mut s = Scenario::new(transport, 8, messages)
        .with_start_psn((q as u32) << 16)
        .with_mpr(2)
        .with_timeouts(TIMEOUT_EXP, 7, 7)
        .with_cc(CcConfig::Fixed { window: 1 << 20 });
    let shift = (q as u32) << 8;
    let (a, b) = (s.a.cfg.qpn + shift, s.b.cfg.qpn + shift);
    for (ep, own, peer) in [(&mut s.a, a, b), (&mut s.b, b, a)] {
        ep.cfg.mtu = 1024;
        ep.cfg.ack_every = 4;
        ep.cfg.ack_delay = Duration::from_ns(1_000);
        ep.cfg.qpn = own;
        ep.rtr.dest_qp = peer;
        ep.cfg.seed = u64::from(own);
        ep.rts.evs.seed = u64::from(own);
        // No EV probes during the run: nothing is marked on a lossless link.
        ep.rts.evs.probe_interval = Duration::from_ms(10);
    }
    for l in [&mut s.link_ab, &mut s.link_ba] {
        l.base_delay = Duration::from_ns(1_000);
        l.ev_delay_spread = Duration::from_ns(500);
        l.jitter = Duration::from_ns(200);
        l.line_rate_gbps = Some(100.0);
    }
    s.max_outstanding = Some(IN_FLIGHT);
    s.seed = 1;
    PairSpec {
        data: s
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| message_data(s.seed + q as u64, i, m.len))
            .collect(),
        scenario: s,
        region_va: REGION_VA,
        rkey: REGION_RKEY,
        refused_rkey: REFUSED_RKEY,
    }
}

/// Tail probes a pair may send on the lossless link: the tail check finds
/// the first pair's packets aged without evidence at most this often (each
/// probe resends one packet and blames nothing).
const TAIL_PROBES_MAX: u64 = 2;

/// On a lossless link shared by 16 pairs, nothing is declared lost: the
/// first pair samples an idle link's RTT, then its next packets wait behind
/// the other 15 pairs' windows far longer than that RTT suggests; nothing
/// acknowledged was sent after them, so nothing says they were lost. The
/// tail check only probes (one packet resent, no EV blamed).
fn pairs_sharing_a_lossless_link_resend_nothing(transport: Transport) {
    let reports = run_pairs((0..PAIRS).map(|q| pair(transport, q)).collect()).unwrap();
    for (q, r) in reports.iter().enumerate() {
        assert!(r.ok, "{transport:?} pair {q}: {r:?}");
        assert_eq!(r.link_ab.lost + r.link_ba.lost, 0, "the link loses nothing");
        let c = &r.counters_a;
        assert_eq!(
            (c.retx_loss_inferred, c.retx_timeout, c.rto_fired, r.ev_changes.len()),
            (0, 0, 0, 0),
            "{transport:?} pair {q}: losses inferred, timeouts, RTOs and EV changes on a lossless link"
        );
        assert!(
            c.retransmitted_packets <= TAIL_PROBES_MAX,
            "{transport:?} pair {q}: {} resends",
            c.retransmitted_packets
        );
    }
    // The pairs did queue behind each other: the last to finish took far
    // longer than one pair alone.
    let alone = run_pairs(vec![pair(transport, 0)]).unwrap().remove(0);
    let slowest = reports.iter().map(|r| r.completion_time_ps).max().unwrap();
    assert!(
        slowest > 4 * alone.completion_time_ps,
        "{slowest} vs {}",
        alone.completion_time_ps
    );
}

#[test]
fn legacy_pairs_sharing_a_lossless_link_resend_nothing() {
    pairs_sharing_a_lossless_link_resend_nothing(Transport::MrcLegacy);
}

#[test]
fn mrc_pairs_sharing_a_lossless_link_resend_nothing() {
    pairs_sharing_a_lossless_link_resend_nothing(Transport::Mrc);
}
