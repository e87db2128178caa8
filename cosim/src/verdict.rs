//! The verdict of a named scenario (`mrc cosim --scenario`): the
//! scoreboard, the delivery compared with the golden model's, and the
//! comparisons judged: retransmissions and EVs marked ASSUMED_BAD close to
//! the model's (or within a named allowance, with its reason), QP errors
//! only where the scenario expects them.
//!
//! The rule of "close" ([`close`]): within 10% of the model's count or
//! within [`SLACK`] counts, whichever is larger. 10% of a count of 1 to 20
//! is below one event; the hardware and the model run different schedules
//! (the hardware's DMA, RX path and retransmit engine take time the model
//! does not spend), so one ACK can cover a different set of packets, and a
//! packet can go out on an EV just before or just after it is marked: each
//! such difference is one resend or one mark. [`SLACK`] = 2 allows two of
//! them, and no more, at any scale.

use crate::system::{GoldenComparison, QpComparison, SystemReport};

/// Counts by which hardware and model may differ whatever the count:
/// two schedule-dependent events (module docs).
pub const SLACK: u64 = 2;
/// The relative tolerance.
pub const TOLERANCE: f64 = 0.10;

/// Whether `hw` is within 10% of `golden` or within [`SLACK`] counts,
/// whichever is larger.
pub fn close(hw: u64, golden: u64) -> bool {
    let limit = (TOLERANCE * golden as f64).max(SLACK as f64);
    hw.abs_diff(golden) as f64 <= limit
}

/// A compared figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Metric {
    /// A's retransmitted packets (`retransmit` counter; the model's
    /// `retransmitted_packets`).
    Resends,
    /// EV state changes to ASSUMED_BAD (A's EV-event ring; the model's
    /// `ev_changes`).
    EvMarkedBad,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Resends => "resends",
            Metric::EvMarkedBad => "EVs marked ASSUMED_BAD",
        }
    }
}

/// Which way the hardware may depart from the model under an allowance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Direction {
    /// The hardware may do less: `hw <= golden + SLACK` (and `hw >= 0`).
    Fewer,
    /// The hardware may mark more, up to one per EV of the QP plus one
    /// per EV it readmitted (an EV is marked again only after a probe
    /// brought it back): `hw <= evs + hw_readmitted`; and, net of each
    /// side's readmissions (the EVs left ASSUMED_BAD), at least the
    /// model's: `golden - golden_readmitted - SLACK <= hw -
    /// hw_readmitted`. Without probes (the legacy wire) that is
    /// `golden - SLACK <= hw <= evs`.
    MoreUpToEvs,
    /// Per QP only: how the figure splits among the QPs may differ (which
    /// QP's packets met a fault depends on the order the QPs are
    /// served), each QP's figure at most the model's total plus `SLACK`.
    /// The total is still judged, by the plain rule or another allowance
    /// of the metric.
    SplitAmongQps,
    /// The hardware may mark up to one EV per QP more than the model: each
    /// QP's own EV set meets the dead EV (the QPs share one link in the
    /// card and are served in turn, so every QP sends on the EV after it
    /// dies), where the model, running each pair alone, may have sent a
    /// pair's window before the failure: `golden - SLACK <= hw <= QPs`
    /// (per QP: at most 1).
    OnePerQp,
    /// Resends beyond the data packets the fabric's fault (a blackholed
    /// or flapping EV) dropped on the way from A to B, close to the
    /// model's beyond its own: each side resends every packet the fault
    /// swallowed, and how many it sends into the fault depends on when
    /// it marks and readmits the EV, not on its recovery. The drops are
    /// the fabric's count of every frame the fault swallowed, probes
    /// included, so the bound is loose by the probes it dropped. Totals
    /// only.
    BeyondFaultDrops,
}

/// What an allowance may weigh beside the figure it judges: the EVs each
/// side readmitted (probe answered, an EV event to GOOD with reason
/// PROBE_OK) and the data packets the fabric's fault dropped from A to B.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Beside {
    pub hw_readmitted: u64,
    pub golden_readmitted: u64,
    pub hw_fault_drops: u64,
    pub golden_fault_drops: u64,
}

