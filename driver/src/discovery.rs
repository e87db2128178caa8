//! Discovery: walk BAR0's register-block list and check it against the
//! map this driver was compiled with ([`crate::regmap`]).
//!
//! Every block starts `{type, version, next}`; the list starts at 0 with
//! the build-ID block. The walk refuses, with a typed error, anything it
//! was not built for: an unknown block type, a known type at another
//! version, a missing or repeated block, a bad next pointer, a loop, an
//! over-long list, a build ID other than the one asked for. All-ones
//! reads (a PCIe read of a removed or hung card) stop the walk at once
//! with [`DiscoveryError::AllOnes`]. The walk visits each address at most
//! once and each known block type at most once, so it reads at most
//! `BLOCKS.len() + 1` headers: a garbage device cannot make it spin.

use crate::Device;
use contract::regmap::{self, HDR_NEXT, HDR_TYPE, HDR_VERSION};

/// A block type as its four characters (`MRCB`), or hex when not ASCII.
pub fn fourcc(t: u32) -> String {
    let b = t.to_be_bytes();
    if b.iter().all(|c| c.is_ascii_graphic()) {
        String::from_utf8_lossy(&b).into_owned()
    } else {
        format!("{t:#010x}")
    }
}

/// Which bitstream build to accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BuildExpectation {
    /// Any build whose block types and versions match (the default: the
    /// versions are what make a driver and a bitstream compatible).
    #[default]
    Any,
    /// Exactly this git hash prefix (`build_id.git_hash_hi:lo`), e.g. the
    /// one recorded next to the bitstream file.
    Exact(u64),
}

/// What the walk found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// (name, base) of each block, in list order.
    pub blocks: Vec<(&'static str, u64)>,
    /// First 16 hex digits of the bitstream's source commit.
    pub git_hash: u64,
    /// Build time, UNIX seconds.
    pub build_date: u32,
    /// Counters the bank reports (`counters.num`).
    pub counters: u32,
    /// Base of the counter block.
    pub counters_base: u64,
    /// Base of the config-table block.
    pub cfg_base: u64,
    /// Base of the fault-injection block.
    pub fault_inject_base: u64,
    /// Byte address of the doorbell window and its number of doorbells.
    pub doorbell_window: u64,
    pub doorbell_qps: u32,
    /// Byte address of the descriptor push window (`regmap::push`), when
    /// the bitstream has the push cache (the block is optional: without
    /// it the driver rings doorbells only).
    pub push_window: Option<u64>,
    /// The push window takes small payloads too (`regmap::push::PAYLOAD`:
    /// the window reaches its key word).
    pub push_payload: bool,
}

impl DeviceInfo {
    /// What discovery finds on a bitstream of exactly this driver's map
    /// (build ID 0): for devices without a register file (the null device
    /// of the benchmarks).
    pub fn this_driver() -> DeviceInfo {
        let base = |t: u32| {
            regmap::BLOCKS
                .iter()
                .find(|b| b.block_type == t)
                .map_or(0, |b| u64::from(b.base))
        };
        DeviceInfo {
            blocks: regmap::BLOCKS.iter().map(|b| (b.name, u64::from(b.base))).collect(),
            git_hash: 0,
            build_date: 0,
            counters: regmap::N_COUNTERS as u32,
            counters_base: base(regmap::counters::TYPE),
            cfg_base: base(regmap::cfg::TYPE),
            fault_inject_base: base(regmap::fault_inject::TYPE),
            doorbell_window: u64::from(regmap::doorbell::WINDOW),
            doorbell_qps: regmap::doorbell::QPS,
            push_window: Some(u64::from(regmap::push::WINDOW)),
            push_payload: true,
        }
    }
}

