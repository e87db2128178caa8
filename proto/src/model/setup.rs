//! Bringing a QP from RST to RTS.
//!
//! [`QpSetup`] holds everything the three transitions (RST -> INIT -> RTR ->
//! RTS) need: the fixed configuration and the attributes of each step. Every
//! harness that runs the golden model (the loopback runner, the hostile
//! peer, the fabric simulator, the RTL testbenches, the tests and benches)
//! brings its QPs up through it, so a new attribute or a new step is added
//! in one place. [`QpSetup::mirrored`] gives the peer of a setup, so a
//! connected pair is one setup and its mirror.

use crate::model::api::*;
use crate::model::cc::CcConfig;
use crate::model::ev::EvSetConfig;
use crate::model::legacy_mrc::LegacyMrcQp;
use crate::model::mrc::MrcQp;
use crate::model::qp::Qp;
use crate::model::rc::RcQp;
use crate::time::Instant;
use crate::Psn;

/// Receive and send window of [`QpSetup::new`], in units of [`MPR_UNIT`]
/// PSNs.
pub const DEFAULT_MPR_UNITS: u8 = 64;
/// Outstanding WRITE-with-immediate bound of [`QpSetup::new`] (both ways).
pub const DEFAULT_MAX_WIMM: u16 = 64;
/// ACK timeout exponent of [`QpSetup::new`]: 1.024 us x 2^14 = 16.8 ms.
pub const DEFAULT_ACK_TIMEOUT_EXP: u8 = 14;
/// Bytes in flight of [`QpSetup::new`]'s fixed congestion window.
pub const DEFAULT_FIXED_WINDOW: u64 = 1 << 20;

/// A queue-pair type that can be created from its fixed configuration (the
/// transport-generic [`Qp`] and the two models it wraps).
pub trait CreateQp: QueuePair + Sized {
    /// A QP in RST.
    fn create(cfg: QpConfig) -> Result<Self, ModifyError>;
}

impl CreateQp for Qp {
    fn create(cfg: QpConfig) -> Result<Qp, ModifyError> {
        Qp::new(cfg)
    }
}

impl CreateQp for MrcQp {
    fn create(cfg: QpConfig) -> Result<MrcQp, ModifyError> {
        MrcQp::new(cfg)
    }
}

impl CreateQp for LegacyMrcQp {
    fn create(cfg: QpConfig) -> Result<LegacyMrcQp, ModifyError> {
        LegacyMrcQp::new(cfg)
    }
}

impl CreateQp for RcQp {
    fn create(cfg: QpConfig) -> Result<RcQp, ModifyError> {
        RcQp::new(cfg)
    }
}

/// Everything one QP needs from RST to RTS.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QpSetup {
    pub cfg: QpConfig,
    pub init: InitAttr,
    pub rtr: RtrAttr,
    pub rts: RtsAttr,
}

impl QpSetup {
    /// QP `qpn` of `transport` talking to QP `peer`: the model's defaults
    /// ([`QpConfig::new`], [`EvSetConfig::default`]), both first PSNs 0, a
    /// window of [`DEFAULT_MPR_UNITS`], [`DEFAULT_MAX_WIMM`], an RTO of
    /// [`DEFAULT_ACK_TIMEOUT_EXP`] with 7 linear and infinite exponential
    /// retries, and a fixed window of [`DEFAULT_FIXED_WINDOW`] bytes.
    /// Callers change the fields they care about.
    pub fn new(transport: Transport, qpn: u32, peer: u32) -> QpSetup {
        QpSetup {
            cfg: QpConfig::new(transport, qpn),
            init: InitAttr::default(),
            rtr: RtrAttr {
                dest_qp: peer,
                rq_psn: Psn::new(0),
                mpr_units: DEFAULT_MPR_UNITS,
                max_wimm: DEFAULT_MAX_WIMM,
            },
            rts: RtsAttr {
                sq_psn: Psn::new(0),
                ack_timeout_exp: DEFAULT_ACK_TIMEOUT_EXP,
                retry_linear: MAX_RETRY_LINEAR,
                retry_exp: RETRY_INFINITE,
                send_mpr_units: DEFAULT_MPR_UNITS,
                max_wimm: DEFAULT_MAX_WIMM,
                evs: EvSetConfig::default(),
                cc: CcConfig::Fixed {
                    window: DEFAULT_FIXED_WINDOW,
                },
            },
        }
    }

