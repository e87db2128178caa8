//! Send completions against the golden model: per test QP a pair of
//! `proto::model::legacy_mrc::LegacyMrcQp` (requester A, responder B) exchanges the
//! posted WRITEs with random loss; every change of A's `una` becomes an
//! acknowledgement record (`ack_qp`, `ack_una`) for the hardware, every
//! posted WRITE a message record (its PSNs by the model's segmentation
//! rule), and A's `SendCompleted` events are the reference: order, status,
//! wr_id, length. Signaled successes must give a CQE, unsignaled ones
//! nothing. One QP's link dies until A exceeds its retry limit, another
//! posts a WRITE with an rkey B does not know (B NACKs it as a remote
//! access, A goes to ERR): the hardware gets the QP-error report (reason
//! retry exceeded, or remote access) for a PSN of the request the model
//! failed and must give RETRY_EXCEEDED (REMOTE_ACCESS) to it and FLUSHED
//! to every other outstanding message, in order; messages pushed after that are
//! flushed too (verbs' rule for posts to a QP in error), later
//! acknowledgements and reports dropped and counted. Requester error
//! records are interleaved at random SQ positions and must complete with
//! their own status in SQ order. All four input handshakes and the CQE
//! output are stalled at random; acknowledgements are held back behind
//! the message records they cover, so the lists fill up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use contract::config::table;
use contract::layout::{Completion, CqStatus, SqContext};
use hw::retransmit::err_reason;
use hw::send_cq::{SendCompletions, LIST_DEPTH};
use proto::model::cc::CcConfig;
use proto::model::ev::EvSetConfig;
use proto::model::legacy_mrc::LegacyMrcQp;
use proto::model::*;
use proto::time::{Duration, Instant};
use proto::wire::Packet;
use proto::Psn;
use rust_hdl::prelude::*;

use tb::rng::RngStar as Rng;
use tb::stall::Stall;
use tb::{lockstep, lockstep_sim};

/// Pauses of the message and error pushes, and of the acknowledgements.
const PUSH_PAUSE: Stall = Stall::go_percent(70);
const ACK_PAUSE: Stall = Stall::go_percent(60);
/// Acknowledgements stop for `ACK_PAUSED` of every `ACK_ROUND` cycles,
/// long enough for a QP's list to fill (300 of 700 per 16 entries).
const ACK_ROUND: u64 = 700 * LIST_DEPTH as u64 / 16;
const ACK_PAUSED: u64 = 300 * LIST_DEPTH as u64 / 16;

const MTU: u32 = 1024;
const VA: u64 = 0x10_0000;
const RKEY: u32 = 0x77;

/// How a test QP's run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Every message completes.
    Completes,
    /// The link dies: A exceeds its retry limit (RETRY_EXCEEDED).
    LinkDies,
    /// A WRITE with an unknown rkey: B NACKs it, A goes to ERR
    /// (REMOTE_ACCESS).
    BadRkey,
}

/// Test QPs: (QP, completion ring, start PSN, fate).
const SETUPS: [(u32, u32, u32, Fate); 4] = [
    (3, 9, 0xFF_FFF0, Fate::Completes),
    (200, 200, 0x1000, Fate::Completes),
    (255, 0, 7, Fate::LinkDies),
    (77, 12, 0x40, Fate::BadRkey),
];

#[derive(Clone, Copy, Debug)]
enum Push {
    Msg {
        wr_id: u64,
        opcode: u8,
        len: u32,
        sq_index: u32,
        signaled: bool,
        first: u32,
        last: u32,
    },
    Err {
        status: u8,
        opcode: u8,
        wr_id: u64,
        sq_index: u32,
        len: u32,
    },
}

#[derive(Clone, Copy, Debug)]
struct Ack {
    una: u32,
    /// Pushes the test lets the hardware take before it presents this ack
    /// (those it covers), unless the push lane is stuck.
    need: usize,
    gated: bool,
}

#[derive(Default)]
struct Script {
    pushes: Vec<Push>,
    acks: Vec<Ack>,
    /// QP error: (PSN, pushes that must be taken first, reason).
    fail: Option<(u32, usize, u64)>,
    want: Vec<Completion>,
    /// Coverage of the model run.
    unsignaled_done: usize,
    wrapped: bool,
}

fn rts(start: u32, dies: bool) -> RtsAttr {
    RtsAttr {
        sq_psn: Psn::new(start),
        ack_timeout_exp: 4,
        retry_linear: if dies { 2 } else { 7 },
        retry_exp: if dies { 1 } else { RETRY_INFINITE },
        send_mpr_units: 4,
        max_wimm: 64,
        evs: EvSetConfig {
            evs: (0..4).map(|i| 0xC000 + i).collect(),
            ..EvSetConfig::default()
        },
        cc: CcConfig::Fixed { window: 1 << 30 },
    }
}

fn endpoint(qpn: u32, peer: u32, start: u32, dies: bool) -> LegacyMrcQp {
    let mut s = QpSetup::new(Transport::Mrc, qpn, peer);
    s.cfg.mtu = MTU;
    s.rtr.rq_psn = Psn::new(start);
    s.rtr.mpr_units = 4;
    s.rtr.max_wimm = 64;
    s.rts = rts(start, dies);
    let mut q: LegacyMrcQp = proto::test_support::ready(&s);
    q.memory_mut().register(VA, 1 << 20, RKEY).unwrap();
    q
}

