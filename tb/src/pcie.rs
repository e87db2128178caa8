//! The PCIe link between the card and the host, as the DMA server sees
//! it (docs/hw/host-model.md): the link's rate in each direction, the
//! bytes every TLP adds, the read request and payload size limits, the
//! read tags, and the host's read latency.
//!
//! The model is transaction level and in order, like the host it stands
//! for (a root complex returns the completions of one requester in the
//! order of its requests for the sizes the core asks for):
//!
//! * A read of `len` bytes becomes `ceil(len / max_read_request)` read
//!   requests, each a header-only TLP on the upstream direction (card to
//!   host) and each holds one tag until its last completion has arrived.
//!   A read is taken when a tag is free; its requests go out as tags come
//!   back.
//! * The host answers a request `read_latency` after the request has
//!   crossed the link; its data comes back in completions of at most
//!   `max_payload` bytes, each a TLP on the downstream direction (host to
//!   card), one after another at the link's rate.
//! * A write (posted) is sent as TLPs of at most `max_payload` bytes on
//!   the upstream direction; the card may hand over a write's next beat
//!   while no more than one full TLP of what it gave before waits for the
//!   link. Its data reach host memory `posted_latency` after they have
//!   crossed the link ([`crate::dma::DmaServer`] holds them until then).
//!
//! Not modelled: flow-control credits and data-link packets (ACK / update
//! DLLPs take a few percent of the link), completions split at the read
//! completion boundary (64 B) rather than at `max_payload`, address
//! alignment of requests, and the host's own memory bandwidth.

use std::collections::VecDeque;

/// The parameters of a link and its host. [`PcieConfig::gen3_x16`] is the
/// U250's and U280's slot; every field can be varied per run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcieConfig {
    /// Transfer rate per lane, GT/s (8 for PCIe 3.0).
    pub gts_per_lane: f64,
    /// Lanes (16).
    pub lanes: u32,
    /// Line code efficiency: 128b/130b from PCIe 3.0 on.
    pub encoding: f64,
    /// Largest TLP payload, bytes (the root complex's Max_Payload_Size).
    pub max_payload: u32,
    /// Largest read request, bytes (Max_Read_Request_Size).
    pub max_read_request: u32,
    /// Read requests the card may have outstanding (tags).
    pub read_tags: u32,
    /// From a read request's arrival at the host to its first completion
    /// leaving the host, picoseconds.
    pub read_latency_ps: u64,
    /// From a posted write's last byte crossing the link to its effect
    /// where it goes, picoseconds: a DMA write's data visible in host
    /// memory, or (the other direction, `cosim::device`) the driver's
    /// MMIO write reaching the card's register port.
    pub posted_latency_ps: u64,
    /// Bytes a TLP adds to its payload on the link: the framing token
    /// (4), sequence number and LCRC (6), a 4-DW header for 64-bit
    /// addresses (16).
    pub tlp_overhead: u32,
}

/// PCIe 3.0 rate per lane, GT/s.
pub const GEN3_GTS: f64 = 8.0;
/// PCIe 3.0's 128b/130b line code.
pub const GEN3_ENCODING: f64 = 128.0 / 130.0;
/// A common server root complex setting for Max_Payload_Size.
pub const MAX_PAYLOAD_DEFAULT: u32 = 256;
/// A common setting for Max_Read_Request_Size.
pub const MAX_READ_REQUEST_DEFAULT: u32 = 512;
/// Read tags of the model's card (PCIe 3.0 allows 256 with extended tags).
pub const READ_TAGS_DEFAULT: u32 = 64;
/// PCIe 3.0's 4-byte STP framing token, the data link layer's sequence
/// number (2 B) and LCRC (4 B), a 4-DW header (16 B).
pub const TLP_OVERHEAD_DEFAULT: u32 = 4 + 6 + 16;
/// Full-size write TLPs the card's side of the link may hold while the
/// link sends what came before (the DMA engine assembles a TLP before it
/// goes).
pub const WRITE_BUFFER_TLPS: u32 = 1;
/// Read latency `mrc perf` has always used for the host (`--dma-latency`).
pub const READ_LATENCY_DEFAULT_PS: u64 = 500_000;
/// A posted write's latency: half a read's round trip, the estimate
/// Intel's Time Coordinated Computing tools guide gives for a device's
/// write to memory ("half of the PCIe-from-memory stream latency"), taken
/// for both directions.
pub const POSTED_LATENCY_DEFAULT_PS: u64 = READ_LATENCY_DEFAULT_PS / 2;

