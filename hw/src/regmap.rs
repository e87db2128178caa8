//! The CSR register map, defined once. The hardware ([`crate::csr`]), the
//! future driver and `docs/hw/regmap.md` ([`render_markdown`]) all read it
//! from here.
//!
//! Layout (Corundum style): the BAR is a linked list of register blocks.
//! Every block starts with three words: `+0x0` type, `+0x4` version, `+0x8`
//! next pointer (byte address of the next block; 0 ends the list). The list
//! starts at address 0 with the build-ID block. A driver walks the list and
//! refuses any (type, version) it does not know, so a driver and a bitstream
//! from different revisions fail loudly instead of misbehaving.
//!
//! Addresses are byte addresses of 32-bit words; accesses are whole words.

/// Offset of the type word in every block.
pub const HDR_TYPE: u16 = 0x0;
/// Offset of the version word in every block.
pub const HDR_VERSION: u16 = 0x4;
/// Offset of the next-pointer word in every block.
pub const HDR_NEXT: u16 = 0x8;

/// Width of a CSR address in bits (64 KiB of register space).
pub const ADDR_BITS: usize = 16;

/// How software may access a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Access {
    /// Read only.
    Ro,
    /// Read and write.
    Rw,
    /// Write only; reads return 0. Writing 1 to a bit triggers an action.
    Wo,
}

/// One 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Reg {
    pub name: &'static str,
    /// Byte offset within the block.
    pub offset: u16,
    pub access: Access,
    /// Value after configuration (FPGA initial value).
    pub reset: u32,
    pub doc: &'static str,
}

/// One register block of the linked list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RegBlock {
    pub name: &'static str,
    /// Block type (`+0x0`).
    pub block_type: u32,
    /// Block version (`+0x4`); bump on any incompatible change.
    pub version: u32,
    /// Byte address of the block.
    pub base: u16,
    pub doc: &'static str,
    /// Registers after the three header words.
    pub regs: &'static [Reg],
}

/// Build-ID block: type `"MRCB"`.
pub mod build_id {
    use super::*;
    pub const BASE: u16 = 0x0000;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCB");
    pub const VERSION: u32 = 0x0001_0000;
    pub const GIT_HASH_HI: u16 = 0x0C;
    pub const GIT_HASH_LO: u16 = 0x10;
    pub const BUILD_DATE: u16 = 0x14;
    pub const SCRATCH: u16 = 0x18;
    pub const REGS: &[Reg] = &[
        Reg { name: "git_hash_hi", offset: GIT_HASH_HI, access: Access::Ro, reset: 0, doc: "first 8 hex digits of the source git commit (bits 63-32 of the 64-bit prefix)" },
        Reg { name: "git_hash_lo", offset: GIT_HASH_LO, access: Access::Ro, reset: 0, doc: "next 8 hex digits of the source git commit" },
        Reg { name: "build_date", offset: BUILD_DATE, access: Access::Ro, reset: 0, doc: "build time, UNIX seconds (UTC)" },
        Reg { name: "scratch", offset: SCRATCH, access: Access::Rw, reset: 0, doc: "free read/write word for bus tests" },
    ];
}

/// RX header parser counters block: type `"MRCP"`.
pub mod rx_parser {
    use super::*;
    pub const BASE: u16 = 0x0100;
    pub const TYPE: u32 = u32::from_be_bytes(*b"MRCP");
    pub const VERSION: u32 = 0x0001_0000;
    pub const FRAMES_OK: u16 = 0x0C;
    pub const FRAMES_DROPPED: u16 = 0x10;
    pub const CTRL: u16 = 0x14;
    /// `CTRL` bit 0: clear both counters (self-clearing).
    pub const CTRL_CLEAR: u32 = 1;
    pub const REGS: &[Reg] = &[
        Reg { name: "frames_ok", offset: FRAMES_OK, access: Access::Ro, reset: 0, doc: "frames the parser accepted (wrapping)" },
        Reg { name: "frames_dropped", offset: FRAMES_DROPPED, access: Access::Ro, reset: 0, doc: "malformed frames the parser dropped (wrapping)" },
        Reg { name: "ctrl", offset: CTRL, access: Access::Wo, reset: 0, doc: "bit 0: clear frames_ok and frames_dropped" },
    ];
}

