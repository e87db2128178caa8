//! The timers of a queue pair, quinn-proto style: one enum names every
//! timer both models run, and each model's table of them says in one place
//! when a timer is due ([`Timers::deadline`]) and in one place what it does
//! ([`Timers::fire`]). [`poll_timeout`] and
//! [`handle_timeout`] are the only code that walks the timers, so a new
//! timer cannot be polled and forgotten (or fired and never polled).

use crate::time::Instant;

/// Every timer a queue pair runs. Which ones a transport uses is its
/// [`Timers::deadline`]'s business (RC has no tail check and no probes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Responder: the coalesced acknowledgement is due.
    Ack,
    /// Requester: the pacing gap before the next data packet has passed.
    Pacing,
    /// Requester: the congestion controller's own timer.
    CongestionControl,
    /// Requester: the tail-loss check (MRC, `docs/model-mrc.md` 2.5.2).
    TailCheck,
    /// Requester: the retransmission timeout.
    Retransmit,
    /// Requester: an ASSUMED_BAD EV is due for a probe (MRC).
    Probe,
}

impl Timer {
    /// How many timers there are.
    pub const COUNT: usize = 6;
    /// Every timer, in declaration order.
    pub const ALL: [Timer; Timer::COUNT] = [
        Timer::Ack,
        Timer::Pacing,
        Timer::CongestionControl,
        Timer::TailCheck,
        Timer::Retransmit,
        Timer::Probe,
    ];
}

/// A model's timers.
pub(crate) trait Timers {
    /// The timers that act when they expire, in the order they fire when
    /// several are due at once. The order is part of the model's behaviour
    /// (an RTO and a congestion-control tick due together change the
    /// controller differently in either order), so each model keeps its
    /// own.
    const FIRING_ORDER: &'static [Timer];

    /// When `timer` is due (`None`: not armed, or not running in the QP's
    /// current state).
    fn deadline(&self, timer: Timer) -> Option<Instant>;

    /// Act on `timer`, which is due at `now`.
    fn fire(&mut self, timer: Timer, now: Instant);
}

/// The earliest deadline of any of `qp`'s timers, folded straight from
/// [`Timers::deadline`]: filling an array of deadlines first made the model
/// benches execute about 3% more instructions (docs/benchmarks.md, "bit
/// sets").
pub(crate) fn poll_timeout(qp: &impl Timers) -> Option<Instant> {
    Timer::ALL.into_iter().filter_map(|timer| qp.deadline(timer)).min()
}

/// Fire every timer of `qp` due at `now`, in its firing order. Each
/// deadline is read just before its timer would fire: firing one timer can
/// disarm another (an RTO that exhausts the retries puts the QP in ERR,
/// where no timer runs).
pub(crate) fn handle_timeout<T: Timers>(qp: &mut T, now: Instant) {
    for &timer in T::FIRING_ORDER {
        if qp.deadline(timer).is_some_and(|t| t <= now) {
            qp.fire(timer, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what fired; firing `Retransmit` disarms everything (as an
    /// RTO that exhausts the retries does).
    struct Recorder {
        deadlines: [Option<Instant>; Timer::COUNT],
        fired: Vec<Timer>,
    }

    impl Timers for Recorder {
        const FIRING_ORDER: &'static [Timer] = &[Timer::Ack, Timer::Retransmit, Timer::CongestionControl];
        fn deadline(&self, timer: Timer) -> Option<Instant> {
            self.deadlines[timer as usize]
        }
        fn fire(&mut self, timer: Timer, _now: Instant) {
            self.fired.push(timer);
            self.deadlines[timer as usize] = None;
            if timer == Timer::Retransmit {
                self.deadlines = [None; Timer::COUNT];
            }
        }
    }

    #[test]
    fn due_timers_fire_in_order_and_a_disarmed_one_does_not() {
        let mut qp = Recorder {
            deadlines: [None; Timer::COUNT],
            fired: Vec::new(),
        };
        for timer in [Timer::Ack, Timer::CongestionControl] {
            qp.deadlines[timer as usize] = Some(Instant::from_ns(5));
        }
        qp.deadlines[Timer::Probe as usize] = Some(Instant::from_ns(10));
        handle_timeout(&mut qp, Instant::from_ns(5));
        assert_eq!(qp.fired, [Timer::Ack, Timer::CongestionControl]);
        assert_eq!(poll_timeout(&qp), Some(Instant::from_ns(10)));
        qp.deadlines[Timer::Retransmit as usize] = Some(Instant::from_ns(8));
        assert_eq!(poll_timeout(&qp), Some(Instant::from_ns(8)));
        qp.fired.clear();
        qp.deadlines[Timer::Retransmit as usize] = Some(Instant::from_ns(6));
        qp.deadlines[Timer::CongestionControl as usize] = Some(Instant::from_ns(6));
        handle_timeout(&mut qp, Instant::from_ns(6));
        assert_eq!(qp.fired, [Timer::Retransmit]);
    }
}