/// The model's side of one QP: posts, lossy exchange, acks, completions.
fn script(k: usize, seed: u64, n_posts: usize) -> Script {
    let (qpn, _, start, fate) = SETUPS[k];
    let dies = fate == Fate::LinkDies;
    let mut r = Rng::from_state(seed ^ (0x9E37_79B9 * (k as u64 + 1)));
    let mut a = endpoint(qpn, 0x800 + qpn, start, dies);
    let mut b = endpoint(0x800 + qpn, qpn, start, false);
    let mut now = Instant::ZERO;
    let mut s = Script::default();
    let mut next_psn = start;
    let mut sq_index = 0u32;
    let mut last_una = start;
    let mut done: HashMap<u64, CqStatus> = HashMap::new();
    let mut model_posts = 0usize;
    let mut dead = false;

    // One round: packets both ways (dropped with `loss` percent), time on,
    // due timers; then A's una and completions.
    let round = |a: &mut LegacyMrcQp,
                 b: &mut LegacyMrcQp,
                 now: &mut Instant,
                 r: &mut Rng,
                 loss: u64,
                 s: &mut Script,
                 done: &mut HashMap<u64, CqStatus>,
                 last_una: &mut u32| {
        while let Some(p) = a.poll_transmit(*now).and_then(Packet::into_roce) {
            if !r.chance(loss) {
                let _ = b.handle_packet(*now, p.into());
            }
        }
        while let Some(p) = b.poll_transmit(*now).and_then(Packet::into_roce) {
            if !r.chance(loss) {
                let _ = a.handle_packet(*now, p.into());
            }
        }
        *now += Duration::from_ns(500);
        for q in [&mut *a, &mut *b] {
            if q.poll_timeout().is_some_and(|t| t <= *now) {
                q.handle_timeout(*now);
            }
        }
        // The responder's events (receive completions) are not compared.
        while b.poll_event().is_some() {}
        while let Some(e) = a.poll_event() {
            if let Event::SendCompleted(c) = e {
                let st = match c.status {
                    WcStatus::Success => CqStatus::Success,
                    WcStatus::Flushed => CqStatus::Flushed,
                    WcStatus::RetryExceeded => CqStatus::RetryExceeded,
                    WcStatus::RemoteAccessError => CqStatus::RemoteAccess,
                };
                assert!(done.insert(c.wr_id, st).is_none());
            }
        }
        if a.state() == QpState::Rts {
            let una = a.send_window().unwrap().0.value();
            if una != *last_una {
                // The pushes up to the first message this una does not cover.
                let need = s
                    .pushes
                    .iter()
                    .position(|p| matches!(p, Push::Msg { last, .. } if !Psn::new(una).after(Psn::new(*last))))
                    .unwrap_or(s.pushes.len());
                s.acks.push(Ack {
                    una,
                    need,
                    gated: r.chance(70),
                });
                *last_una = una;
            }
        }
    };

    let post = |a: &mut LegacyMrcQp,
                b: &mut LegacyMrcQp,
                r: &mut Rng,
                s: &mut Script,
                to_model: bool,
                rkey: u32,
                next_psn: &mut u32,
                sq_index: &mut u32| {
        let len = match r.below(8) {
            0 => 0,
            1 => MTU,
            2 => 4 * MTU,
            _ => r.below(u64::from(3 * MTU)) as u32 + 1,
        };
        // A bad rkey is checked only on a write with bytes (a zero-length
        // WRITE touches no memory): two packets.
        let len = if rkey == RKEY { len } else { MTU + 1 };
        let imm = r.chance(25).then(|| r.next_u64() as u32);
        let wr_id = r.next_u64();
        let signaled = r.chance(50);
        if to_model {
            if imm.is_some() {
                b.post_recv(r.next_u64()).unwrap();
            }
            let off = r.below(256) * 4096;
            let data = Bytes::from(vec![0x5Au8; len as usize]);
            a.post_write(
                now_zero(),
                WriteRequest {
                    wr_id,
                    data,
                    remote_va: VA + off,
                    rkey,
                    imm,
                },
            )
            .unwrap();
        }
        let npkts = len.div_ceil(MTU).max(1);
        let first = *next_psn;
        let last = Psn::new(first).add(npkts - 1).value();
        // The PSN sequence crosses 2^24 - 1 -> 0 in this message.
        if Psn::new(first).add(npkts).value() < first {
            s.wrapped = true;
        }
        *next_psn = Psn::new(first).add(npkts).value();
        s.pushes.push(Push::Msg {
            wr_id,
            opcode: if imm.is_some() { 2 } else { 1 },
            len,
            sq_index: *sq_index,
            signaled,
            first,
            last,
        });
        *sq_index += 1;
    };

    let push_err = |r: &mut Rng, s: &mut Script, sq_index: &mut u32| {
        let status = 1 + r.below(4) as u8;
        let (opcode, wr_id, len) = if status == CqStatus::BadDoorbell as u8 {
            (0, 0, 0)
        } else {
            (
                if status == 1 { 3 + r.below(250) as u8 } else { 1 },
                r.next_u64(),
                r.next_u64() as u32,
            )
        };
        let idx = if status == CqStatus::BadDoorbell as u8 {
            r.next_u64() as u32
        } else {
            *sq_index
        };
        s.pushes.push(Push::Err {
            status,
            opcode,
            wr_id,
            sq_index: idx,
            len,
        });
        if status != CqStatus::BadDoorbell as u8 {
            *sq_index += 1;
        }
    };

    while model_posts < n_posts {
        let x = r.below(100);
        if x < 40 {
            post(&mut a, &mut b, &mut r, &mut s, true, RKEY, &mut next_psn, &mut sq_index);
            model_posts += 1;
        } else if x < 47 {
            push_err(&mut r, &mut s, &mut sq_index);
        } else {
            for _ in 0..1 + r.below(12) {
                round(&mut a, &mut b, &mut now, &mut r, 12, &mut s, &mut done, &mut last_una);
            }
        }
        if fate != Fate::Completes && !dead && model_posts == n_posts / 2 {
            // Three more messages outstanding. The link dies: A times out
            // until its retry budget is spent. Or the second carries an
            // rkey B does not know: B NACKs it, A goes to ERR.
            for i in 0..3 {
                let rkey = if fate == Fate::BadRkey && i == 1 {
                    RKEY + 1
                } else {
                    RKEY
                };
                post(&mut a, &mut b, &mut r, &mut s, true, rkey, &mut next_psn, &mut sq_index);
            }
            let loss = if dies { 100 } else { 0 };
            for _ in 0..200_000 {
                if a.state() != QpState::Rts {
                    break;
                }
                if let Some(t) = a.poll_timeout() {
                    now = now.max(t);
                }
                round(&mut a, &mut b, &mut now, &mut r, loss, &mut s, &mut done, &mut last_una);
            }
            assert_eq!(a.state(), QpState::Error, "the model must go to ERR");
            dead = true;
            let (status, reason) = if dies {
                (CqStatus::RetryExceeded, err_reason::RETRY_EXCEEDED)
            } else {
                (CqStatus::RemoteAccess, err_reason::REMOTE_ACCESS)
            };
            let failed = s.pushes.iter().find_map(|p| match p {
                Push::Msg { wr_id, first, last, .. } if done.get(wr_id) == Some(&status) => Some((*first, *last)),
                _ => None,
            });
            let (first, last) = failed.unwrap_or_else(|| panic!("one request failed with {status:?}"));
            let span = Psn::new(last).offset_from(Psn::new(first));
            let psn = Psn::new(first).add(r.below(u64::from(span) + 1) as u32).value();
            let at = s
                .pushes
                .iter()
                .position(|p| matches!(p, Push::Msg { first: f, .. } if *f == first))
                .unwrap();
            s.fail = Some((psn, at + 1, reason));
            // Posted after the error (hardware only): flushed.
            for _ in 0..3 {
                post(
                    &mut a,
                    &mut b,
                    &mut r,
                    &mut s,
                    false,
                    RKEY,
                    &mut next_psn,
                    &mut sq_index,
                );
                push_err(&mut r, &mut s, &mut sq_index);
            }
            break;
        }
    }
    if !dead {
        // Drain without loss: every posted message completes.
        for _ in 0..200_000 {
            let (una, next) = a.send_window().unwrap();
            if una == next && done.len() == model_posts {
                break;
            }
            if let Some(t) = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min() {
                now = now.max(t.min(now + Duration::from_us(2)));
            }
            round(&mut a, &mut b, &mut now, &mut r, 0, &mut s, &mut done, &mut last_una);
        }
        assert_eq!(done.len(), model_posts, "QP {qpn}: the model completed everything");
    }

    // The reference CQEs, in SQ order: the model's completions (successes
    // only when signaled), error records with their own status, messages
    // posted after the error flushed.
    for p in &s.pushes {
        match *p {
            Push::Msg {
                wr_id,
                opcode,
                len,
                sq_index,
                signaled,
                ..
            } => {
                let status = done.get(&wr_id).copied().unwrap_or(CqStatus::Flushed);
                if status == CqStatus::Success && !signaled {
                    s.unsignaled_done += 1;
                    continue;
                }
                s.want.push(Completion {
                    phase: false,
                    status,
                    opcode,
                    qp: qpn,
                    wr_id,
                    byte_len: len,
                    imm: None,
                    sq_index,
                });
            }
            Push::Err {
                status,
                opcode,
                wr_id,
                sq_index,
                len,
            } => {
                let status = CqStatus::from_u8(status).unwrap();
                // An unknown SQE opcode is not carried in the CQE.
                let opcode = if status == CqStatus::BadOpcode { 0 } else { opcode };
                s.want.push(Completion {
                    phase: false,
                    status,
                    opcode,
                    qp: qpn,
                    wr_id,
                    byte_len: len,
                    imm: None,
                    sq_index,
                });
            }
        }
    }
    s
}

