//! Review findings on the MRC model, one test per bug.

mod mrc_common;

use mrc_common::*;
use proto::model::mrc::MAX_HELD_IMM;
use proto::model::*;
use proto::time::Instant;
use proto::wire::Opcode;

/// A peer that keeps sending WRITE-with-immediate while this side posts no
/// receive must not make the held-completion queue grow without bound (the
/// RC baseline caps it at MAX_HELD_IMM; MRC held everything forever).
#[test]
fn review_mrc_held_imm_completions_are_bounded() {
    let o = Opts::default();
    let (mut a, mut b) = pair(&o);
    let now = Instant::ZERO;
    a.post_write(now, write(1, data(0, 0), 0, Some(7))).unwrap();
    let tmpl = a.poll_transmit(now).unwrap();
    assert_eq!(tmpl.bth.opcode, Opcode::WriteOnlyImm);
    let n = MAX_HELD_IMM as u32 + 100;
    for i in 0..n {
        let mut p = tmpl.clone();
        p.bth.psn = tmpl.bth.psn.add(i);
        let _ = b.handle_packet(now, p);
        while b.poll_transmit(now).is_some() {}
    }
    assert!(b.held_recv_completions() <= MAX_HELD_IMM, "held {}", b.held_recv_completions());
    assert_eq!(b.held_imm_dropped(), 100);
    // The dropped ones were not acknowledged: the in-order point stops at
    // the first of them, so the requester will resend it.
    assert_eq!(b.expected_psn(), Some(tmpl.bth.psn.add(MAX_HELD_IMM as u32)));
    // Receives drain the held completions in order.
    for i in 0..o.max_wimm as u64 {
        b.post_recv(i).unwrap();
    }
    let got = recv_completions(&events(&mut b));
    assert_eq!(got.len(), o.max_wimm as usize);
    assert!(got.iter().all(|c| c.imm == Some(7) && c.status == WcStatus::Success));
}