/// A named departure from "close" for one metric of one scenario, with
/// the reason written down. An allowance still bounds the figure: it can
/// fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Allowance {
    pub metric: Metric,
    pub direction: Direction,
    pub reason: &'static str,
}

impl Allowance {
    /// Whether the allowance admits `hw` against `golden`; `golden_total`
    /// is the model's figure over every QP (a per-QP judgement) or
    /// `golden` itself (the total's).
    /// `qps` is the number of QPs the figure covers (1 for a per-QP
    /// judgement).
    pub fn admits(&self, hw: u64, golden: u64, golden_total: u64, evs: u64, qps: u64, b: &Beside) -> bool {
        match self.direction {
            Direction::Fewer => hw <= golden + SLACK,
            Direction::MoreUpToEvs => {
                let (hw_net, golden_net) = (
                    hw.saturating_sub(b.hw_readmitted),
                    golden.saturating_sub(b.golden_readmitted),
                );
                hw_net + SLACK >= golden_net && hw <= evs + b.hw_readmitted
            }
            Direction::BeyondFaultDrops => close(
                hw.saturating_sub(b.hw_fault_drops),
                golden.saturating_sub(b.golden_fault_drops),
            ),
            Direction::SplitAmongQps => hw <= golden_total + SLACK,
            Direction::OnePerQp => hw + SLACK >= golden && hw <= qps,
        }
    }

    /// Whether it applies to the total (a split among QPs does not).
    pub fn judges_total(&self) -> bool {
        self.direction != Direction::SplitAmongQps
    }

    /// The figures beside the judged one that the allowance weighed, as
    /// a phrase (empty when it weighs none, or none moved).
    pub fn weighed(&self, b: &Beside) -> String {
        match self.direction {
            Direction::MoreUpToEvs if b.hw_readmitted + b.golden_readmitted > 0 => {
                format!(" [readmitted: hw {}, model {}]", b.hw_readmitted, b.golden_readmitted)
            }
            Direction::BeyondFaultDrops => format!(
                " [dropped by the fault A -> B: hw {}, model {}]",
                b.hw_fault_drops, b.golden_fault_drops
            ),
            _ => String::new(),
        }
    }

    /// Whether it applies per QP (the fault's drops are counted per link,
    /// not per QP).
    pub fn judges_qps(&self) -> bool {
        self.direction != Direction::BeyondFaultDrops
    }

    pub fn rule(&self) -> String {
        match self.direction {
            Direction::Fewer => format!("allowance: hw <= model + {SLACK}"),
            Direction::MoreUpToEvs => {
                format!("allowance: model - {SLACK} <= hw <= EVs of the QP, each side net of the EVs it readmitted")
            }
            Direction::SplitAmongQps => format!("allowance: hw <= the model's total + {SLACK}"),
            Direction::OnePerQp => format!("allowance: model - {SLACK} <= hw <= one per QP"),
            Direction::BeyondFaultDrops => format!(
                "allowance: hw - the packets the fault dropped within {:.0}% or {SLACK} of the model's same",
                100.0 * TOLERANCE
            ),
        }
    }
}

/// What a scenario expects beyond the default (everything close, no QP
/// error).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Expectations {
    pub allowances: &'static [Allowance],
    /// The scenario calls for a QP error (error completions): then both
    /// the hardware and the model must have one. Which one came first is
    /// part of the delivery check (`GoldenComparison::same_delivery`); the
    /// counts differ by design (the model's runner stops at the error,
    /// the driver flushes every message it posts).
    pub qp_error: bool,
}