fn now_zero() -> Instant {
    // post_write's time only feeds the pacing and RTO arm of segmentation,
    // which the exchange drives with its own clock.
    Instant::ZERO
}

fn bits<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut b = Bits::<N>::default();
    for (i, &x) in bytes.iter().enumerate() {
        b.set_bits::<8>(8 * i, (x as u64).into());
    }
    b
}

fn ctx_row(k: usize) -> Bits<256> {
    ctx_row_from(SETUPS[k].1, SETUPS[k].2)
}

/// A send-context row with this completion ring and start PSN.
fn ctx_row_from(ring: u32, start: u32) -> Bits<256> {
    let c = SqContext {
        sq_base: 0x1000,
        cq_index: ring as u16,
        addr_index: 0,
        dest_qp: 0x800,
        start_psn: start,
        pkey: 0xFFFF,
        sq_log2_size: 4,
        log2_mtu: 10,
        ev_count: 4,
        enable: true,
        send_mpr_units: 4,
        ev_min_active: 1,
    };
    bits::<256>(&c.encode().unwrap())
}

#[derive(Default)]
struct Outcome {
    got: Vec<Vec<Completion>>,
    cycles: u64,
    counters: HashMap<&'static str, u64>,
    cqe_stalls: u64,
    msg_waits: u64,
    dup_acks: u64,
    early_acks: u64,
}

const COUNTERS: [&str; 4] = ["list_full", "ack_dropped", "err_dropped", "cqe_error"];

