//! Review findings on the RC baseline, one test per bug.

mod rc_util;

use proto::model::rc::RcQp;
use proto::model::*;
use proto::wire::Opcode;
use proto::Instant;
use rc_util::*;

fn rc(s: &Setup, side: usize) -> RcQp {
    qp(s, side)
}

/// A CE-marked packet that is dropped with an error (opcode sequence error,
/// remote access, length mismatch) must change nothing but its drop counter:
/// no `rx_ecn_ce`, no CNP (docs/model-rc.md: "not trimmed or malformed ones";
/// "every Err is exactly one counted drop").
#[test]
fn review_rc_dropped_ce_packet_neither_counts_ce_nor_sends_cnp() {
    let s = Setup::default();
    let mut a = rc(&s, 0);
    let mut b = rc(&s, 1);
    let now = Instant::ZERO;
    a.post_write(now, write(1, &pattern(3000, 1), 0, None)).unwrap();
    let first = a.poll_transmit(now).map(roce).unwrap();
    let middle = a.poll_transmit(now).map(roce).unwrap();
    // MIDDLE at the expected PSN with no message open: UnexpectedOpcode.
    let mut m = middle.clone();
    m.bth.psn = first.bth.psn;
    m.ecn_ce = true;
    assert_eq!(
        b.handle_packet(now, m.into()),
        Err(RxError::UnexpectedOpcode(Opcode::WriteMiddle))
    );
    // FIRST with a bad rkey: RemoteAccess (its NAK is the documented response).
    let mut f = first.clone();
    f.ecn_ce = true;
    f.reth.as_mut().unwrap().rkey ^= 1;
    assert!(matches!(
        b.handle_packet(now, f.into()),
        Err(RxError::RemoteAccess { .. })
    ));
    let c = *b.counters();
    assert_eq!(c.drops(), 2);
    assert_eq!(c.rx_ecn_ce, 0, "dropped packets counted as CE");
    let mut cnps = 0;
    while let Some(p) = b.poll_transmit(now).map(roce) {
        if p.bth.opcode == Opcode::Cnp {
            cnps += 1;
        }
    }
    assert_eq!(cnps, 0, "CNP sent for dropped packets");
}

/// `Completion::imm` is "the immediate value (receive completions of
/// WRITE-with-immediate)"; MRC's send completions carry `None`. RC's send
/// completions (success and flush) carried the request's immediate, so the
/// same workload produced different send completions on the two transports
/// that simulators compare through one API.
#[test]
fn review_rc_send_completions_carry_no_immediate() {
    let s = Setup::default();
    let mut p = Pair::new(s, 3);
    p.qp[1].post_recv(9).unwrap();
    p.qp[0]
        .post_write(p.now, write(1, &pattern(100, 1), 0, Some(0xABCD)))
        .unwrap();
    p.qp[0]
        .post_write(p.now, write(2, &pattern(100, 1), 4096, Some(0xABCE)))
        .unwrap();
    assert!(p.run());
    p.qp[0]
        .post_write(p.now, write(3, &pattern(100, 1), 8192, Some(0xABCF)))
        .unwrap();
    p.qp[0].modify(p.now, QpTransition::Error).unwrap();
    p.run();
    let sends = p.send_completions(0);
    assert_eq!(sends.len(), 3);
    for c in sends {
        assert_eq!(c.imm, None, "{c:?}");
    }
}