/// The figures a verdict is made of (from a [`SystemReport`] and a
/// [`GoldenComparison`], or written by hand in a test).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Figures {
    /// EVs of A's QPs, all together (the bound of an allowance for
    /// more marks: no EV of a QP is marked twice).
    pub evs: u64,
    /// A's QPs (the bound of an allowance of one mark per QP).
    pub qps: u64,
    pub scoreboard_ok: bool,
    pub timed_out: bool,
    /// None without the golden model's run.
    pub same_delivery: Option<bool>,
    pub hw_resends: u64,
    pub golden_resends: Option<u64>,
    pub hw_marked_bad: u64,
    pub golden_marked_bad: Option<u64>,
    pub hw_qp_errors: u64,
    pub golden_qp_errors: Option<u64>,
    /// EVs readmitted and A -> B packets the fault dropped (0 for the
    /// model without its run).
    pub beside: Beside,
}

impl Figures {
    /// `evs`: the EVs of each QP.
    pub fn of(evs: u16, hw: &SystemReport, golden: Option<&GoldenComparison>) -> Figures {
        Figures {
            evs: u64::from(evs) * hw.per_qp.len().max(1) as u64,
            qps: hw.per_qp.len().max(1) as u64,
            scoreboard_ok: hw.scoreboard.ok(),
            timed_out: hw.timed_out,
            same_delivery: golden.map(|g| g.same_delivery),
            hw_resends: hw.retransmissions,
            golden_resends: golden.map(|g| g.golden_retransmissions),
            hw_marked_bad: hw.ev_changes.iter().filter(|c| c.new_state == "assumed_bad").count() as u64,
            golden_marked_bad: golden.map(|g| g.golden_ev_marked_bad as u64),
            hw_qp_errors: hw.error_completions,
            golden_qp_errors: golden.map(|g| g.golden_error_completions as u64),
            beside: Beside {
                hw_readmitted: hw.ev_changes.iter().filter(|c| c.reason == "probe_ok").count() as u64,
                golden_readmitted: golden.map_or(0, |g| g.golden_ev_readmitted as u64),
                hw_fault_drops: hw.link_ab.iter().map(|p| p.blackholed).sum(),
                golden_fault_drops: golden.map_or(0, |g| g.golden_blackholed_ab),
            },
        }
    }
}

/// One pair's figures (a run of several QP pairs), hardware beside model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct QpFigures {
    /// A's QP number of the pair.
    pub qp: u8,
    pub same_delivery: bool,
    pub hw_resends: u64,
    pub golden_resends: u64,
    pub hw_marked_bad: u64,
    pub golden_marked_bad: u64,
    pub hw_readmitted: u64,
    pub golden_readmitted: u64,
}

impl QpFigures {
    pub fn of(c: &QpComparison) -> QpFigures {
        QpFigures {
            qp: c.a_qp,
            same_delivery: c.same_delivery,
            hw_resends: c.hw_resends,
            golden_resends: c.golden_resends,
            hw_marked_bad: c.hw_ev_marked_bad,
            golden_marked_bad: c.golden_ev_marked_bad,
            hw_readmitted: c.hw_ev_readmitted,
            golden_readmitted: c.golden_ev_readmitted,
        }
    }

    /// Every pair of a comparison.
    pub fn all(golden: Option<&GoldenComparison>) -> Vec<QpFigures> {
        golden.map_or_else(Vec::new, |g| g.per_qp.iter().map(QpFigures::of).collect())
    }
}

/// One judged comparison.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Check {
    pub what: &'static str,
    pub hw: u64,
    pub golden: Option<u64>,
    pub ok: bool,
    /// The rule applied, and an allowance's reason.
    pub rule: String,
}

/// A scenario's verdict: OK only when every check is.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub ok: bool,
    pub checks: Vec<Check>,
}

impl Verdict {
    /// The failed checks, one phrase each (empty when OK).
    pub fn failures(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| match c.golden {
                Some(g) => format!("{} {} vs model {} ({})", c.what, c.hw, g, c.rule),
                None => format!("{} ({})", c.what, c.rule),
            })
            .collect()
    }

    /// The allowances that were applied (the plain rule failed), each
    /// `allowance: bound: reason`.
    pub fn allowances(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| c.rule.starts_with("allowance"))
            .map(|c| c.rule.as_str())
            .collect()
    }
}