impl PcieConfig {
    /// PCIe 3.0 x16, the other parameters at their defaults above.
    pub fn gen3_x16() -> PcieConfig {
        PcieConfig {
            gts_per_lane: GEN3_GTS,
            lanes: 16,
            encoding: GEN3_ENCODING,
            max_payload: MAX_PAYLOAD_DEFAULT,
            max_read_request: MAX_READ_REQUEST_DEFAULT,
            read_tags: READ_TAGS_DEFAULT,
            read_latency_ps: READ_LATENCY_DEFAULT_PS,
            posted_latency_ps: POSTED_LATENCY_DEFAULT_PS,
            tlp_overhead: TLP_OVERHEAD_DEFAULT,
        }
    }

    /// Bytes per second one direction carries, TLP overheads included.
    pub fn link_bytes_per_s(&self) -> f64 {
        self.gts_per_lane * 1e9 * f64::from(self.lanes) * self.encoding / 8.0
    }

    /// Payload bytes per second of back-to-back full-size TLPs: the most
    /// a stream of reads (or writes) can move.
    pub fn payload_bytes_per_s(&self) -> f64 {
        let p = f64::from(self.max_payload);
        self.link_bytes_per_s() * p / (p + f64::from(self.tlp_overhead))
    }

    /// Why this configuration cannot run, if it cannot.
    pub fn validate(&self) -> Result<(), PcieConfigError> {
        let pow2 = |v: u32| (128..=4096).contains(&v) && v.is_power_of_two();
        if !(self.gts_per_lane > 0.0 && self.gts_per_lane.is_finite()) || self.lanes == 0 {
            return Err(PcieConfigError::Rate);
        }
        if !(self.encoding > 0.0 && self.encoding <= 1.0) {
            return Err(PcieConfigError::Encoding);
        }
        if !pow2(self.max_payload) || !pow2(self.max_read_request) {
            return Err(PcieConfigError::Size);
        }
        if self.read_tags == 0 {
            return Err(PcieConfigError::Tags);
        }
        Ok(())
    }
}

impl Default for PcieConfig {
    fn default() -> PcieConfig {
        PcieConfig::gen3_x16()
    }
}

/// A configuration the link model refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PcieConfigError {
    #[error("PCIe rate and lanes must be positive")]
    Rate,
    #[error("PCIe line code efficiency must be in (0, 1]")]
    Encoding,
    #[error("PCIe max payload and max read request must be powers of two from 128 to 4096 bytes")]
    Size,
    #[error("PCIe read tags must be at least 1")]
    Tags,
}

/// The state of one link: when each direction is next free, and when
/// each tag in use comes back. Times are picoseconds from the start of
/// the run, kept as `f64` (a byte is 63.5 ps at PCIe 3.0 x16).
#[derive(Clone, Debug)]
pub struct PcieLink {
    cfg: PcieConfig,
    ps_per_byte: f64,
    /// Card to host: read requests and write data.
    up_free_ps: f64,
    /// Host to card: completions.
    down_free_ps: f64,
    /// When each tag in use is released, in the order taken (the host
    /// answers in order, so the times never decrease).
    tags_out: VecDeque<f64>,
    /// Bytes of the current write's TLP still to send before the next
    /// TLP (and its overhead) starts.
    write_tlp_left: u32,
    pub counters: PcieCounters,
}

/// What the link carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcieCounters {
    /// Read request TLPs sent.
    pub read_requests: u64,
    /// Completion TLPs received.
    pub completions: u64,
    /// Posted write TLPs sent.
    pub write_tlps: u64,
    /// Cycles a read waited for a tag (counted by the DMA server, which
    /// sees the request).
    pub tag_waits: u64,
}

