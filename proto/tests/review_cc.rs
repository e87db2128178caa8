//! Review findings on congestion-control configuration.

use proto::model::cc::*;
use proto::model::ev::EvSetConfig;
use proto::model::*;
use proto::time::{Duration, Instant};
use proto::Psn;

fn rts(cc: CcConfig) -> RtsAttr {
    RtsAttr {
        sq_psn: Psn::new(0),
        ack_timeout_exp: 5,
        retry_linear: 7,
        retry_exp: 7,
        send_mpr_units: 4,
        max_wimm: 4,
        evs: EvSetConfig::default(),
        cc,
    }
}

/// Controller parameters that make the model hang, stop sending or compute
/// NaN windows were accepted at RTS:
/// * DCQCN at 0 Gb/s paces every packet `bytes * 8 / 0` = infinitely far
///   apart (the QP sends one packet and never another; `mrc transfer
///   --rate 0` builds exactly that);
/// * DCQCN with a zero increase period and zero increase steps loops
///   forever inside `on_timer` (the rate never reaches line rate, the next
///   increase is always due);
/// * NSCC with a NaN gain turns the window into NaN (`window()` = 0).
#[test]
fn review_cc_degenerate_configs_are_refused() {
    let bad = [
        CcConfig::Dcqcn(DcqcnConfig::for_line_rate(0.0)),
        CcConfig::Dcqcn(DcqcnConfig::for_line_rate(f64::NAN)),
        CcConfig::Dcqcn(DcqcnConfig {
            increase_period: Duration::ZERO,
            rai_gbps: 0.0,
            rhai_gbps: 0.0,
            ..DcqcnConfig::for_line_rate(100.0)
        }),
        CcConfig::Dcqcn(DcqcnConfig {
            g: 2.0,
            ..DcqcnConfig::for_line_rate(100.0)
        }),
        CcConfig::Nscc(NsccConfig {
            decrease_gain: f64::NAN,
            ..NsccConfig::for_fabric(100.0, Duration::from_us(10), 4096)
        }),
    ];
    for cc in bad {
        assert!(
            matches!(validate_rts(&rts(cc)), Err(ModifyError::BadAttribute { .. })),
            "accepted {cc:?}"
        );
    }
    for cc in [
        CcConfig::Dcqcn(DcqcnConfig::for_line_rate(100.0)),
        CcConfig::Nscc(NsccConfig::for_fabric(100.0, Duration::from_us(10), 4096)),
        CcConfig::Fixed { window: 0 },
    ] {
        validate_rts(&rts(cc)).unwrap();
    }
    // What the first one does when built anyway: one packet, then silence.
    let mut c = build(&CcConfig::Dcqcn(DcqcnConfig::for_line_rate(0.0)));
    c.on_send(Instant::ZERO, 4096);
    assert_eq!(c.next_send_time(Instant::ZERO, 4096), Instant(u64::MAX));
}
