//! Several QP pairs over shared links (the golden model's side of a
//! co-simulated run with several QP pairs, `cosim::golden`): N pairs of
//! model QPs, A's QP `q` writing to B's QP `q`, over the same two links,
//! so their packets share each link's serialisation queue (as the
//! hardware's share the co-simulated fabric's). [`Scenario::run`] is the
//! same run with one pair: one runner ([`super::runner`]) serves both.
//!
//! Keyed loss (`LinkConfig::loss_keyed`) keys on (opcode, PSN, n-th
//! carriage) as the runner and `cosim::fabric` do; the QPs of a
//! co-simulated system (`cosim::system::SystemConfig`) start at PSNs far
//! apart (`SystemConfig::start_psn_of`), so no two QPs send the same PSN and
//! each packet keeps its own loss decision whichever QP sends first.

use super::pair::Pair;
use super::runner::Runner;
use crate::loopback::{message_data, Report, Scenario, REFUSED_RKEY, REGION_RKEY, REGION_VA};
use bytes::Bytes;

/// One QP pair of a multi-QP run: its scenario (setups, messages, start
/// PSN, refused message, `max_outstanding`) and the data of its messages.
/// The links, seed and time limit of the run are the first pair's.
pub struct PairSpec {
    pub scenario: Scenario,
    /// The bytes of each of the pair's messages (the hardware's: the
    /// message's global index picks its data).
    pub data: Vec<Bytes>,
    /// The region's base on B and its rkey (the pair's own region).
    pub region_va: u64,
    pub rkey: u32,
    /// The rkey the pair's `refused_message` carries (B has no region
    /// with it).
    pub refused_rkey: u32,
}

impl PairSpec {
    /// The pair of a one-pair scenario ([`Scenario::run`]): the scenario's
    /// messages with their data ([`message_data`]), the region at
    /// [`REGION_VA`] with [`REGION_RKEY`], the refused message with
    /// [`REFUSED_RKEY`].
    pub fn of_scenario(sc: &Scenario) -> PairSpec {
        PairSpec {
            data: sc
                .messages
                .iter()
                .enumerate()
                .map(|(i, m)| message_data(sc.seed, i, m.len))
                .collect(),
            scenario: sc.clone(),
            region_va: REGION_VA,
            rkey: REGION_RKEY,
            refused_rkey: REFUSED_RKEY,
        }
    }
}

/// Why a multi-QP model run cannot start.
#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    #[error("no QP pair to run")]
    NoPairs,
    #[error("a QP pair's setup is refused by the model: {0}")]
    Setup(String),
}