/// One completion of a read: the read's bytes up to `end` (exclusive,
/// from the read's start) have arrived at `at_ps`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    pub end: u64,
    pub at_ps: f64,
}

impl PcieLink {
    pub fn new(cfg: PcieConfig) -> PcieLink {
        PcieLink {
            ps_per_byte: 1e12 / cfg.link_bytes_per_s(),
            cfg,
            up_free_ps: 0.0,
            down_free_ps: 0.0,
            tags_out: VecDeque::new(),
            write_tlp_left: 0,
            counters: PcieCounters::default(),
        }
    }

    pub fn config(&self) -> &PcieConfig {
        &self.cfg
    }

    /// Read requests a read of `len` bytes needs (one tag each).
    pub fn requests_for(&self, len: u64) -> u64 {
        len.div_ceil(u64::from(self.cfg.max_read_request)).max(1)
    }

    /// Tags in use at `now_ps`.
    pub fn tags_in_use(&mut self, now_ps: f64) -> u64 {
        while self.tags_out.front().is_some_and(|&t| t <= now_ps) {
            self.tags_out.pop_front();
        }
        self.tags_out.len() as u64
    }

    /// Whether a read can be taken at `now_ps`: a tag is free. Its
    /// requests then go out as tags come back ([`PcieLink::read`]).
    pub fn can_read(&mut self, now_ps: f64) -> bool {
        self.tags_in_use(now_ps) < u64::from(self.cfg.read_tags)
    }

    /// Issue a read of `len` bytes at `now_ps`: when each of its
    /// completions arrives, in order.
    pub fn read(&mut self, now_ps: f64, len: u64) -> Vec<Arrival> {
        let mrrs = u64::from(self.cfg.max_read_request);
        let mps = u64::from(self.cfg.max_payload);
        let ovh = f64::from(self.cfg.tlp_overhead);
        let latency = self.cfg.read_latency_ps as f64;
        let mut out = Vec::with_capacity(len.div_ceil(mps) as usize);
        let mut start = 0;
        while start < len {
            let req_len = (len - start).min(mrrs);
            // A request needs a tag: with all in use, it waits for the
            // first to come back (they come back in the order taken).
            let mut issue = now_ps;
            if self.tags_out.len() as u64 >= u64::from(self.cfg.read_tags) {
                if let Some(t) = self.tags_out.pop_front() {
                    issue = issue.max(t);
                }
            }
            // The request TLP: a header, no payload, upstream. One that
            // waits for a tag goes out later; it does not hold the link
            // for what is sent meanwhile (its 26 bytes are not counted).
            let sent = self.up_free_ps.max(issue) + ovh * self.ps_per_byte;
            if issue <= now_ps {
                self.up_free_ps = sent;
            }
            self.counters.read_requests += 1;
            let answer = sent + latency;
            let mut done = 0;
            while done < req_len {
                let n = (req_len - done).min(mps);
                let at = self.down_free_ps.max(answer) + (n as f64 + ovh) * self.ps_per_byte;
                self.down_free_ps = at;
                self.counters.completions += 1;
                done += n;
                out.push(Arrival {
                    end: start + done,
                    at_ps: at,
                });
            }
            self.tags_out.push_back(self.down_free_ps);
            start += req_len;
        }
        out
    }

    /// Whether the link can take a write's next bytes at `now_ps`: no
    /// more than one full TLP ([`WRITE_BUFFER_TLPS`]) of what it was given
    /// is still waiting to be sent. (Waiting for the link to be idle
    /// would leave it idle for the rest of every core cycle a beat does
    /// not fill: a 64-byte beat is 4.1 ns on the link, a cycle 3.1 ns.)
    pub fn write_ready(&self, now_ps: f64) -> bool {
        let tlp = f64::from(self.cfg.max_payload + self.cfg.tlp_overhead) * self.ps_per_byte;
        self.up_free_ps <= now_ps + WRITE_BUFFER_TLPS as f64 * tlp
    }

