//! The RX ingress admission (`hw::rx_ingress::RxIngress`) under random
//! frames, pauses, join-credit releases and RX buffer room: every frame is
//! passed whole or discarded whole (one `cnt_discard` pulse, and one
//! `cnt_discard_join` pulse when it lacked a join credit), decided at
//! its first beat by the documented rule (a join credit left, counting
//! this cycle's admission; the buffer's room one cycle before the first
//! beat at least `ADMIT_BEATS` / `ADMIT_FRAMES`), so at most `JOIN_DEPTH`
//! admitted frames are ever unjoined. Replayed in lockstep on the emitted
//! Verilog.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use hw::rx_ingress::{RxIngress, ADMIT_BEATS, ADMIT_FRAMES};
use hw::rx_path::JOIN_DEPTH;
use rust_hdl::prelude::*;

use tb::rng::Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// Pauses of the MAC stream (inside frames too).
const BEAT_PAUSE: Stall = Stall::go_percent(85);

#[derive(Default, Debug)]
struct Seen {
    /// Per frame offered: admitted (true) or discarded.
    admitted: Vec<bool>,
    /// Beats that came out: (frame, beat, last).
    out_beats: Vec<(u64, u64, bool)>,
    discards: usize,
    /// Of those, refused for want of a join credit.
    discards_join: usize,
    /// `cnt_discard` / `cnt_discard_join` pulses seen.
    discard_pulses: usize,
    discard_join_pulses: usize,
    /// Decisions refusing for want of a join credit / of buffer room.
    no_credit: usize,
    no_room: usize,
    max_unjoined: usize,
    mid_frame_pauses: usize,
}

fn beat_data(frame: u64, beat: u64) -> Bits<512> {
    let mut b = Bits::<512>::default();
    b.set_bits::<64>(0, (frame << 16 | beat).into());
    b
}