/// Run the pairs together over the first pair's links (seed, time limit):
/// one report per pair, in order.
pub fn run_pairs(pairs: Vec<PairSpec>) -> Result<Vec<Report>, GoldenError> {
    if pairs.is_empty() {
        return Err(GoldenError::NoPairs);
    }
    let pairs = pairs.into_iter().map(Pair::new).collect::<Result<Vec<_>, _>>()?;
    Ok(Runner::new(pairs).run())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loopback::{EvMatch, MessageSpec};
    use crate::model::Transport;
    use crate::time::{Duration, Instant};

    fn scenario(loss: f64, blackhole: bool) -> Scenario {
        let messages: Vec<MessageSpec> = (0..120)
            .map(|i| MessageSpec {
                len: 1 + (i * 977 % 3000),
                imm: (i % 3 == 0).then_some(i),
            })
            .collect();
        let mut s = Scenario::new(Transport::MrcLegacy, 8, messages)
            .with_start_psn(0xFF_FF00)
            .with_mpr(2);
        for l in [&mut s.link_ab, &mut s.link_ba] {
            l.loss = loss;
            l.loss_keyed = true;
            l.jitter = Duration::from_ns(200);
            l.line_rate_gbps = Some(100.0);
            if blackhole {
                l.blackholes = vec![(EvMatch::Index(3), Instant::from_us(20))];
            }
        }
        s.max_outstanding = Some(4);
        s.seed = 9;
        s
    }

    /// The second pair of a run: the same scenario on the next QP
    /// numbers, at PSNs far from the first pair's.
    fn next_pair(sc: &Scenario) -> Scenario {
        let mut other = sc.clone().with_start_psn(0x10_0000);
        for ep in [&mut other.a, &mut other.b] {
            ep.cfg.qpn += 1;
            ep.rtr.dest_qp += 1;
        }
        other
    }

    /// Two pairs share the link: each completes its own messages, and the
    /// run takes longer than one pair alone (the pairs queue behind each
    /// other at the line rate).
    #[test]
    fn two_pairs_share_the_link() {
        let one = scenario(0.0, false);
        let alone = run_pairs(vec![PairSpec::of_scenario(&one)]).unwrap().remove(0);
        let other = next_pair(&one);
        let both = run_pairs(vec![PairSpec::of_scenario(&one), PairSpec::of_scenario(&other)]).unwrap();
        assert!(both.iter().all(|r| r.ok && r.messages_completed == 120));
        assert!(both[0].completion_time_ps > alone.completion_time_ps);
        assert_eq!(both[0].link_ab.sent, alone.link_ab.sent * 2);
    }

    /// Paced pairs take turns on the link they share: while both have
    /// packets to send and no acknowledgement has come back, each hands
    /// over every other packet, and each pair's packets leave within a
    /// jumbo frame's time of being handed over.
    #[test]
    fn paced_pairs_take_turns_on_a_shared_link() {
        let mut one = Scenario::new(Transport::Mrc, 4, Scenario::messages(4, 65_536, 3));
        for l in [&mut one.link_ab, &mut one.link_ba] {
            l.line_rate_gbps = Some(100.0);
            l.base_delay = Duration::from_us(20);
        }
        one.paced = true;
        one.capture = true;
        let other = next_pair(&one);
        let reports = run_pairs(vec![PairSpec::of_scenario(&one), PairSpec::of_scenario(&other)]).unwrap();
        assert!(reports.iter().all(|r| r.ok), "{reports:?}");
        // A's first 40 us, both pairs' packets by the time they were handed.
        let quiet = Duration::from_us(40).as_ps();
        let mut handed: Vec<(u64, usize)> = reports
            .iter()
            .enumerate()
            .flat_map(|(k, r)| {
                r.captured
                    .iter()
                    .filter(|c| c.dir == crate::loopback::Dir::AtoB && c.at.as_ps() < quiet)
                    .map(move |c| (c.handed.as_ps(), k))
            })
            .collect();
        handed.sort();
        assert!(handed.len() > 100, "{} packets", handed.len());
        let repeats = handed.windows(2).filter(|w| w[0].1 == w[1].1).count();
        assert!(
            repeats <= 2,
            "{repeats} packets followed one of their own pair: {handed:?}"
        );
        let backlog = Duration::serialisation(crate::loopback::PACED_BACKLOG_BYTES, 100.0).as_ps();
        assert!(reports
            .iter()
            .flat_map(|r| &r.captured)
            .all(|c| c.at.as_ps() - c.handed.as_ps() <= backlog));
    }

    /// Duplicated and corrupted packets reach several pairs as they reach
    /// one: every pair still delivers its messages exactly once, the
    /// receivers drop the corrupted frames, and each pair's capture holds
    /// only its own packets.
    #[test]
    fn pairs_survive_duplication_and_corruption() {
        let mut one = scenario(0.01, true);
        for l in [&mut one.link_ab, &mut one.link_ba] {
            l.duplicate = 0.05;
            l.corrupt = 0.05;
        }
        one.capture = true;
        let other = next_pair(&one);
        let reports = run_pairs(vec![PairSpec::of_scenario(&one), PairSpec::of_scenario(&other)]).unwrap();
        for (r, sc) in reports.iter().zip([&one, &other]) {
            assert!(r.ok, "{r:?}");
            assert_eq!(r.messages_completed, 120);
            assert!(r
                .captured
                .iter()
                .all(|c| [sc.a.cfg.qpn, sc.b.cfg.qpn].contains(&c.pkt.dest_qp())));
        }
        let link = reports[0].link_ab;
        assert!(
            link.duplicated > 0 && link.corrupted > 0 && link.corrupted_dropped > 0,
            "{link:?}"
        );
    }
}