    /// The first bytes of a new write follow: its first TLP starts.
    pub fn write_begin(&mut self) {
        self.write_tlp_left = 0;
    }

    /// `bytes` more of the current write leave at `now_ps`; returns when
    /// the last of them has crossed the link.
    pub fn write(&mut self, now_ps: f64, bytes: u32) -> f64 {
        let mut t = self.up_free_ps.max(now_ps);
        let mut left = bytes;
        while left > 0 {
            if self.write_tlp_left == 0 {
                self.write_tlp_left = self.cfg.max_payload;
                self.counters.write_tlps += 1;
                t += f64::from(self.cfg.tlp_overhead) * self.ps_per_byte;
            }
            let n = left.min(self.write_tlp_left);
            t += f64::from(n) * self.ps_per_byte;
            self.write_tlp_left -= n;
            left -= n;
        }
        self.up_free_ps = t;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn gen3_x16_rates() {
        let c = PcieConfig::gen3_x16();
        assert!(close(c.link_bytes_per_s(), 15.754e9, 1e-3));
        // 256 of every 282 bytes are payload.
        assert!(close(
            c.payload_bytes_per_s(),
            c.link_bytes_per_s() * 256.0 / 282.0,
            1e-12
        ));
        assert!(c.validate().is_ok());
        for bad in [
            PcieConfig { lanes: 0, ..c },
            PcieConfig { max_payload: 100, ..c },
            PcieConfig {
                max_read_request: 8192,
                ..c
            },
            PcieConfig { read_tags: 0, ..c },
            PcieConfig { encoding: 1.5, ..c },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn one_small_read_takes_latency_plus_two_tlps() {
        let c = PcieConfig::gen3_x16();
        let mut l = PcieLink::new(c);
        let a = l.read(0.0, 64);
        assert_eq!(a.len(), 1);
        let ps = 1e12 / c.link_bytes_per_s();
        let want = 26.0 * ps + c.read_latency_ps as f64 + (64.0 + 26.0) * ps;
        assert!(close(a[0].at_ps, want, 1e-12), "{} vs {want}", a[0].at_ps);
        assert_eq!(a[0].end, 64);
        assert_eq!(l.counters.read_requests, 1);
    }

    #[test]
    fn a_large_read_is_split_by_request_and_payload_size() {
        let mut l = PcieLink::new(PcieConfig::gen3_x16());
        let a = l.read(0.0, 4096 + 100);
        // 9 requests (8 x 512 + 100), 17 completions (16 x 256 + 100).
        assert_eq!(l.counters.read_requests, 9);
        assert_eq!(a.len(), 17);
        assert_eq!(a.last().unwrap().end, 4196);
        assert!(a.windows(2).all(|w| w[0].end < w[1].end && w[0].at_ps < w[1].at_ps));
        assert_eq!(l.tags_in_use(0.0), 9);
        assert_eq!(l.tags_in_use(a.last().unwrap().at_ps), 0);
    }

    /// Back-to-back 4 KiB reads move the link's payload rate, not more.
    #[test]
    fn streaming_reads_reach_the_payload_rate() {
        let c = PcieConfig::gen3_x16();
        let mut l = PcieLink::new(c);
        let mut now = 0.0;
        let mut last = 0.0;
        let n = 2000u64;
        for _ in 0..n {
            // Issue as soon as tags allow, in 1 ns steps.
            while !l.can_read(now) {
                now += 1000.0;
            }
            last = l.read(now, 4096).last().unwrap().at_ps;
        }
        let rate = (n * 4096) as f64 / (last * 1e-12);
        // 64 tags x 512 B over 0.5 us is 65 GB/s of reads in flight: the
        // link, not the tags, is the limit.
        assert!(close(rate, c.payload_bytes_per_s(), 0.01), "{rate:e}");
    }

    /// With a long latency the tags bound the rate: 64 x 512 B per
    /// latency.
    #[test]
    fn tags_bound_the_read_rate_under_long_latency() {
        let c = PcieConfig {
            read_latency_ps: 10_000_000,
            ..PcieConfig::gen3_x16()
        };
        let mut l = PcieLink::new(c);
        let mut now = 0.0;
        let mut last = 0.0;
        for _ in 0..400 {
            while !l.can_read(now) {
                now += 1000.0;
            }
            last = l.read(now, 512).last().unwrap().at_ps;
        }
        let rate = (400 * 512) as f64 / (last * 1e-12);
        let bound = 64.0 * 512.0 / 10e-6;
        assert!(rate <= bound * 1.01 && rate >= bound * 0.85, "{rate:e} vs {bound:e}");
    }

    /// Beats offered every core cycle (99/32 ns), taken whenever the link
    /// is ready, move the link's payload rate: the link is never idle
    /// while writes wait.
    #[test]
    fn streaming_writes_at_the_core_clock_reach_the_payload_rate() {
        let c = PcieConfig::gen3_x16();
        let mut l = PcieLink::new(c);
        let cycle = 99_000.0 / 32.0;
        let mut now = 0.0;
        let mut bytes = 0u64;
        l.write_begin();
        while bytes < 4 << 20 {
            if l.write_ready(now) {
                l.write(now, 64);
                bytes += 64;
                if bytes.is_multiple_of(4096) {
                    l.write_begin();
                }
            }
            now += cycle;
        }
        let rate = bytes as f64 / (l.up_free_ps * 1e-12);
        assert!(
            close(rate, c.payload_bytes_per_s(), 0.01),
            "{rate:e} vs {:e}",
            c.payload_bytes_per_s()
        );
    }

    /// A read waiting for a tag does not hold the link for writes.
    #[test]
    fn a_read_waiting_for_a_tag_does_not_block_writes() {
        let c = PcieConfig {
            read_tags: 1,
            ..PcieConfig::gen3_x16()
        };
        let mut l = PcieLink::new(c);
        l.read(0.0, 1024);
        // The second request waits about 500 ns for the tag; a write
        // offered at 10 ns goes.
        assert!(l.write_ready(10_000.0));
    }

    /// A read larger than the tags allow waits for tags between its
    /// requests: with one tag, each request a latency after the last.
    #[test]
    fn a_read_needing_more_tags_than_free_waits_between_requests() {
        let c = PcieConfig {
            read_tags: 1,
            read_latency_ps: 5_000_000,
            ..PcieConfig::gen3_x16()
        };
        let mut l = PcieLink::new(c);
        assert!(l.can_read(0.0));
        let a = l.read(0.0, 4096);
        let last = a.last().unwrap().at_ps;
        // Eight requests one after another: at least 8 latencies.
        assert!(last >= 8.0 * 5e6, "{last}");
        assert!(last < 8.0 * 5.05e6, "{last}");
        // (Times only move forward: `tags_in_use` forgets what it released.)
        assert_eq!(l.tags_in_use(0.0), 1);
        assert!(!l.can_read(last - 1.0));
        assert!(l.can_read(last));
    }

    #[test]
    fn writes_pay_one_overhead_per_payload_tlp() {
        let c = PcieConfig::gen3_x16();
        let mut l = PcieLink::new(c);
        l.write_begin();
        for _ in 0..64 {
            l.write(0.0, 64);
        }
        // 4096 bytes: 16 TLPs of 256.
        assert_eq!(l.counters.write_tlps, 16);
        let ps = 1e12 / c.link_bytes_per_s();
        assert!(close(l.up_free_ps, (4096.0 + 16.0 * 26.0) * ps, 1e-12));
        // More than one TLP waits: no more bytes now.
        assert!(!l.write_ready(0.0));
        let tlp = (256.0 + 26.0) * ps;
        assert!(!l.write_ready(l.up_free_ps - tlp - 1.0));
        assert!(l.write_ready(l.up_free_ps - tlp));
        // A new write starts a new TLP even if the last one had room.
        l.write_begin();
        l.write(l.up_free_ps, 8);
        assert_eq!(l.counters.write_tlps, 17);
    }
}
