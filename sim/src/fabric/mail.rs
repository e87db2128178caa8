//! Events one part of a partitioned run schedules for another, as bytes
//! (`partition`): a packet reaching a node of another part travels as its
//! frame, exactly as the wire would carry it, plus the fabric's bookkeeping.
//!
//! A message is a kind byte, the event's time and tie key (`u64` each),
//! then by kind:
//!
//! | kind | fields |
//! |---|---|
//! | [`kind::ARRIVE`] | node, src, dst, wire, route, ingress (`u32` each), frame length (`u32`), frame without its payload, payload kind (`u8`), payload length (`u32`), payload (kind [`payload::BYTES`] only) |
//! | [`kind::PFC`] | port (`u32`), pause (`u8`) |
//! | [`kind::RESPONDER_FREE`] | flow (`u32`) |
//!
//! The frame is the packet's headers as the wire carries them (ICRC
//! included) around an empty payload; the payload follows apart, and a
//! payload of zeros (the simulator's WRITEs carry a slice of one zero
//! buffer) as its length only, which spares copying and checksumming it
//! twice per crossing. Integers are little-endian. The bytes only pass between the parts of
//! one run, built from one binary, so a message that does not decode is a
//! bug, and stops the run with what was wrong.

use bytes::Bytes;
use proto::time::Instant;
use proto::wire::mrc10::Profile;
use proto::wire::{Encap, Packet};

use super::event::Event;
use super::net::Slot;

/// Message kinds.
pub mod kind {
    pub const ARRIVE: u8 = 1;
    pub const PFC: u8 = 2;
    pub const RESPONDER_FREE: u8 = 3;
}

/// How a packet's payload travels.
pub mod payload {
    /// Zeros: the length only.
    pub const ZEROS: u8 = 0;
    /// The bytes follow.
    pub const BYTES: u8 = 1;
}

/// The packet's payload.
fn payload_of(p: &Packet) -> &Bytes {
    p.payload()
}

/// The packet with `payload` instead of its own.
fn with_payload(p: &Packet, payload: Bytes) -> Packet {
    let mut p = p.clone();
    match &mut p {
        Packet::Roce(r) => r.payload = payload,
        Packet::Mrc10(m) => m.payload = payload,
    }
    p
}

/// A decoded message.
#[derive(Debug)]
pub enum Mail {
    /// A packet reaches `node`.
    Arrive {
        at: Instant,
        tie: u64,
        node: u32,
        slot: Slot,
    },
    /// Any other event.
    Event { at: Instant, tie: u64, ev: Event },
}

fn put_head(buf: &mut Vec<u8>, kind: u8, at: Instant, tie: u64) {
    buf.push(kind);
    buf.extend_from_slice(&at.as_ps().to_le_bytes());
    buf.extend_from_slice(&tie.to_le_bytes());
}

fn put_u32(buf: &mut Vec<u8>, x: u32) {
    buf.extend_from_slice(&x.to_le_bytes());
}

/// Packet `slot` reaches `node` at `at`. `zeros`: at least as many zero
/// bytes as any payload.
pub fn put_arrive(buf: &mut Vec<u8>, at: Instant, tie: u64, node: u32, slot: &Slot, encap: &Encap, zeros: &[u8]) {
    put_head(buf, kind::ARRIVE, at, tie);
    for x in [node, slot.src, slot.dst, slot.wire, slot.route, slot.ingress] {
        put_u32(buf, x);
    }
    let len_at = buf.len();
    put_u32(buf, 0);
    let body = payload_of(&slot.pkt);
    with_payload(&slot.pkt, Bytes::new()).emit_frame(encap, &Profile::DEFAULT, buf);
    let len = (buf.len() - len_at - 4) as u32;
    buf[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
    if zeros.get(..body.len()) == Some(&body[..]) {
        buf.push(payload::ZEROS);
        put_u32(buf, body.len() as u32);
    } else {
        buf.push(payload::BYTES);
        put_u32(buf, body.len() as u32);
        buf.extend_from_slice(body);
    }
    #[cfg(debug_assertions)]
    {
        // Every packet that crosses in a test build comes back equal.
        let zeros = Bytes::copy_from_slice(zeros);
        let back = Reader::new(&buf[len_at - 1 - 8 - 8 - 6 * 4..], &zeros).next();
        match back {
            Some(Mail::Arrive { slot: s, .. }) => assert_eq!(s.pkt, slot.pkt, "a packet changed crossing parts"),
            other => panic!("an arrival read back as {other:?}"),
        }
    }
}

/// A PFC frame reaches port `port`.
pub fn put_pfc(buf: &mut Vec<u8>, at: Instant, tie: u64, port: u32, pause: bool) {
    put_head(buf, kind::PFC, at, tie);
    put_u32(buf, port);
    buf.push(pause as u8);
}

/// Flow `flow`'s responder is freed.
pub fn put_responder_free(buf: &mut Vec<u8>, at: Instant, tie: u64, flow: u32) {
    put_head(buf, kind::RESPONDER_FREE, at, tie);
    put_u32(buf, flow);
}

/// The messages of one buffer, in order.
pub struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
    /// Zero payloads are slices of this.
    zeros: &'a Bytes,
}

impl<'a> Reader<'a> {
    /// `zeros`: at least as many zero bytes as any payload.
    pub fn new(buf: &'a [u8], zeros: &'a Bytes) -> Reader<'a> {
        Reader { buf, at: 0, zeros }
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let b = self
            .buf
            .get(self.at..self.at + n)
            .unwrap_or_else(|| panic!("mail between parts cut short at byte {}", self.at));
        self.at += n;
        b
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("4 bytes"))
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().expect("8 bytes"))
    }
}

impl Iterator for Reader<'_> {
    type Item = Mail;

    fn next(&mut self) -> Option<Mail> {
        if self.at >= self.buf.len() {
            return None;
        }
        let k = self.u8();
        let at = Instant(self.u64());
        let tie = self.u64();
        Some(match k {
            kind::ARRIVE => {
                let [node, src, dst, wire, route, ingress] = [(); 6].map(|_| self.u32());
                let len = self.u32() as usize;
                let frame = self.take(len);
                let (pkt, _) = Packet::parse_frame(frame, &Profile::DEFAULT)
                    .unwrap_or_else(|e| panic!("a packet between parts does not parse back: {e}"));
                let how = self.u8();
                let n = self.u32() as usize;
                let body = match how {
                    payload::ZEROS => self.zeros.slice(..n),
                    payload::BYTES => Bytes::copy_from_slice(self.take(n)),
                    other => panic!("mail between parts with payload kind {other}"),
                };
                let pkt = with_payload(&pkt, body);
                Mail::Arrive {
                    at,
                    tie,
                    node,
                    slot: Slot {
                        pkt,
                        src,
                        dst,
                        wire,
                        route,
                        ingress,
                    },
                }
            }
            kind::PFC => {
                let port = self.u32();
                let pause = self.u8() != 0;
                Mail::Event {
                    at,
                    tie,
                    ev: Event::Pfc { port, pause },
                }
            }
            kind::RESPONDER_FREE => Mail::Event {
                at,
                tie,
                ev: Event::ResponderFree(self.u32()),
            },
            other => panic!("mail between parts of unknown kind {other}"),
        })
    }
}
