//! The reverse EV set of a responder (MRC 1.0: "SACKs and NACKs go over a
//! small reverse EV set with at least one EV per plane, refreshed by probes
//! or SACKs"; `../shared/docs/mrc-1.0.md`, grade C).
//!
//! How the set is filled and refreshed is ours (the public record names
//! only the set): the responder holds the EVs of the latest arriving data
//! packets and reliability probes, `per_plane` distinct ones per plane
//! (an EV's plane being [`choices::ev_plane`]), each new EV replacing the
//! oldest of its plane. An arriving packet's EV just carried data to this
//! responder, so its path works in that direction, and the fabrics built
//! here route an EV over the same links both ways; an EV whose path dies
//! stops arriving and ages out. SACKs and NACKs rotate over the EVs held.
//! Lost acknowledgements show up as a reliability probe or a duplicate
//! data packet (the requester heard nothing and resent): either empties
//! the set ([`ReverseEvs::evict`]), which the next arrivals, the probe or
//! duplicate first, refill. While the set holds no EV, and with the set
//! off (`per_plane` = 0, the default), an acknowledgement travels on the
//! EV of the packet that triggered it.

use crate::wire::mrc10::choices;

/// Most EVs a reverse set holds (`per_plane * planes`).
pub const MAX_REVERSE_EVS: usize = 64;

/// The shape of a responder's reverse EV set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ReverseEvConfig {
    /// EVs held per plane; 0 = no reverse set (acknowledgements echo the
    /// EV of the packet they answer).
    pub per_plane: u8,
    /// Planes the EVs spread over (the NIC's ports), at least 1.
    pub planes: u8,
}

impl ReverseEvConfig {
    /// No reverse set.
    pub const OFF: ReverseEvConfig = ReverseEvConfig {
        per_plane: 0,
        planes: 1,
    };

    /// Why the shape is invalid, if it is.
    pub fn check(&self) -> Result<(), String> {
        if self.planes == 0 {
            return Err("planes must be at least 1".into());
        }
        let n = self.per_plane as usize * self.planes as usize;
        if n > MAX_REVERSE_EVS {
            return Err(format!(
                "{} per plane x {} planes exceeds {MAX_REVERSE_EVS} EVs",
                self.per_plane, self.planes
            ));
        }
        Ok(())
    }
}

impl Default for ReverseEvConfig {
    fn default() -> ReverseEvConfig {
        ReverseEvConfig::OFF
    }
}

/// A responder's reverse EV set (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct ReverseEvs {
    /// `slots[plane * per_plane + k]`; empty when the set is off (a
    /// boxed slice and bytes: every responder of an all-to-all has one).
    slots: Box<[Option<u32>]>,
    per_plane: u8,
    planes: u8,
    /// Rotation cursor over `slots` (fewer than [`MAX_REVERSE_EVS`]).
    next: u8,
}

impl ReverseEvs {
    /// An empty set of the given shape (which [`ReverseEvConfig::check`]
    /// accepted).
    pub fn new(cfg: ReverseEvConfig) -> ReverseEvs {
        ReverseEvs {
            slots: vec![None; cfg.per_plane as usize * cfg.planes.max(1) as usize].into_boxed_slice(),
            per_plane: cfg.per_plane,
            planes: cfg.planes.max(1),
            next: 0,
        }
    }

    /// Whether the set is on.
    pub fn is_on(&self) -> bool {
        !self.slots.is_empty()
    }

    /// A data packet or a probe arrived on `ev`: hold it, in a free slot
    /// of its plane or in place of the plane's oldest, unless the plane
    /// holds it already. A plane's slots stay in arrival order, oldest
    /// first.
    pub fn learn(&mut self, ev: u32) {
        if self.slots.is_empty() {
            return;
        }
        let k = self.per_plane as usize;
        let p = choices::ev_plane(ev, self.planes as u32) as usize;
        let plane = &mut self.slots[p * k..(p + 1) * k];
        if plane.contains(&Some(ev)) {
            return;
        }
        if let Some(free) = plane.iter_mut().find(|s| s.is_none()) {
            *free = Some(ev);
        } else {
            plane.rotate_left(1);
            plane[k - 1] = Some(ev);
        }
    }

    /// The EV for the next SACK or NACK: the next EV held, in rotation, or
    /// `echo` (the EV of the packet answered) while none is held.
    pub fn pick(&mut self, echo: u32) -> u32 {
        let n = self.slots.len();
        for k in 0..n {
            let i = (self.next as usize + k) % n;
            if let Some(ev) = self.slots[i] {
                self.next = ((i + 1) % n) as u8;
                return ev;
            }
        }
        echo
    }

    /// Acknowledgements may have been lost: drop every EV held. Returns
    /// whether any was.
    pub fn evict(&mut self) -> bool {
        let held = self.slots.iter().any(Option::is_some);
        self.slots.iter_mut().for_each(|s| *s = None);
        held
    }

    /// The EVs held, slot by slot (plane by plane).
    pub fn held(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().flatten().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two EVs per plane, arrivals alternating planes: each plane keeps its
    /// two latest EVs, whatever the other plane does.
    #[test]
    fn each_plane_holds_its_latest_evs() {
        let mut r = ReverseEvs::new(ReverseEvConfig {
            per_plane: 2,
            planes: 2,
        });
        assert_eq!(r.pick(7), 7, "nothing held: the echo");
        for ev in 0..80u32 {
            r.learn(ev);
        }
        // Plane 0 saw the even EVs, plane 1 the odd ones.
        assert_eq!(r.held().collect::<Vec<_>>(), [76, 78, 77, 79]);
        r.learn(78);
        assert_eq!(r.held().collect::<Vec<_>>(), [76, 78, 77, 79], "held already");
        let picks: Vec<u32> = (0..4).map(|_| r.pick(0)).collect();
        assert_eq!(picks, [76, 78, 77, 79], "rotation over every EV held");
        assert!(r.evict());
        assert_eq!(r.pick(5), 5);
        assert!(!r.evict());
    }
}