/// A device the driver refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    #[error("BAR0 read at {offset:#06x} returned all-ones: the card is gone (surprise removal), hung, or BAR0 is not mapped")]
    AllOnes { offset: u64 },
    #[error("not an MRC NIC: the block at 0 has type {} (want the build-ID block MRCB)", fourcc(*found))]
    NotMrc { found: u32 },
    #[error("unknown register block type {} at {base:#06x}: the bitstream is newer or other than this driver (built for {})", fourcc(*block_type), known_blocks())]
    UnknownBlock { base: u64, block_type: u32 },
    #[error("block `{name}` at {base:#06x} has version {have:#010x}, this driver was built for {want:#010x}: driver and bitstream come from different revisions; load the matching bitstream or rebuild the driver")]
    VersionMismatch {
        name: &'static str,
        base: u64,
        have: u32,
        want: u32,
    },
    #[error("block at {base:#06x} points to {next:#x}, outside BAR0 ({bar_len:#x} bytes) or not word aligned")]
    BadNext { base: u64, next: u64, bar_len: u64 },
    #[error("the block list loops: block at {base:#06x} points back to {next:#06x}")]
    Loop { base: u64, next: u64 },
    #[error("block `{0}` appears twice")]
    Duplicate(&'static str),
    #[error("block `{0}` is missing from the list")]
    Missing(&'static str),
    #[error("bitstream build {have:016x}, expected {want:016x}")]
    BuildMismatch { have: u64, want: u64 },
    #[error("doorbell window at {window:#x} with {qps} doorbells does not fit BAR0 ({bar_len:#x} bytes) or the 256 QPs of this driver")]
    BadDoorbellWindow { window: u64, qps: u32, bar_len: u64 },
    #[error("descriptor push window at {window:#x} of {size} bytes does not hold a push or does not fit BAR0 ({bar_len:#x} bytes)")]
    BadPushWindow { window: u64, size: u64, bar_len: u64 },
    #[error("counter bank reports {num} counters, more than its {max} slots")]
    BadCounterCount { num: u32, max: usize },
}

fn known_blocks() -> String {
    regmap::BLOCKS
        .iter()
        .map(|b| format!("{} v{:#x}", fourcc(b.block_type), b.version))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Read a word, refusing all-ones.
fn read(dev: &dyn Device, offset: u64) -> Result<u32, DiscoveryError> {
    let v = dev.read32(offset);
    if v == u32::MAX {
        return Err(DiscoveryError::AllOnes { offset });
    }
    Ok(v)
}

/// Walk the block list of `dev` and check it. See the module doc.
pub fn discover(dev: &dyn Device, build: BuildExpectation) -> Result<DeviceInfo, DiscoveryError> {
    let bar_len = dev.bar_len();
    let mut seen: Vec<u64> = Vec::new();
    let mut found: Vec<(&'static str, u64)> = Vec::new();
    let mut base = 0u64;
    loop {
        seen.push(base);
        let block_type = read(dev, base + u64::from(HDR_TYPE))?;
        if base == 0 && block_type != regmap::build_id::TYPE {
            return Err(DiscoveryError::NotMrc { found: block_type });
        }
        let known = regmap::BLOCKS
            .iter()
            .find(|b| b.block_type == block_type)
            .ok_or(DiscoveryError::UnknownBlock { base, block_type })?;
        let version = read(dev, base + u64::from(HDR_VERSION))?;
        if version != known.version {
            return Err(DiscoveryError::VersionMismatch {
                name: known.name,
                base,
                have: version,
                want: known.version,
            });
        }
        if found.iter().any(|(n, _)| *n == known.name) {
            return Err(DiscoveryError::Duplicate(known.name));
        }
        found.push((known.name, base));
        let next = u64::from(read(dev, base + u64::from(HDR_NEXT))?);
        if next == 0 {
            break;
        }
        if !next.is_multiple_of(4) || next.saturating_add(u64::from(HDR_NEXT) + 4) > bar_len {
            return Err(DiscoveryError::BadNext { base, next, bar_len });
        }
        if seen.contains(&next) {
            return Err(DiscoveryError::Loop { base, next });
        }
        base = next;
    }
    let base_of = |name: &'static str| {
        found
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, b)| b)
            .ok_or(DiscoveryError::Missing(name))
    };
    let build_base = base_of("build_id")?;
    let counters_base = base_of("counters")?;
    let fault_inject_base = base_of("fault_inject")?;
    let cfg_base = base_of("cfg")?;
    let doorbell_base = base_of("doorbell")?;

    let hi = read(dev, build_base + u64::from(regmap::build_id::GIT_HASH_HI))?;
    let lo = read(dev, build_base + u64::from(regmap::build_id::GIT_HASH_LO))?;
    let git_hash = u64::from(hi) << 32 | u64::from(lo);
    // A build date may legitimately be anything but all-ones.
    let build_date = read(dev, build_base + u64::from(regmap::build_id::BUILD_DATE))?;
    if let BuildExpectation::Exact(want) = build {
        if git_hash != want {
            return Err(DiscoveryError::BuildMismatch { have: git_hash, want });
        }
    }
    let counters = read(dev, counters_base + u64::from(regmap::counters::NUM))?;
    if counters as usize > regmap::counters::MAX {
        return Err(DiscoveryError::BadCounterCount {
            num: counters,
            max: regmap::counters::MAX,
        });
    }
    let window = u64::from(read(dev, doorbell_base + u64::from(regmap::doorbell::WINDOW_REG))?);
    let qps = read(dev, doorbell_base + u64::from(regmap::doorbell::QPS_REG))?;
    let window_end = window.checked_add(4 * u64::from(qps));
    if qps == 0 || qps > regmap::doorbell::QPS || !window.is_multiple_of(4) || window_end.is_none_or(|e| e > bar_len) {
        return Err(DiscoveryError::BadDoorbellWindow { window, qps, bar_len });
    }
    // The push window, when the block is there: it must fit the BAR.
    let mut push_payload = false;
    let push_window = match found.iter().find(|(n, _)| *n == "push") {
        None => None,
        Some(&(_, b)) => {
            let w = u64::from(read(dev, b + u64::from(regmap::push::WINDOW_REG))?);
            let size = u64::from(read(dev, b + u64::from(regmap::push::SIZE_REG))?);
            if !w.is_multiple_of(4) || size < u64::from(regmap::push::SLOT_HI) + 4 || w.saturating_add(size) > bar_len {
                return Err(DiscoveryError::BadPushWindow {
                    window: w,
                    size,
                    bar_len,
                });
            }
            push_payload = size >= u64::from(regmap::push::PAYLOAD_KEY) + 4;
            Some(w)
        }
    };
    Ok(DeviceInfo {
        blocks: found,
        git_hash,
        build_date,
        counters,
        counters_base,
        cfg_base,
        fault_inject_base,
        doorbell_window: window,
        doorbell_qps: qps,
        push_window,
        push_payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::{MockDevice, MOCK_GIT_HASH};
    use crate::NullDevice;

    #[test]
    fn walks_the_map_of_this_revision() {
        let dev = MockDevice::new();
        let info = discover(&dev, BuildExpectation::Any).unwrap();
        let want: Vec<_> = regmap::BLOCKS.iter().map(|b| (b.name, u64::from(b.base))).collect();
        assert_eq!(info.blocks, want);
        assert_eq!(info.git_hash, MOCK_GIT_HASH);
        assert_eq!(info.cfg_base, u64::from(regmap::cfg::BASE));
        assert_eq!(info.doorbell_window, u64::from(regmap::doorbell::WINDOW));
        assert_eq!(info.doorbell_qps, regmap::doorbell::QPS);
        assert_eq!(info.counters as usize, regmap::N_COUNTERS);
        assert!(discover(&dev, BuildExpectation::Exact(MOCK_GIT_HASH)).is_ok());
        assert_eq!(
            DeviceInfo {
                git_hash: MOCK_GIT_HASH,
                ..DeviceInfo::this_driver()
            },
            info
        );
        assert_eq!(
            discover(&dev, BuildExpectation::Exact(7)),
            Err(DiscoveryError::BuildMismatch {
                have: MOCK_GIT_HASH,
                want: 7
            })
        );
    }

    #[test]
    fn refuses_other_revisions_with_a_clear_message() {
        let dev = MockDevice::new();
        let cfg = u64::from(regmap::cfg::BASE);
        dev.override_reg(cfg + u64::from(HDR_VERSION), 0x0002_0000);
        let e = discover(&dev, BuildExpectation::Any).unwrap_err();
        assert_eq!(
            e,
            DiscoveryError::VersionMismatch {
                name: "cfg",
                base: cfg,
                have: 0x0002_0000,
                want: regmap::cfg::VERSION
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("different revisions") && msg.contains("`cfg`"), "{msg}");
        dev.clear_override(cfg + u64::from(HDR_VERSION));

        // The old RX-parser block that the counter bank replaced.
        let cnt = u64::from(regmap::counters::BASE);
        dev.override_reg(cnt, u32::from_be_bytes(*b"MRCP"));
        let e = discover(&dev, BuildExpectation::Any).unwrap_err();
        assert_eq!(
            e,
            DiscoveryError::UnknownBlock {
                base: cnt,
                block_type: u32::from_be_bytes(*b"MRCP")
            }
        );
        assert!(e.to_string().contains("MRCP"), "{e}");
        dev.clear_override(cnt);

        // Something else at 0.
        dev.override_reg(0, 0x1234_5678);
        assert_eq!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::NotMrc { found: 0x1234_5678 })
        );
    }

    #[test]
    fn refuses_broken_lists_without_spinning() {
        let dev = MockDevice::new();
        let fi = u64::from(regmap::fault_inject::BASE);
        let cfg = u64::from(regmap::cfg::BASE);
        // A loop: cfg points back to the fault-injection block.
        dev.override_reg(cfg + u64::from(HDR_NEXT), fi as u32);
        assert_eq!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::Loop { base: cfg, next: fi })
        );
        // A self loop.
        dev.override_reg(cfg + u64::from(HDR_NEXT), cfg as u32);
        assert_eq!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::Loop { base: cfg, next: cfg })
        );
        // Out of the BAR, misaligned.
        dev.override_reg(cfg + u64::from(HDR_NEXT), 0x2_0000);
        assert!(matches!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::BadNext { next: 0x2_0000, .. })
        ));
        dev.override_reg(cfg + u64::from(HDR_NEXT), 0x402);
        assert!(matches!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::BadNext { next: 0x402, .. })
        ));
        // The list ends early: the doorbell block is missing.
        dev.override_reg(cfg + u64::from(HDR_NEXT), 0);
        assert_eq!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::Missing("doorbell"))
        );
        // The same block twice (cfg points at a copy of the fault-injection header).
        dev.override_reg(cfg + u64::from(HDR_NEXT), 0x800);
        dev.override_reg(0x800, regmap::fault_inject::TYPE);
        dev.override_reg(0x804, regmap::fault_inject::VERSION);
        assert_eq!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::Duplicate("fault_inject"))
        );
        // An unknown block after the known ones.
        let dev = MockDevice::new();
        dev.override_reg(u64::from(regmap::doorbell::BASE) + u64::from(HDR_NEXT), 0x2000);
        dev.override_reg(0x2000, u32::from_be_bytes(*b"ZZZZ"));
        assert!(matches!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::UnknownBlock { base: 0x2000, .. })
        ));
    }

    #[test]
    fn all_ones_is_surprise_removal_anywhere_in_the_walk() {
        let dev = MockDevice::new();
        dev.set_all_ones(true);
        assert_eq!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::AllOnes { offset: 0 })
        );
        dev.set_all_ones(false);
        // All-ones in the middle: a next pointer, the build ID, the window.
        for off in [
            u64::from(regmap::fault_inject::BASE) + u64::from(HDR_NEXT),
            u64::from(regmap::build_id::GIT_HASH_LO),
            u64::from(regmap::doorbell::BASE + regmap::doorbell::QPS_REG),
        ] {
            dev.override_reg(off, u32::MAX);
            assert_eq!(
                discover(&dev, BuildExpectation::Any),
                Err(DiscoveryError::AllOnes { offset: off })
            );
            dev.clear_override(off);
        }
        // A device that reads 0 everywhere is not an MRC NIC.
        assert_eq!(
            discover(&NullDevice::new(), BuildExpectation::Any),
            Err(DiscoveryError::NotMrc { found: 0 })
        );
    }

    #[test]
    fn refuses_a_doorbell_window_outside_the_bar() {
        let dev = MockDevice::new();
        let db = u64::from(regmap::doorbell::BASE);
        dev.override_reg(db + u64::from(regmap::doorbell::WINDOW_REG), 0xFFF0);
        assert!(matches!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::BadDoorbellWindow { .. })
        ));
        dev.clear_override(db + u64::from(regmap::doorbell::WINDOW_REG));
        dev.override_reg(db + u64::from(regmap::doorbell::QPS_REG), 1000);
        assert!(matches!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::BadDoorbellWindow { qps: 1000, .. })
        ));
        dev.override_reg(db + u64::from(regmap::doorbell::QPS_REG), 0);
        assert!(matches!(
            discover(&dev, BuildExpectation::Any),
            Err(DiscoveryError::BadDoorbellWindow { qps: 0, .. })
        ));
    }
}