fn run(seed: u64, n_posts: usize, cqe_backpressure: Stall) -> (Vec<Script>, Outcome) {
    let scripts: Vec<Script> = (0..SETUPS.len()).map(|k| script(k, seed, n_posts)).collect();
    let scripts = Arc::new(scripts);
    let out = Arc::new(Mutex::new(Outcome::default()));
    let (sc2, out2) = (scripts.clone(), out.clone());
    let mut uut = SendCompletions::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(SendCompletions, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let sc = sc2.clone();
        let mut o = out2.lock().unwrap();
        let mut r = Rng::from_state(seed);
        let n = SETUPS.len();
        o.got = vec![Vec::new(); n];
        let mut push_i = vec![0usize; n];
        let mut ack_i = vec![0usize; n];
        let mut stuck = vec![0u64; n];
        let mut fail_state = vec![0u8; n]; // 0 waiting, 1 taken, 2 extra ack taken, 3 extra report taken
        let mut push_busy = vec![false; n];
        let mut cur_msg: Option<usize> = None;
        let mut cur_err: Option<usize> = None;
        let mut cur_ack: Option<(usize, u32, bool)> = None; // (k, una, duplicate)
        let mut cur_rtx: Option<usize> = None;
        let mut cfgs: Vec<(u64, u64, Bits<256>)> = (0..n)
            .map(|k| (u64::from(table::SQ_CTX), u64::from(SETUPS[k].0), ctx_row(k)))
            .collect();
        let mut cycle = 0u64;
        let mut idle = 0u64;
        let mut cfg_noise_done = false;
        loop {
            // ---- drive ----
            x.cfg.valid.next = false;
            if !cfgs.is_empty() {
                let (t, i, d) = cfgs.remove(0);
                x.cfg.valid.next = true;
                x.cfg.table.next = t.into();
                x.cfg.index.next = i.into();
                x.cfg.data.next = d;
            } else if r.chance(3) {
                // Rows the block must ignore: other tables, a QP beyond
                // 255 that would alias QP 3, an unused QP.
                x.cfg.valid.next = true;
                let (t, i) = match r.below(3) {
                    0 => (5, 3),
                    1 => (1, 256 + 3),
                    _ => (1, 50),
                };
                x.cfg.table.next = t.into();
                x.cfg.index.next = i.into();
                x.cfg.data.next = ctx_row(0);
                cfg_noise_done = true;
            }
            let pick = |r: &mut Rng, ok: &dyn Fn(usize) -> bool| -> Option<usize> {
                let start = r.below(n as u64) as usize;
                (0..n).map(|i| (start + i) % n).find(|&k| ok(k))
            };
            if cur_msg.is_none() && PUSH_PAUSE.go(&mut r) {
                cur_msg = pick(&mut r, &|k| {
                    !push_busy[k] && matches!(sc[k].pushes.get(push_i[k]), Some(Push::Msg { .. }))
                });
                if let Some(k) = cur_msg {
                    push_busy[k] = true;
                }
            }
            if cur_err.is_none() && PUSH_PAUSE.go(&mut r) {
                cur_err = pick(&mut r, &|k| {
                    !push_busy[k] && matches!(sc[k].pushes.get(push_i[k]), Some(Push::Err { .. }))
                });
                if let Some(k) = cur_err {
                    push_busy[k] = true;
                }
            }
            // Acknowledgements pause for 300 of every 700 cycles per 16
            // list entries (a slow return path): the lists fill up
            // meanwhile.
            let ack_pause = cycle % ACK_ROUND < ACK_PAUSED;
            if cur_ack.is_none() && !ack_pause && ACK_PAUSE.go(&mut r) {
                let ready = |k: usize| {
                    sc[k]
                        .acks
                        .get(ack_i[k])
                        .is_some_and(|a| !a.gated || push_i[k] >= a.need || stuck[k] >= 30)
                };
                if let Some(k) = pick(&mut r, &ready) {
                    cur_ack = Some((k, sc[k].acks[ack_i[k]].una, false));
                } else if r.chance(5) {
                    // A repeated una (no advance): nothing may complete.
                    if let Some(k) = pick(&mut r, &|k| ack_i[k] > 0 && fail_state[k] == 0) {
                        cur_ack = Some((k, sc[k].acks[ack_i[k] - 1].una, true));
                    }
                } else if let Some(k) = pick(&mut r, &|k| fail_state[k] == 1) {
                    // After the failure: dropped and counted.
                    cur_ack = Some((k, r.below(1 << 24) as u32, true));
                }
            }
            if cur_rtx.is_none() {
                cur_rtx = pick(&mut r, &|k| match sc[k].fail {
                    Some((_, need, _)) => {
                        (fail_state[k] == 0 && push_i[k] >= need && ack_i[k] == sc[k].acks.len()) || fail_state[k] == 2
                    }
                    None => false,
                });
            }
            x.msg_valid.next = false;
            if let Some(k) = cur_msg {
                if let Push::Msg {
                    wr_id,
                    opcode,
                    len,
                    sq_index,
                    signaled,
                    first,
                    last,
                } = sc[k].pushes[push_i[k]]
                {
                    x.msg_valid.next = true;
                    x.msg_qp.next = u64::from(SETUPS[k].0).into();
                    x.msg_wr_id.next = wr_id.into();
                    x.msg_opcode.next = u64::from(opcode).into();
                    x.msg_len.next = u64::from(len).into();
                    x.msg_sq_index.next = u64::from(sq_index).into();
                    x.msg_signaled.next = signaled;
                    x.msg_first_psn.next = u64::from(first).into();
                    x.msg_last_psn.next = u64::from(last).into();
                }
            }
            x.req_err_valid.next = false;
            if let Some(k) = cur_err {
                if let Push::Err {
                    status,
                    opcode,
                    wr_id,
                    sq_index,
                    len,
                } = sc[k].pushes[push_i[k]]
                {
                    x.req_err_valid.next = true;
                    x.req_err_qp.next = u64::from(SETUPS[k].0).into();
                    x.req_err_status.next = u64::from(status).into();
                    x.req_err_opcode.next = u64::from(opcode).into();
                    x.req_err_wr_id.next = wr_id.into();
                    x.req_err_sq_index.next = u64::from(sq_index).into();
                    x.req_err_len.next = u64::from(len).into();
                }
            }
            x.ack_valid.next = false;
            if let Some((k, una, _)) = cur_ack {
                x.ack_valid.next = true;
                x.ack_qp.next = u64::from(SETUPS[k].0).into();
                x.ack_una.next = u64::from(una).into();
            }
            x.rtx_err_valid.next = false;
            if let Some(k) = cur_rtx {
                x.rtx_err_valid.next = true;
                x.rtx_err_qp.next = u64::from(SETUPS[k].0).into();
                let (psn, _, reason) = sc[k].fail.unwrap();
                x.rtx_err_psn.next = u64::from(psn).into();
                x.rtx_err_reason.next = reason.into();
            }
            x.cqe_ready.next = cqe_backpressure.go(&mut r);

            // ---- sample ----
            wait_clock_false!(sim, clock, x);
            let mut activity = false;
            for (k, st) in stuck.iter_mut().enumerate() {
                let waiting =
                    (cur_msg == Some(k) && !x.msg_ready.val()) || (cur_err == Some(k) && !x.req_err_ready.val());
                *st = if waiting { *st + 1 } else { 0 };
            }
            if x.msg_valid.val() && !x.msg_ready.val() {
                o.msg_waits += 1;
            }
            if x.msg_valid.val() && x.msg_ready.val() {
                let k = cur_msg.take().unwrap();
                push_i[k] += 1;
                push_busy[k] = false;
                activity = true;
            }
            if x.req_err_valid.val() && x.req_err_ready.val() {
                let k = cur_err.take().unwrap();
                push_i[k] += 1;
                push_busy[k] = false;
                activity = true;
            }
            if x.ack_valid.val() && x.ack_ready.val() {
                let (k, _, dup) = cur_ack.take().unwrap();
                if dup {
                    o.dup_acks += 1;
                    if fail_state[k] == 1 {
                        fail_state[k] = 2;
                    }
                } else {
                    if sc[k].acks[ack_i[k]].need > push_i[k] {
                        // Taken before the message records it covers.
                        o.early_acks += 1;
                    }
                    ack_i[k] += 1;
                }
                activity = true;
            }
            if x.rtx_err_valid.val() && x.rtx_err_ready.val() {
                let k = cur_rtx.take().unwrap();
                fail_state[k] = if fail_state[k] == 0 { 1 } else { 3 };
                activity = true;
            }
            if x.cqe_valid.val() && !x.cqe_ready.val() {
                o.cqe_stalls += 1;
            }
            if x.cqe_valid.val() && x.cqe_ready.val() {
                let mut bytes = [0u8; 32];
                let e = x.cqe_entry.val();
                for (i, b) in bytes.iter_mut().enumerate() {
                    *b = e.get_bits::<8>(8 * i).index() as u8;
                }
                let c = Completion::decode(&bytes).unwrap_or_else(|e| panic!("CQE does not decode: {e}"));
                let k = SETUPS
                    .iter()
                    .position(|s| s.0 == c.qp)
                    .unwrap_or_else(|| panic!("CQE for QP {}", c.qp));
                assert_eq!(
                    x.cqe_ring.val().index() as u32,
                    SETUPS[k].1,
                    "QP {}: its cq_index",
                    c.qp
                );
                let i = o.got[k].len();
                assert_eq!(Some(&c), sc[k].want.get(i), "QP {} completion {i}", c.qp);
                o.got[k].push(c);
                activity = true;
            }
            let pulses = [
                x.cnt_list_full.val(),
                x.cnt_ack_dropped.val(),
                x.cnt_err_dropped.val(),
                x.cnt_cqe_error.val(),
            ];
            for (name, v) in COUNTERS.iter().zip(pulses) {
                *o.counters.entry(name).or_insert(0) += u64::from(v);
            }
            wait_clock_true!(sim, clock, x);
            cycle += 1;
            idle = if activity { 0 } else { idle + 1 };
            let fed = (0..n).all(|k| {
                push_i[k] == sc[k].pushes.len()
                    && ack_i[k] == sc[k].acks.len()
                    && (sc[k].fail.is_none() || fail_state[k] == 3)
            });
            let all = (0..n).all(|k| o.got[k].len() == sc[k].want.len());
            if fed && all && idle > 40 {
                break;
            }
            if idle > 2000 || cycle > 100_000 {
                let left: Vec<_> = (0..n)
                    .map(|k| {
                        (
                            push_i[k],
                            sc[k].pushes.len(),
                            ack_i[k],
                            sc[k].acks.len(),
                            o.got[k].len(),
                            sc[k].want.len(),
                            fail_state[k],
                        )
                    })
                    .collect();
                panic!("stuck at cycle {cycle}: (pushed, pushes, acked, acks, cqes, want, fail) {left:?}");
            }
        }
        assert!(cfg_noise_done);
        o.cycles = cycle;
        drop(o);
        sim.done(x)
    });
    let t = std::time::Instant::now();
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    // The same cycles on the emitted Verilog: every output, every cycle.
    rec.check_verilog("mrc_send_cq", || {
        hw::flow::emit_block("mrc_send_cq", &mut SendCompletions::default()).verilog
    });
    let o = Arc::try_unwrap(out).ok().unwrap().into_inner().unwrap();
    eprintln!("{} cycles simulated in {:?}", o.cycles, t.elapsed());
    (Arc::try_unwrap(scripts).ok().unwrap(), o)
}

