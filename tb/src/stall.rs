//! Random valid / ready stalls, the one generator every stream component
//! and every block test uses: a source's pause generator (how often it
//! offers a pending beat) and a sink's back-pressure generator (how often
//! it is ready) are both a [`Stall`]. Each cycle's decision is one draw
//! from the test's generator ([`crate::rng`]), so a seed replays the same
//! stalls.
//!
//! Why random and not fixed patterns: a block must be correct whatever
//! its neighbours do, and the bugs live in the cycles where a handshake
//! waits (a beat held across a stall, a ready that drops mid-frame).

use crate::rng::Chance;

/// How often a valid or ready signal may be up: on `go_percent` percent
/// of cycles, independently drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    go_percent: u32,
}

impl Default for Stall {
    fn default() -> Self {
        Stall::NEVER
    }
}

impl Stall {
    /// Up on every cycle (still one draw per cycle, so the stimulus drawn
    /// from the same generator does not depend on the stall setting).
    pub const NEVER: Stall = Stall { go_percent: 100 };

    /// Up on `percent` percent of cycles.
    pub const fn go_percent(percent: u32) -> Stall {
        assert!(percent <= 100);
        Stall { go_percent: percent }
    }

    /// Stalled (down) on `percent` percent of cycles.
    pub const fn stall_percent(percent: u32) -> Stall {
        assert!(percent <= 100);
        Stall {
            go_percent: 100 - percent,
        }
    }

    pub fn percent_up(self) -> u32 {
        self.go_percent
    }

    /// This cycle's draw: whether the signal may be up (back-pressure:
    /// the sink's `ready`).
    pub fn go(self, rng: &mut impl Chance) -> bool {
        rng.chance(u64::from(self.go_percent))
    }

    /// A source's `valid` for this cycle (pause generator): once up it
    /// stays up until the beat is taken (the AXI rule; the caller clears
    /// it on the handshake); down, it rises with something `pending` on
    /// a drawn cycle. Draws only when it could rise.
    pub fn offer(self, valid: bool, pending: bool, rng: &mut impl Chance) -> bool {
        valid || (pending && self.go(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn go_is_up_on_about_the_percent_of_cycles() {
        let mut rng = Rng::new(1);
        let stall = Stall::go_percent(70);
        let up = (0..10_000).filter(|_| stall.go(&mut rng)).count();
        assert!((6_700..7_300).contains(&up), "{up}");
        assert_eq!(Stall::stall_percent(30), stall);
        assert!((0..100).all(|_| Stall::NEVER.go(&mut rng)));
        assert!((0..100).all(|_| !Stall::go_percent(0).go(&mut rng)));
    }

    #[test]
    fn offer_holds_valid_and_rises_only_with_something_pending() {
        let mut rng = Rng::new(2);
        let never_up = Stall::go_percent(0);
        assert!(never_up.offer(true, false, &mut rng), "held until taken");
        assert!(!Stall::NEVER.offer(false, false, &mut rng), "nothing pending");
        assert!(Stall::NEVER.offer(false, true, &mut rng));
        // No draw when it cannot rise: the sequence is unchanged.
        let (mut a, mut b) = (Rng::new(3), Rng::new(3));
        Stall::NEVER.offer(true, true, &mut a);
        Stall::NEVER.offer(false, false, &mut a);
        assert_eq!(a.next_u64(), b.next_u64());
    }
}