#[test]
fn frames_pass_or_are_discarded_whole_by_the_admission_rule() {
    const FRAMES: usize = 600;
    let mut r = Rng::from_state(0x1a9e_5501);
    let lens: Vec<u64> = (0..FRAMES).map(|_| 1 + r.below(6)).collect();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    let lens2 = lens.clone();
    let mut uut = RxIngress::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(RxIngress, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut r = Rng::from_state(0x1a9e_5502);
        let mut sn = Seen::default();
        // The stream: frame k, beat b; `valid` held until taken.
        let (mut k, mut b) = (0usize, 0u64);
        let mut valid = false;
        // The join: admitted frames not yet released (released at random,
        // slowly in some phases so the credits run out).
        let mut unjoined: VecDeque<usize> = VecDeque::new();
        // The bench's copy of the rule: the decision for this cycle's beat,
        // and the credits used as the block counts them.
        let mut gate = false;
        // Its join-credit half (the reason a refusal is counted under).
        // Decided once before the first cycle here, with every credit
        // free and the room inputs still 0: a frame at cycle 0 is refused
        // for room, not for a credit.
        let mut gate_credit = true;
        let mut used = 0usize;
        let mut in_frame = false;
        let mut current_admitted = false;
        let mut cycle = 0u64;
        wait_clock_true!(sim, clock, x);
        while k < FRAMES || !unjoined.is_empty() {
            let slow_join = (cycle / 700) % 2 == 1;
            let tight_room = (cycle / 500) % 3 == 2;
            valid = BEAT_PAUSE.offer(valid, k < FRAMES, &mut r);
            if !valid && in_frame && k < FRAMES {
                sn.mid_frame_pauses += 1;
            }
            x.s_axis.tvalid.next = valid && k < FRAMES;
            x.s_axis.tdata.next = beat_data(k as u64, b);
            x.s_axis.tkeep.next = u64::MAX.into();
            let last = k < FRAMES && b + 1 == lens2[k];
            x.s_axis.tlast.next = last;
            x.m_axis.tready.next = true;
            let release = !unjoined.is_empty() && r.chance(if slow_join { 3 } else { 60 });
            x.joined.next = release;
            let room_beats = if tight_room && r.chance(50) {
                ADMIT_BEATS - 1 - r.below(3)
            } else {
                ADMIT_BEATS + r.below(100)
            };
            let room_frames = if tight_room && r.chance(30) {
                ADMIT_FRAMES - 1
            } else {
                ADMIT_FRAMES + r.below(10)
            };
            x.buf_room_beats.next = room_beats.into();
            x.buf_room_frames.next = room_frames.into();
            wait_clock_false!(sim, clock, x);
            // This cycle's beat against the bench's rule.
            let take = x.s_axis.tvalid.val() && x.s_axis.tready.val();
            sim_assert!(sim, x.s_axis.tready.val(), x);
            let first = !in_frame;
            let admit_now = take && first && gate;
            if take && first {
                current_admitted = gate;
                sn.admitted.push(gate);
                if !gate {
                    sn.discards += 1;
                    sn.discards_join += usize::from(!gate_credit);
                }
            }
            // The counters' pulses (a cycle after the first beat they
            // count; summed, so their timing is not pinned here).
            sn.discard_pulses += usize::from(x.cnt_discard.val());
            sn.discard_join_pulses += usize::from(x.cnt_discard_join.val());
            sim_assert!(sim, !x.cnt_discard_join.val() || x.cnt_discard.val(), x);
            sim_assert!(sim, x.m_axis.tvalid.val() == (take && current_admitted), x);
            if x.m_axis.tvalid.val() {
                let d = x.m_axis.tdata.val().get_bits::<64>(0).to_u64();
                sn.out_beats.push((d >> 16, d & 0xFFFF, x.m_axis.tlast.val()));
            }
            if admit_now {
                unjoined.push_back(k);
                sn.max_unjoined = sn.max_unjoined.max(unjoined.len());
            }
            if release {
                unjoined.pop_front();
            }
            // The decision for the next cycle's beat.
            let next_first = (take && last) || (!take && !in_frame);
            if next_first {
                let credit_ok = used != JOIN_DEPTH && !(admit_now && used == JOIN_DEPTH - 1);
                let room_ok = room_beats >= ADMIT_BEATS && room_frames >= ADMIT_FRAMES;
                gate = credit_ok && room_ok;
                gate_credit = credit_ok;
                // Why a frame starting next cycle would be refused.
                if !credit_ok {
                    sn.no_credit += 1;
                } else if !room_ok {
                    sn.no_room += 1;
                }
            }
            sim_assert!(sim, x.in_flight.val().index() == used, x);
            match (admit_now, release) {
                (true, false) => used += 1,
                (false, true) => used -= 1,
                _ => {}
            }
            if take {
                in_frame = !last;
                b += 1;
                if last {
                    k += 1;
                    b = 0;
                }
                valid = false;
            }
            wait_clock_true!(sim, clock, x);
            cycle += 1;
            sim_assert!(sim, cycle < 200_000, x);
        }
        *s2.lock().unwrap() = sn;
        sim.done(x)
    });
    sim.run(Box::new(uut), 1_000_000_000_000).unwrap();
    rec.check_verilog("mrc_rx_ingress", || {
        hw::flow::emit_block("mrc_rx_ingress", &mut RxIngress::default()).verilog
    });
    let sn = seen.lock().unwrap();
    // Whole frames, in order: exactly the beats of the admitted ones.
    let want: Vec<(u64, u64, bool)> = (0..FRAMES)
        .filter(|&f| sn.admitted[f])
        .flat_map(|f| {
            let n = lens[f];
            (0..n).map(move |b| (f as u64, b, b + 1 == n))
        })
        .collect();
    assert_eq!(sn.admitted.len(), FRAMES);
    assert_eq!(sn.out_beats, want, "admitted frames pass whole");
    let admitted = sn.admitted.iter().filter(|&&a| a).count();
    eprintln!(
        "{admitted} admitted, {} discarded; refusals: {} no credit, {} no room (cycles); at most {} unjoined; {} mid-frame pauses",
        sn.discards, sn.no_credit, sn.no_room, sn.max_unjoined, sn.mid_frame_pauses
    );
    assert!(sn.max_unjoined <= JOIN_DEPTH, "credits bound the join");
    // Every discard counted once, those for want of a credit also as such
    // (the last frame's pulse comes a cycle after its beat: in the run).
    assert_eq!(sn.discard_pulses, sn.discards, "rx_discards");
    assert_eq!(sn.discard_join_pulses, sn.discards_join, "rx_discards_join");
    // Coverage.
    assert_eq!(sn.max_unjoined, JOIN_DEPTH, "the credits ran out");
    assert!(admitted >= 200, "admitted: {admitted}");
    assert!(sn.discards >= 50, "discarded: {}", sn.discards);
    assert!(sn.no_credit >= 20 && sn.no_room >= 20, "both refusal reasons");
    assert!(
        sn.discards_join >= 10 && sn.discards - sn.discards_join >= 10,
        "frames discarded for each reason: {} of {} for a credit",
        sn.discards_join,
        sn.discards
    );
    assert!(sn.mid_frame_pauses >= 20, "pauses inside frames");
}