/// Every block, in list order.
pub const BLOCKS: &[RegBlock] = &[
    RegBlock {
        name: "build_id",
        block_type: build_id::TYPE,
        version: build_id::VERSION,
        base: build_id::BASE,
        doc: "Identifies the bitstream: git commit and build date. Always first, at address 0.",
        regs: build_id::REGS,
    },
    RegBlock {
        name: "rx_parser",
        block_type: rx_parser::TYPE,
        version: rx_parser::VERSION,
        base: rx_parser::BASE,
        doc: "Counters of the RX header parser front end.",
        regs: rx_parser::REGS,
    },
];

/// The next pointer of block `i` of [`BLOCKS`] (0 for the last).
pub fn next_of(i: usize) -> u16 {
    BLOCKS.get(i + 1).map_or(0, |b| b.base)
}

/// Render the register map as markdown (`docs/hw/regmap.md`).
pub fn render_markdown() -> String {
    let mut s = String::new();
    s.push_str("# CSR register map\n\n");
    s.push_str("Generated from `hw::regmap` by `mrc rtl regmap` (do not edit by hand; \
`hw`'s test `regmap_doc_is_current` fails when this page is stale).\n\n");
    s.push_str("The BAR is a linked list of register blocks. Every block starts with \
`+0x0` type, `+0x4` version, `+0x8` next (byte address of the next block, 0 = end). \
The list starts at address 0 with the build-ID block. All registers are 32-bit words at \
byte addresses; reads of unmapped addresses return 0, writes to them are ignored.\n\n");
    s.push_str("| block | base | type | version | next |\n|---|---|---|---|---|\n");
    for (i, b) in BLOCKS.iter().enumerate() {
        let t = b.block_type.to_be_bytes();
        s.push_str(&format!(
            "| {} | 0x{:04x} | 0x{:08x} (`{}`) | 0x{:08x} | 0x{:04x} |\n",
            b.name,
            b.base,
            b.block_type,
            String::from_utf8_lossy(&t),
            b.version,
            next_of(i)
        ));
    }
    for (i, b) in BLOCKS.iter().enumerate() {
        s.push_str(&format!("\n## {} (0x{:04x})\n\n{}\n\n", b.name, b.base, b.doc));
        s.push_str("| address | offset | name | access | reset | description |\n|---|---|---|---|---|---|\n");
        let hdr = [
            ("type", HDR_TYPE, b.block_type, "block type"),
            ("version", HDR_VERSION, b.version, "block version"),
            ("next", HDR_NEXT, u32::from(next_of(i)), "byte address of the next block (0 = last)"),
        ];
        for (name, off, val, doc) in hdr {
            s.push_str(&format!("| 0x{:04x} | 0x{:02x} | {name} | RO | 0x{val:08x} | {doc} |\n", b.base + off, off));
        }
        for r in b.regs {
            let acc = match r.access {
                Access::Ro => "RO",
                Access::Rw => "RW",
                Access::Wo => "WO",
            };
            s.push_str(&format!(
                "| 0x{:04x} | 0x{:02x} | {} | {acc} | 0x{:08x} | {} |\n",
                b.base + r.offset,
                r.offset,
                r.name,
                r.reset,
                r.doc
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_ordered_and_disjoint() {
        for w in BLOCKS.windows(2) {
            let end = w[0].base + HDR_NEXT + 4 + 4 * w[0].regs.len() as u16;
            assert!(end <= w[1].base, "{} overlaps {}", w[0].name, w[1].name);
        }
        for b in BLOCKS {
            for r in b.regs {
                assert!(r.offset > HDR_NEXT && r.offset % 4 == 0, "{}.{}", b.name, r.name);
            }
        }
        assert_eq!(BLOCKS[0].base, 0);
    }

    #[test]
    fn regmap_doc_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hw/regmap.md");
        let want = render_markdown();
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want {
            if std::env::var_os("MRC_BLESS").is_some() {
                std::fs::write(path, &want).unwrap();
            } else {
                panic!("docs/hw/regmap.md is stale: run `MRC_BLESS=1 cargo test -p hw regmap` or `mrc rtl regmap`");
            }
        }
    }
}
