//! The card's side of a phase-bit ring (a CQ or the EV-event ring): it
//! writes entry `producer` at slot `producer mod 2^log2` with the phase bit
//! of that pass (1 on the first pass, flipped on each wrap), and never
//! more than the ring holds beyond the consumer index the driver last
//! reported. Entries that do not fit wait, in order, until the driver
//! reports progress ([`RingWriter::push`]: a CQ loses nothing), or are
//! dropped ([`RingWriter::push_or_drop`]: the EV-event ring, as the
//! card's).

use std::collections::VecDeque;

use crate::device::DmaBuffer;

/// A ring the NIC writes.
#[derive(Debug)]
pub struct RingWriter<const N: usize> {
    buf: DmaBuffer,
    /// Byte offset of slot 0 in `buf`.
    at: usize,
    log2: u8,
    producer: u32,
    consumer: u32,
    /// Entries written to the ring while it was full, oldest first.
    backlog: VecDeque<[u8; N]>,
}

impl<const N: usize> RingWriter<N> {
    pub fn new(buf: DmaBuffer, at: usize, log2: u8) -> RingWriter<N> {
        RingWriter {
            buf,
            at,
            log2,
            producer: 0,
            consumer: 0,
            backlog: VecDeque::new(),
        }
    }

    fn slots(&self) -> u32 {
        1 << self.log2
    }

    /// The phase bit of the next entry written.
    fn phase(&self) -> bool {
        (self.producer >> self.log2) & 1 == 0
    }

    /// Queue `entry` (its phase bit is set here, byte 0 bit 0); how many
    /// entries reached the ring (0 while it is full).
    pub fn push(&mut self, entry: [u8; N]) -> usize {
        self.backlog.push_back(entry);
        self.flush()
    }

    /// Write `entry` if the ring has room now; false (nothing written)
    /// if it is full. The card's EV-event ring writer drops what does not
    /// fit, and counts it: the EV-event ring is written this way.
    pub fn push_or_drop(&mut self, entry: [u8; N]) -> bool {
        if !self.backlog.is_empty() || self.producer.wrapping_sub(self.consumer) >= self.slots() {
            return false;
        }
        self.push(entry) == 1
    }

    /// The driver consumed entries up to `consumer` (free running); how
    /// many entries waiting for room then reached the ring.
    pub fn set_consumer(&mut self, consumer: u32) -> usize {
        // A report behind the last one, or ahead of what was written, is
        // a driver bug: keep the ring's own view.
        if consumer.wrapping_sub(self.consumer) <= self.producer.wrapping_sub(self.consumer) {
            self.consumer = consumer;
        }
        self.flush()
    }

    /// Entries waiting for room.
    pub fn backlog(&self) -> usize {
        self.backlog.len()
    }

    fn flush(&mut self) -> usize {
        let mut written = 0;
        while self.producer.wrapping_sub(self.consumer) < self.slots() {
            let Some(mut e) = self.backlog.pop_front() else {
                break;
            };
            e[0] = (e[0] & !1) | u8::from(self.phase());
            let slot = (self.producer & (self.slots() - 1)) as usize;
            // The body first, the phase byte last: the driver reads the
            // rest of an entry only after seeing its phase.
            let off = self.at + slot * N;
            let _ = self.buf.write(off + 1, &e[1..]);
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            let _ = self.buf.write(off, &e[..1]);
            self.producer = self.producer.wrapping_add(1);
            written += 1;
        }
        written
    }
}