/// Judge a scenario's figures and, with more than one pair, each pair's
/// against its model pair: the same delivery, and resends and EVs marked
/// ASSUMED_BAD by the same rule as the totals (close, or the scenario's
/// allowance for the metric, bounded by the QP's EVs). A pair-level check
/// fails when any pair fails it; it names the worst pair and shows its
/// figures.
pub fn judge_qps(f: &Figures, qps: &[QpFigures], exp: &Expectations) -> Verdict {
    let mut v = judge(f, exp);
    if qps.len() < 2 {
        return v;
    }
    let evs_per_qp = f.evs / qps.len() as u64;
    let differ: Vec<String> = qps
        .iter()
        .filter(|q| !q.same_delivery)
        .map(|q| q.qp.to_string())
        .collect();
    v.checks.push(Check {
        what: "delivery per QP",
        hw: (qps.len() - differ.len()) as u64,
        golden: Some(qps.len() as u64),
        ok: differ.is_empty(),
        rule: if differ.is_empty() {
            "every QP delivered and completed the messages its model QP did".into()
        } else {
            format!("QPs {} differ from their model QPs", differ.join(", "))
        },
    });
    for (metric, what, pick) in [
        (
            Metric::Resends,
            "resends per QP",
            (|q: &QpFigures| (q.hw_resends, q.golden_resends)) as fn(&QpFigures) -> (u64, u64),
        ),
        (Metric::EvMarkedBad, "EVs marked per QP", |q: &QpFigures| {
            (q.hw_marked_bad, q.golden_marked_bad)
        }),
    ] {
        let allowances: Vec<&Allowance> = exp
            .allowances
            .iter()
            .filter(|a| a.metric == metric && a.judges_qps())
            .collect();
        let golden_total: u64 = qps.iter().map(|q| pick(q).1).sum();
        // Per pair: close, else the first allowance of the metric that
        // admits it (its index).
        let judged: Vec<(&QpFigures, bool, bool, Option<usize>)> = qps
            .iter()
            .map(|q| {
                let (hw, g) = pick(q);
                let plain = close(hw, g);
                let by = if plain {
                    None
                } else {
                    allowances.iter().position(|a| {
                        let b = Beside {
                            hw_readmitted: q.hw_readmitted,
                            golden_readmitted: q.golden_readmitted,
                            ..Beside::default()
                        };
                        a.admits(hw, g, golden_total, evs_per_qp, 1, &b)
                    })
                };
                (q, plain || by.is_some(), plain, by)
            })
            .collect();
        let failed: Vec<&(&QpFigures, bool, bool, Option<usize>)> = judged.iter().filter(|j| !j.1).collect();
        let allowed = judged.iter().filter(|j| j.1 && !j.2).count();
        // The pair shown: the first that failed, else the one furthest
        // from its model pair.
        let shown = failed.first().map(|j| j.0).unwrap_or_else(|| {
            qps.iter()
                .max_by_key(|q| {
                    let (hw, g) = pick(q);
                    hw.abs_diff(g)
                })
                .expect("two pairs or more")
        });
        let (hw, g) = pick(shown);
        let plain = format!("every QP within {:.0}% or {SLACK} counts", 100.0 * TOLERANCE);
        // The allowances used, each with how many pairs it admitted.
        let used: Vec<String> = allowances
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let n = judged.iter().filter(|j| j.3 == Some(i)).count();
                (n > 0).then(|| format!("{} ({n} of {} QPs under it): {}", a.rule(), qps.len(), a.reason))
            })
            .collect();
        let rule = if allowed > 0 {
            format!("{} (shown: QP {})", used.join("; "), shown.qp)
        } else {
            format!("{plain} (shown: QP {})", shown.qp)
        };
        v.checks.push(Check {
            what,
            hw,
            golden: Some(g),
            ok: failed.is_empty(),
            rule,
        });
    }
    v.ok = v.checks.iter().all(|c| c.ok);
    v
}