    /// The setup of this QP's peer: every attribute the same, except that
    /// the QP numbers and the two first PSNs are swapped, so each QP
    /// addresses the other and expects the PSNs the other sends.
    pub fn mirrored(&self) -> QpSetup {
        let mut peer = self.clone();
        peer.cfg.qpn = self.rtr.dest_qp;
        peer.rtr.dest_qp = self.cfg.qpn;
        peer.rtr.rq_psn = self.rts.sq_psn;
        peer.rts.sq_psn = self.rtr.rq_psn;
        peer
    }

    /// Move `qp` (in RST) through INIT to RTR at `now`: it receives but
    /// does not send (no requester half, so no retransmission or probe
    /// timers).
    pub fn to_rtr(&self, qp: &mut impl QueuePair, now: Instant) -> Result<(), ModifyError> {
        qp.modify(now, QpTransition::Init(self.init.clone()))?;
        qp.modify(now, QpTransition::Rtr(self.rtr.clone()))
    }

    /// Move `qp` (in RST) through INIT and RTR to RTS at `now`.
    pub fn to_rts(&self, qp: &mut impl QueuePair, now: Instant) -> Result<(), ModifyError> {
        self.to_rtr(qp, now)?;
        qp.modify(now, QpTransition::Rts(self.rts.clone()))
    }

    /// A new QP brought to RTS at `now`.
    pub fn bring_up<Q: CreateQp>(&self, now: Instant) -> Result<Q, ModifyError> {
        let mut qp = Q::create(self.cfg.clone())?;
        self.to_rts(&mut qp, now)?;
        Ok(qp)
    }

    /// A new QP brought to RTR at `now` (a responder only).
    pub fn bring_up_receiver<Q: CreateQp>(&self, now: Instant) -> Result<Q, ModifyError> {
        let mut qp = Q::create(self.cfg.clone())?;
        self.to_rtr(&mut qp, now)?;
        Ok(qp)
    }

    /// This QP and its [mirror](QpSetup::mirrored), both brought to RTS at
    /// `now`.
    pub fn bring_up_pair<Q: CreateQp>(&self, now: Instant) -> Result<(Q, Q), ModifyError> {
        Ok((self.bring_up(now)?, self.mirrored().bring_up(now)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirrored_pair_addresses_and_expects_each_other() {
        let mut a = QpSetup::new(Transport::Mrc, 0x11, 0x22);
        a.rts.sq_psn = Psn::new(100);
        a.rtr.rq_psn = Psn::new(5000);
        let b = a.mirrored();
        assert_eq!((b.cfg.qpn, b.rtr.dest_qp), (0x22, 0x11));
        assert_eq!((b.rts.sq_psn, b.rtr.rq_psn), (Psn::new(5000), Psn::new(100)));
        assert_eq!(b.mirrored(), a);
        let (qa, qb): (MrcQp, MrcQp) = a.bring_up_pair(Instant::ZERO).unwrap();
        assert_eq!((qa.state(), qb.state()), (QpState::Rts, QpState::Rts));
        assert_eq!(qb.expected_psn(), Some(Psn::new(100)));
    }

    #[test]
    fn a_receiver_stops_at_rtr_and_a_refused_step_is_reported() {
        let mut s = QpSetup::new(Transport::Rc, 1, 2);
        let q: RcQp = s.bring_up_receiver(Instant::ZERO).unwrap();
        assert_eq!(q.state(), QpState::Rtr);
        s.rtr.mpr_units = 0;
        assert!(matches!(
            s.bring_up::<Qp>(Instant::ZERO),
            Err(ModifyError::BadAttribute { name: "mpr_units", .. })
        ));
    }
}