#[test]
fn send_completions_match_proto() {
    // SCQ_SEED=<n> runs another seed.
    let seed = std::env::var("SCQ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5C0_0001);
    let (sc, o) = run(seed, 64, Stall::go_percent(65));
    for (k, s) in sc.iter().enumerate() {
        assert_eq!(o.got[k], s.want, "QP {}: every completion, in order", SETUPS[k].0);
    }
    let all: Vec<&Completion> = o.got.iter().flatten().collect();
    let count = |st: CqStatus| all.iter().filter(|c| c.status == st).count();
    let errors = all.iter().filter(|c| c.status != CqStatus::Success).count() as u64;
    let unsignaled: usize = sc.iter().map(|s| s.unsignaled_done).sum();
    eprintln!(
        "CQEs {} (success {}, flushed {}, retry {}, remote access {}), unsignaled freed {unsignaled}, acks {}, list-full waits {}, \
         msg waits {}, CQE stalls {}, dup acks {}, acks ahead of their messages {}",
        all.len(),
        count(CqStatus::Success),
        count(CqStatus::Flushed),
        count(CqStatus::RetryExceeded),
        count(CqStatus::RemoteAccess),
        sc.iter().map(|s| s.acks.len()).sum::<usize>(),
        o.counters["list_full"],
        o.msg_waits,
        o.cqe_stalls,
        o.dup_acks,
        o.early_acks
    );
    // Counters.
    assert_eq!(o.counters["cqe_error"], errors, "one pulse per non-success CQE");
    assert_eq!(o.counters["ack_dropped"], 2, "the ack after each failure");
    assert_eq!(o.counters["err_dropped"], 2, "each failed QP's second error report");
    // Coverage.
    assert!(count(CqStatus::Success) >= 20, "successes");
    assert!(unsignaled >= 10, "unsignaled messages freed silently: {unsignaled}");
    assert_eq!(count(CqStatus::RetryExceeded), 1);
    assert_eq!(count(CqStatus::RemoteAccess), 1);
    assert!(count(CqStatus::Flushed) >= 4, "flushed");
    for st in [
        CqStatus::BadOpcode,
        CqStatus::BadFlags,
        CqStatus::BadLength,
        CqStatus::BadDoorbell,
    ] {
        assert!(count(st) >= 1, "{st:?} error records");
    }
    assert!(sc[0].wrapped, "QP 3's PSNs wrap");
    assert!(
        o.counters["list_full"] >= 3,
        "full lists: {} refusals",
        o.counters["list_full"]
    );
    assert!(o.cqe_stalls >= 20 && o.msg_waits >= 20 && o.dup_acks >= 2);
    assert!(
        o.early_acks >= 3,
        "acks ahead of their message records: {}",
        o.early_acks
    );
}

/// Entries per QP list the directed test fills (issue 16: 64, as many as
/// the requester keeps in flight; the lists had 16).
const LIST_ENTRIES: u32 = 64;
/// Messages completed before the full list: the pointers (one bit wider
/// than a slot) then wrap while the list is full.
const BEFORE_FULL: u32 = LIST_ENTRIES + 4;
/// The last message that fits, and the one that must wait.
const FULL_AT: u32 = BEFORE_FULL + LIST_ENTRIES;
const ONE_TOO_MANY: u32 = FULL_AT + 1;

/// Directed: the per-QP list's head/tail pointers wrapped while the list
/// is full. QP 200 completes `BEFORE_FULL` messages, each acknowledged as
/// it is taken (head = tail = `BEFORE_FULL` afterwards), then
/// `LIST_ENTRIES` more are pushed without an acknowledgement (the tail
/// wraps past the pointers' range, `2 x LIST_ENTRIES`, to 4): the list is
/// full and the next message must wait (msg_ready low, `list_full`
/// counted) until an ack frees it. The old Verilog form of the full test,
/// `(tail - head) == 32'h10` at 32 bits, saw 4 - 20 there (16-entry
/// lists), took the 17th over the head entry and lost a completion: the
/// lockstep replay of the emitted Verilog then differs (msg_ready, CQEs).
/// With 16-entry lists the test fails: the 17th message waits.
#[test]
fn list_full_after_pointer_wrap() {
    const K: usize = 1;
    let (qp, ring, start, _) = SETUPS[K];
    let out = Arc::new(Mutex::new((Vec::<Completion>::new(), 0u64, 0u64)));
    let out2 = out.clone();
    let mut uut = SendCompletions::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(SendCompletions, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut o = out2.lock().unwrap();
        let mut cfg_sent = false;
        // Message i: wr_id 0x100 + i, PSN start + i, one packet.
        let mut pushed = 0u32;
        // Held back: the push of message FULL_AT waits this long on a full list.
        let mut refused_cycles = 0u64;
        let mut acked_to = 0u32;
        let mut cycle = 0u64;
        loop {
            x.cfg.valid.next = false;
            x.msg_valid.next = false;
            x.ack_valid.next = false;
            x.req_err_valid.next = false;
            x.rtx_err_valid.next = false;
            x.cqe_ready.next = true;
            if !cfg_sent {
                x.cfg.valid.next = true;
                x.cfg.table.next = u64::from(table::SQ_CTX).into();
                x.cfg.index.next = u64::from(qp).into();
                x.cfg.data.next = ctx_row(K);
                cfg_sent = true;
            } else {
                // Pushes: BEFORE_FULL, then (once those completed) a list's
                // worth more and one too many, which must wait for their
                // ack.
                let push_limit = if o.0.len() < BEFORE_FULL as usize {
                    BEFORE_FULL
                } else {
                    ONE_TOO_MANY
                };
                if pushed < push_limit {
                    x.msg_valid.next = true;
                    x.msg_qp.next = u64::from(qp).into();
                    x.msg_wr_id.next = (0x100 + u64::from(pushed)).into();
                    x.msg_opcode.next = 1u64.into();
                    x.msg_len.next = 64u64.into();
                    x.msg_sq_index.next = u64::from(pushed).into();
                    x.msg_signaled.next = true;
                    let psn = u64::from((start + pushed) & 0xFF_FFFF);
                    x.msg_first_psn.next = psn.into();
                    x.msg_last_psn.next = psn.into();
                }
                // Acks: each of the first BEFORE_FULL as soon as it is
                // taken; the list's worth after the one too many has waited
                // 60 cycles; that one at the end.
                let ack = if pushed <= BEFORE_FULL && acked_to < pushed {
                    Some(pushed)
                } else if pushed == FULL_AT && refused_cycles >= 60 && acked_to < FULL_AT {
                    Some(FULL_AT)
                } else if pushed == ONE_TOO_MANY && acked_to < ONE_TOO_MANY {
                    Some(ONE_TOO_MANY)
                } else {
                    None
                };
                if let Some(n) = ack {
                    x.ack_valid.next = true;
                    x.ack_qp.next = u64::from(qp).into();
                    x.ack_una.next = u64::from((start + n) & 0xFF_FFFF).into();
                }
            }
            wait_clock_false!(sim, clock, x);
            if x.msg_valid.val() {
                if x.msg_ready.val() {
                    assert!(
                        pushed != FULL_AT || acked_to >= FULL_AT,
                        "the message after a full list's worth was taken into the full list"
                    );
                    pushed += 1;
                } else if pushed == FULL_AT {
                    refused_cycles += 1;
                }
            }
            if x.ack_valid.val() && x.ack_ready.val() {
                acked_to = (x.ack_una.val().index() as u32).wrapping_sub(start) & 0xFF_FFFF;
            }
            o.2 += u64::from(x.cnt_list_full.val());
            if x.cqe_valid.val() {
                let mut bytes = [0u8; 32];
                let e = x.cqe_entry.val();
                for (i, b) in bytes.iter_mut().enumerate() {
                    *b = e.get_bits::<8>(8 * i).index() as u8;
                }
                let c = Completion::decode(&bytes).unwrap_or_else(|e| panic!("CQE does not decode: {e}"));
                assert_eq!(x.cqe_ring.val().index() as u32, ring);
                o.0.push(c);
            }
            wait_clock_true!(sim, clock, x);
            cycle += 1;
            if o.0.len() == ONE_TOO_MANY as usize || cycle > 5_000 {
                eprintln!(
                    "cycle {cycle}: pushed {pushed}, acked to {acked_to}, CQEs {}, waited {refused_cycles}",
                    o.0.len()
                );
                break;
            }
        }
        o.1 = refused_cycles;
        drop(o);
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    rec.check_verilog("mrc_send_cq", || {
        hw::flow::emit_block("mrc_send_cq", &mut SendCompletions::default()).verilog
    });
    let (got, refused, list_full) = Arc::try_unwrap(out).ok().unwrap().into_inner().unwrap();
    let want: Vec<Completion> = (0..ONE_TOO_MANY)
        .map(|i| Completion {
            phase: false,
            status: CqStatus::Success,
            opcode: 1,
            qp,
            wr_id: 0x100 + u64::from(i),
            byte_len: 64,
            imm: None,
            sq_index: i,
        })
        .collect();
    assert_eq!(
        got, want,
        "every message completes once, in order, across the pointer wrap"
    );
    assert!(
        refused >= 60,
        "the message after a full list's worth waited: {refused} cycles"
    );
    assert!(list_full >= 1, "list_full counted: {list_full}");
}

/// One step of the directed reset test's script.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// A send-context row with this ring and start PSN (one cycle).
    Row { ring: u32, start: u32 },
    /// A signaled single-packet message record, held until taken.
    Msg { wr_id: u64, psn: u32 },
    /// An acknowledgement, held until taken; with `row`, a send-context
    /// row `cycles` after the acknowledgement is first offered (0: the
    /// same cycle), whether or not it was taken by then: (cycles, ring,
    /// start PSN).
    Ack { una: u32, row: Option<(u32, u32, u32)> },
    /// Nothing for this many cycles.
    Idle(u32),
}

/// Rounds of the reset test: round r puts its row r cycles after its
/// acknowledgement's first offer.
const RESET_ROUNDS: u32 = 16;
/// Messages of a round before its row, and how many its acknowledgement
/// covers.
const RESET_OLD: u32 = 6;
const RESET_ACKED: u32 = 4;
/// The low byte of a round's wr_id that marks its message after the row.
const RESET_MARK: u64 = 0xFF;

/// Round r's completion ring (its row's `cq_index`): it changes with
/// every row, so a CQE on the wrong side of a row names the wrong ring.
fn reset_ring(r: u32) -> u32 {
    200 + r % 2
}

/// A round's first PSN: far enough from the last round's (2^20) that
/// after the row the old round's unacknowledged messages are serially
/// before the new `una`, so an old list left in place completes them.
fn reset_start(r: u32) -> u32 {
    (0x1000 + (r << 20)) & 0xFF_FFFF
}

/// Directed: a send-context row for a QP whose acknowledgement is in
/// service resets the QP all the same (the row's reset stands, the
/// engine does not write the QP's old row back over it). Each round
/// pushes 6 messages, acknowledges 4 of them and writes the QP's row
/// (a new start PSN) 0-15 cycles after the acknowledgement is offered:
/// before it is taken, while its row is read, during the walk and its
/// write-back, and after. Then one message at the new start PSN and its
/// acknowledgement. A round's CQEs must be a prefix of its 4 acknowledged
/// messages (those completed before the row), then the new message: no
/// CQE for the old round's 2 unacknowledged ones (with the old row written
/// back, the new `una` is past them and they complete), and the new
/// message is not held behind them. The old messages' CQEs name the
/// round's ring, the new message's the next round's. Run with the CQE
/// output always taken and with it taken one cycle in three (a pop
/// waiting in `Walk` when the row comes).
#[test]
fn a_send_context_row_during_an_acknowledgement_resets_the_qp() {
    for cqe_stall in [false, true] {
        let before_row = reset_rounds(cqe_stall);
        eprintln!("CQE stalls {cqe_stall}: old messages completed before the row, per round: {before_row:?}");
        // Coverage: rows before the acknowledgement was read, during its
        // walk and after it.
        assert_eq!(before_row.first(), Some(&0));
        assert_eq!(before_row.last(), Some(&u64::from(RESET_ACKED)));
        assert!(
            before_row.iter().any(|&k| k > 0 && k < u64::from(RESET_ACKED)),
            "a row in the middle of a walk"
        );
    }
}

/// The reset test's rounds; per round, how many of its old messages
/// completed before its row.
fn reset_rounds(cqe_stall: bool) -> Vec<u64> {
    const K: usize = 1;
    let qp = SETUPS[K].0;
    let mut steps = vec![Step::Row {
        ring: reset_ring(0),
        start: reset_start(0),
    }];
    for r in 0..RESET_ROUNDS {
        let first = reset_start(r) + u32::from(r > 0);
        for i in 0..RESET_OLD {
            steps.push(Step::Msg {
                wr_id: (u64::from(r) << 8) | u64::from(i),
                psn: first + i,
            });
        }
        let next = reset_start(r + 1);
        steps.push(Step::Idle(12));
        steps.push(Step::Ack {
            una: first + RESET_ACKED,
            row: Some((r, reset_ring(r + 1), next)),
        });
        steps.push(Step::Idle(30));
        steps.push(Step::Msg {
            wr_id: (u64::from(r) << 8) | RESET_MARK,
            psn: next,
        });
        steps.push(Step::Ack {
            una: next + 1,
            row: None,
        });
        steps.push(Step::Idle(20));
    }
    let got = Arc::new(Mutex::new(Vec::<(Completion, u32)>::new()));
    let got2 = got.clone();
    let mut uut = SendCompletions::default();
    uut.connect_all();
    let rec = lockstep::Recording::new();
    let mut sim = lockstep_sim!(SendCompletions, clock, 100_000_000, rec, sim, {
        let mut x = sim.init()?;
        let mut o = got2.lock().unwrap();
        let mut at = 0usize;
        // Cycles into the current step, and whether its acknowledgement
        // was taken.
        let mut t = 0u32;
        let mut acked = false;
        let mut cycle = 0u64;
        while at < steps.len() {
            x.cfg.valid.next = false;
            x.msg_valid.next = false;
            x.ack_valid.next = false;
            x.req_err_valid.next = false;
            x.rtx_err_valid.next = false;
            x.cqe_ready.next = !cqe_stall || cycle.is_multiple_of(3);
            let row = |x: &mut Box<SendCompletions>, ring: u32, start: u32| {
                x.cfg.valid.next = true;
                x.cfg.table.next = u64::from(table::SQ_CTX).into();
                x.cfg.index.next = u64::from(qp).into();
                x.cfg.data.next = ctx_row_from(ring, start);
            };
            match steps[at] {
                Step::Row { ring, start } => row(&mut x, ring, start),
                Step::Msg { wr_id, psn } => {
                    x.msg_valid.next = true;
                    x.msg_qp.next = u64::from(qp).into();
                    x.msg_wr_id.next = wr_id.into();
                    x.msg_opcode.next = 1u64.into();
                    x.msg_len.next = 64u64.into();
                    x.msg_sq_index.next = (wr_id & 0xFFFF).into();
                    x.msg_signaled.next = true;
                    x.msg_first_psn.next = u64::from(psn & 0xFF_FFFF).into();
                    x.msg_last_psn.next = u64::from(psn & 0xFF_FFFF).into();
                }
                Step::Ack { una, row: at_row } => {
                    if !acked {
                        x.ack_valid.next = true;
                        x.ack_qp.next = u64::from(qp).into();
                        x.ack_una.next = u64::from(una & 0xFF_FFFF).into();
                    }
                    if let Some((cycles, ring, start)) = at_row {
                        if t == cycles {
                            row(&mut x, ring, start);
                        }
                    }
                }
                Step::Idle(_) => {}
            }
            wait_clock_false!(sim, clock, x);
            let done = match steps[at] {
                Step::Row { .. } => true,
                Step::Msg { .. } => x.msg_ready.val(),
                Step::Ack { row: at_row, .. } => {
                    acked |= x.ack_valid.val() && x.ack_ready.val();
                    acked && at_row.is_none_or(|(cycles, _, _)| t >= cycles)
                }
                Step::Idle(n) => t + 1 >= n,
            };
            if x.cqe_valid.val() && x.cqe_ready.val() {
                let mut bytes = [0u8; 32];
                let e = x.cqe_entry.val();
                for (i, b) in bytes.iter_mut().enumerate() {
                    *b = e.get_bits::<8>(8 * i).index() as u8;
                }
                let c = Completion::decode(&bytes).unwrap_or_else(|e| panic!("CQE does not decode: {e}"));
                o.push((c, x.cqe_ring.val().index() as u32));
            }
            assert!(
                !x.cnt_ack_dropped.val() && !x.cnt_err_dropped.val(),
                "nothing is in error"
            );
            wait_clock_true!(sim, clock, x);
            cycle += 1;
            if done {
                at += 1;
                t = 0;
                acked = false;
            } else {
                t += 1;
                assert!(t < 1_000, "step {at} ({:?}) never completed", steps[at]);
            }
        }
        drop(o);
        sim.done(x)
    });
    sim.run(Box::new(uut), 100_000_000_000).unwrap();
    rec.check_verilog("mrc_send_cq", || {
        hw::flow::emit_block("mrc_send_cq", &mut SendCompletions::default()).verilog
    });
    let got = Arc::try_unwrap(got).ok().unwrap().into_inner().unwrap();
    assert!(got.iter().all(|(c, _)| c.status == CqStatus::Success && c.qp == qp));
    let mut cqes = got.iter().map(|(c, ring)| (c.wr_id, *ring)).peekable();
    let mut before_row = Vec::new();
    for r in 0..RESET_ROUNDS {
        let round = u64::from(r) << 8;
        let mut k = 0u64;
        while let Some(&(id, ring)) = cqes.peek() {
            if id != round | k {
                break;
            }
            assert_eq!(ring, reset_ring(r), "round {r}: old message {k}'s ring");
            cqes.next();
            k += 1;
        }
        assert!(
            k <= u64::from(RESET_ACKED),
            "round {r}: {k} of the old messages completed, only {RESET_ACKED} were acknowledged"
        );
        assert_eq!(
            cqes.next(),
            Some((round | RESET_MARK, reset_ring(r + 1))),
            "round {r}: after {k} old completions, the message sent after the row, on the row's ring"
        );
        before_row.push(k);
    }
    assert_eq!(cqes.next(), None, "no completion after the last round's");
    before_row
}