/// Judge a scenario's figures.
pub fn judge(f: &Figures, exp: &Expectations) -> Verdict {
    let mut checks = Vec::new();
    let qp_errors_expected = exp.qp_error && f.hw_qp_errors > 0;
    checks.push(Check {
        what: "scoreboard",
        hw: 0,
        golden: None,
        // A scenario that expects QP errors has error completions, which
        // the scoreboard counts as failures: judged below instead.
        ok: (f.scoreboard_ok || qp_errors_expected) && !f.timed_out,
        rule: if f.timed_out {
            "the run reached its cycle limit".into()
        } else {
            "exactly once, byte-identical, in order".into()
        },
    });
    if let Some(same) = f.same_delivery {
        checks.push(Check {
            what: "delivery as the model's",
            hw: 0,
            golden: None,
            ok: same,
            rule: "same messages delivered and completed".into(),
        });
    }
    for (metric, hw, golden) in [
        (Metric::Resends, f.hw_resends, f.golden_resends),
        (Metric::EvMarkedBad, f.hw_marked_bad, f.golden_marked_bad),
    ] {
        let Some(g) = golden else { continue };
        let plain = format!("within {:.0}% or {SLACK} counts", 100.0 * TOLERANCE);
        // An allowance applies only where the plain rule fails; of several
        // for the metric, the first that admits the figure (none: the
        // figure fails every one, and each is shown).
        let allowances: Vec<&Allowance> = exp
            .allowances
            .iter()
            .filter(|a| a.metric == metric && a.judges_total())
            .collect();
        let shown = |a: &Allowance| format!("{}{}: {}", a.rule(), a.weighed(&f.beside), a.reason);
        let (ok, rule) = if close(hw, g) || allowances.is_empty() {
            (close(hw, g), plain)
        } else {
            match allowances.iter().find(|a| a.admits(hw, g, g, f.evs, f.qps, &f.beside)) {
                Some(a) => (true, shown(a)),
                None => (
                    false,
                    allowances.iter().map(|a| shown(a)).collect::<Vec<_>>().join("; or "),
                ),
            }
        };
        checks.push(Check {
            what: metric.name(),
            hw,
            golden: Some(g),
            ok,
            rule,
        });
    }
    let (ok, rule) = if exp.qp_error {
        (
            f.hw_qp_errors > 0 && f.golden_qp_errors.is_none_or(|g| g > 0),
            "the scenario calls for a QP error: on both sides, the same first one (delivery)",
        )
    } else {
        (
            f.hw_qp_errors == 0 && f.golden_qp_errors.unwrap_or(0) == 0,
            "none (the scenario calls for none)",
        )
    };
    checks.push(Check {
        what: "QP errors",
        hw: f.hw_qp_errors,
        golden: f.golden_qp_errors,
        ok,
        rule: rule.into(),
    });
    Verdict {
        ok: checks.iter().all(|c| c.ok),
        checks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean() -> Figures {
        Figures {
            evs: 8,
            qps: 1,
            scoreboard_ok: true,
            timed_out: false,
            same_delivery: Some(true),
            hw_resends: 48,
            golden_resends: Some(50),
            hw_marked_bad: 1,
            golden_marked_bad: Some(1),
            hw_qp_errors: 0,
            golden_qp_errors: Some(0),
            beside: Beside::default(),
        }
    }

    /// With probes, an EV is marked again after each readmission: more
    /// marks than EVs pass when readmissions account for them, and the
    /// figures net of readmissions must still agree.
    #[test]
    fn more_marks_are_weighed_net_of_readmissions() {
        let allowed = Expectations {
            allowances: MORE_MARKS,
            qp_error: false,
        };
        // 34 marks on 8 EVs, 27 readmitted: 7 left bad (the model 0 of 0).
        let f = Figures {
            hw_marked_bad: 34,
            golden_marked_bad: Some(0),
            beside: Beside {
                hw_readmitted: 27,
                ..Beside::default()
            },
            ..clean()
        };
        assert!(judge(&f, &allowed).ok, "{:?}", judge(&f, &allowed));
        // Fewer readmissions than the marks beyond the EVs: beyond it.
        let f = Figures {
            beside: Beside {
                hw_readmitted: 25,
                ..Beside::default()
            },
            ..f
        };
        assert!(!judge(&f, &allowed).ok);
        // Fewer marks than the model, but as many left bad: admitted.
        let f = Figures {
            hw_marked_bad: 37,
            golden_marked_bad: Some(67),
            beside: Beside {
                hw_readmitted: 33,
                golden_readmitted: 64,
                ..Beside::default()
            },
            ..clean()
        };
        assert!(judge(&f, &allowed).ok, "{:?}", judge(&f, &allowed));
        // ... but not when the hardware left fewer bad than the model.
        let f = Figures {
            beside: Beside {
                hw_readmitted: 36,
                golden_readmitted: 60,
                ..Beside::default()
            },
            ..f
        };
        assert!(!judge(&f, &allowed).ok);
    }

    /// Resends judged beyond the packets the fault dropped.
    #[test]
    fn resends_beyond_the_faults_drops() {
        let allowed = Expectations {
            allowances: &[Allowance {
                metric: Metric::Resends,
                direction: Direction::BeyondFaultDrops,
                reason: "test",
            }],
            qp_error: false,
        };
        let f = Figures {
            hw_resends: 10,
            golden_resends: Some(3),
            beside: Beside {
                hw_fault_drops: 9,
                golden_fault_drops: 3,
                ..Beside::default()
            },
            ..clean()
        };
        assert!(judge(&f, &allowed).ok, "{:?}", judge(&f, &allowed));
        assert!(!judge(&f, &Expectations::default()).ok, "the plain rule fails it");
        // Three more resends than the fault explains: beyond.
        let f = Figures { hw_resends: 13, ..f };
        assert!(!judge(&f, &allowed).ok);
    }

    /// Two allowances of one metric: a figure either admits passes, under
    /// the one that admits it; one that neither admits fails, both shown.
    #[test]
    fn of_two_allowances_for_a_metric_either_admits() {
        const BEYOND: Allowance = Allowance {
            metric: Metric::Resends,
            direction: Direction::BeyondFaultDrops,
            reason: "beyond",
        };
        const FEWER: Allowance = Allowance {
            metric: Metric::Resends,
            direction: Direction::Fewer,
            reason: "fewer",
        };
        let allowed = Expectations {
            allowances: &[BEYOND, FEWER],
            qp_error: false,
        };
        let drops = Beside {
            hw_fault_drops: 36,
            golden_fault_drops: 38,
            ..Beside::default()
        };
        // 40 against 45: beyond the drops 4 against 7 (not close), fewer.
        let f = Figures {
            hw_resends: 40,
            golden_resends: Some(45),
            beside: drops,
            ..clean()
        };
        let only_beyond = Expectations {
            allowances: &[BEYOND],
            qp_error: false,
        };
        assert!(!judge(&f, &only_beyond).ok);
        let v = judge(&f, &allowed);
        assert!(v.ok, "{v:?}");
        assert!(v.checks.iter().any(|c| c.rule.ends_with(": fewer")), "{v:?}");
        // 46 against 41 with 43 and 36 dropped: beyond the drops 3 against
        // 5, close; not fewer.
        let f = Figures {
            hw_resends: 46,
            golden_resends: Some(41),
            beside: Beside {
                hw_fault_drops: 43,
                golden_fault_drops: 36,
                ..Beside::default()
            },
            ..clean()
        };
        let v = judge(&f, &allowed);
        assert!(v.ok, "{v:?}");
        assert!(v.checks.iter().any(|c| c.rule.ends_with(": beyond")), "{v:?}");
        // 60 against 41: neither.
        let f = Figures { hw_resends: 60, ..f };
        let v = judge(&f, &allowed);
        assert!(!v.ok);
        assert!(v.checks.iter().any(|c| c.rule.contains("beyond; or ")), "{v:?}");
    }

    const MORE_MARKS: &[Allowance] = &[Allowance {
        metric: Metric::EvMarkedBad,
        direction: Direction::MoreUpToEvs,
        reason: "test",
    }];

    #[test]
    fn close_is_ten_percent_or_two_counts() {
        assert!(close(0, 0) && close(2, 0) && !close(3, 0));
        assert!(close(3, 1) && !close(4, 1));
        assert!(close(110, 100) && close(90, 100) && !close(111, 100) && !close(89, 100));
        assert!(close(22, 20) && !close(23, 20));
    }

    #[test]
    fn a_clean_run_passes() {
        let v = judge(&clean(), &Expectations::default());
        assert!(v.ok, "{:?}", v.failures());
        assert!(v.failures().is_empty() && v.allowances().is_empty());
    }

    #[test]
    fn perturbed_comparisons_fail() {
        let none = Expectations::default();
        // Resends 20% apart.
        let f = Figures {
            hw_resends: 60,
            ..clean()
        };
        let v = judge(&f, &none);
        assert!(!v.ok);
        assert_eq!(v.failures().len(), 1, "{:?}", v.failures());
        assert!(v.failures()[0].starts_with("resends 60 vs model 50"));
        // EV marks 7 vs 1 without an allowance; with one, OK; beyond it not.
        let f = Figures {
            hw_marked_bad: 7,
            ..clean()
        };
        assert!(!judge(&f, &none).ok);
        let allowed = Expectations {
            allowances: MORE_MARKS,
            qp_error: false,
        };
        let v = judge(&f, &allowed);
        assert!(v.ok && v.allowances().len() == 1, "{v:?}");
        let f = Figures {
            hw_marked_bad: 9,
            ..clean()
        };
        assert!(!judge(&f, &allowed).ok, "beyond the allowance (more marks than EVs)");
        // An allowance for more does not admit fewer.
        let f = Figures {
            hw_marked_bad: 0,
            golden_marked_bad: Some(5),
            ..clean()
        };
        assert!(!judge(&f, &allowed).ok);
        // A QP error nobody expected; the scoreboard counted it too.
        let f = Figures {
            scoreboard_ok: false,
            hw_qp_errors: 1,
            ..clean()
        };
        assert!(!judge(&f, &none).ok);
        // Delivery differs, or timed out.
        assert!(
            !judge(
                &Figures {
                    same_delivery: Some(false),
                    ..clean()
                },
                &none
            )
            .ok
        );
        assert!(
            !judge(
                &Figures {
                    timed_out: true,
                    ..clean()
                },
                &none
            )
            .ok
        );
    }

    fn pairs() -> Vec<QpFigures> {
        (0..4)
            .map(|q| QpFigures {
                qp: 5 + q,
                same_delivery: true,
                hw_resends: 3,
                golden_resends: 3,
                hw_marked_bad: 1,
                golden_marked_bad: 1,
                hw_readmitted: 0,
                golden_readmitted: 0,
            })
            .collect()
    }

    #[test]
    fn every_pair_is_judged_against_its_model_pair() {
        let none = Expectations::default();
        // Four pairs of 8 EVs each.
        let clean = || Figures {
            evs: 32,
            qps: 4,
            ..clean()
        };
        let v = judge_qps(&clean(), &pairs(), &none);
        assert!(v.ok, "{:?}", v.failures());
        assert_eq!(v.checks.len(), judge(&clean(), &none).checks.len() + 3);
        // One pair only: the totals' checks alone.
        assert_eq!(judge_qps(&clean(), &pairs()[..1], &none), judge(&clean(), &none));
        // A pair delivered differently (its messages went to another QP).
        let mut p = pairs();
        p[2].same_delivery = false;
        let v = judge_qps(&clean(), &p, &none);
        assert!(!v.ok);
        assert!(v.failures()[0].contains("QPs 7 differ"), "{:?}", v.failures());
        // One pair's resends far from its model pair's, totals close.
        let mut p = pairs();
        p[1].hw_resends = 9;
        let v = judge_qps(&clean(), &p, &none);
        assert!(!v.ok);
        assert!(
            v.failures()[0].starts_with("resends per QP 9 vs model 3"),
            "{:?}",
            v.failures()
        );
        // Marks beyond the rule: an allowance admits them, up to the EVs.
        let mut p = pairs();
        p[3].hw_marked_bad = 7;
        assert!(!judge_qps(&clean(), &p, &none).ok);
        let allowed = Expectations {
            allowances: MORE_MARKS,
            qp_error: false,
        };
        let v = judge_qps(&clean(), &p, &allowed);
        assert!(v.ok && v.allowances().len() == 1, "{v:?}");
        p[3].hw_marked_bad = 9;
        assert!(!judge_qps(&clean(), &p, &allowed).ok);
    }

    /// Every QP marks the dead EV once where the model's pairs marked it
    /// once in all: admitted up to one mark per QP, in total and per QP.
    #[test]
    fn one_mark_per_qp_is_admitted_and_no_more() {
        let one_per_qp = Expectations {
            allowances: &[Allowance {
                metric: Metric::EvMarkedBad,
                direction: Direction::OnePerQp,
                reason: "test",
            }],
            qp_error: false,
        };
        let marks = |hw: u64| Figures {
            evs: 32,
            qps: 4,
            hw_marked_bad: hw,
            golden_marked_bad: Some(1),
            ..clean()
        };
        let mut p = pairs();
        for (q, g) in p.iter_mut().zip([0, 0, 0, 1]) {
            q.hw_marked_bad = 1;
            q.golden_marked_bad = g;
        }
        assert!(!judge_qps(&marks(4), &p, &Expectations::default()).ok);
        let v = judge_qps(&marks(4), &p, &one_per_qp);
        assert!(v.ok && v.allowances().len() == 1, "{v:?}");
        // A fifth mark is beyond one per QP.
        assert!(!judge_qps(&marks(5), &p, &one_per_qp).ok);
        // Per QP: two marks on one QP where its model pair made none.
        p[0].hw_marked_bad = 3;
        assert!(!judge_qps(&marks(4), &p, &one_per_qp).ok);
    }

    #[test]
    fn a_split_among_qps_admits_pairs_not_the_total() {
        let split = Expectations {
            allowances: &[Allowance {
                metric: Metric::Resends,
                direction: Direction::SplitAmongQps,
                reason: "test",
            }],
            qp_error: false,
        };
        let clean = || Figures {
            evs: 32,
            qps: 4,
            hw_resends: 12,
            golden_resends: Some(12),
            ..clean()
        };
        // The same 12 resends, split otherwise: 0, 0, 6, 6 against 3 each.
        let mut p = pairs();
        for (q, r) in p.iter_mut().zip([0, 0, 6, 6]) {
            q.hw_resends = r;
        }
        assert!(!judge_qps(&clean(), &p, &Expectations::default()).ok);
        let v = judge_qps(&clean(), &p, &split);
        assert!(v.ok && v.allowances().len() == 1, "{v:?}");
        // A pair beyond the model's total fails.
        p[3].hw_resends = 15;
        assert!(!judge_qps(&clean(), &p, &split).ok);
        // The total is judged by the plain rule: 24 against 12 fails.
        p[3].hw_resends = 6;
        let f = Figures {
            hw_resends: 24,
            ..clean()
        };
        let v = judge_qps(&f, &p, &split);
        assert!(!v.ok);
        assert!(
            v.failures()[0].starts_with("resends 24 vs model 12"),
            "{:?}",
            v.failures()
        );
    }

    #[test]
    fn expected_qp_errors_must_happen_on_both_sides() {
        let exp = Expectations {
            allowances: &[],
            qp_error: true,
        };
        let f = Figures {
            scoreboard_ok: false,
            hw_qp_errors: 3,
            golden_qp_errors: Some(3),
            ..clean()
        };
        assert!(judge(&f, &exp).ok);
        assert!(
            judge(&Figures { hw_qp_errors: 10, ..f }, &exp).ok,
            "the driver flushes more"
        );
        assert!(
            !judge(
                &Figures {
                    golden_qp_errors: Some(0),
                    ..f
                },
                &exp
            )
            .ok,
            "the model had none"
        );
        assert!(!judge(&clean(), &exp).ok, "no error where one was expected");
    }
}
