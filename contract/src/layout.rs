//! Host-memory and configuration layouts, defined once for the hardware
//! and the driver: the send-queue work descriptor (SQE), the completion
//! queue entry (CQE), the EV-event queue entry and the QP send-context row
//! written through the shared config port (`cfg$*`).
//!
//! Every layout is a table of [`Field`]s (byte offset, bit shift inside
//! that byte, width). All multi-byte fields are little-endian, so a field
//! at byte `o` with shift `s` occupies bits `[8o + s, 8o + s + bits)` of
//! the record seen as one little-endian integer; that is also its bit
//! offset in a 512-bit DMA beat or in `cfg$data` (byte 0 in bits `[7:0]`,
//! the convention of `rx_parser`), see [`Field::bit`]. `docs/hw/layout.md`
//! is rendered from these tables and those of [`crate::config`]
//! ([`render_markdown`]); the test `layout_doc_is_current` fails when it
//! is stale.
//!
//! Reserved bytes are written as zero by `encode` and ignored by `decode`;
//! reserved bits inside a used byte (flags) must be zero.

pub use crate::field::Field;

/// A value that a layout cannot hold or that is not defined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("buffer of {have} bytes, the {layout} layout needs {need}")]
    Short {
        layout: &'static str,
        have: usize,
        need: usize,
    },
    #[error("{layout}: unknown {field} value {value}")]
    Unknown {
        layout: &'static str,
        field: &'static str,
        value: u64,
    },
    #[error("{layout}: reserved bits set in {field} (0x{value:x})")]
    Reserved {
        layout: &'static str,
        field: &'static str,
        value: u64,
    },
    #[error("{layout}: {field} = {value} out of range ({allowed})")]
    Range {
        layout: &'static str,
        field: &'static str,
        value: u64,
        allowed: &'static str,
    },
}

fn check_len(layout: &'static str, buf: &[u8], need: usize) -> Result<(), LayoutError> {
    if buf.len() < need {
        return Err(LayoutError::Short {
            layout,
            have: buf.len(),
            need,
        });
    }
    Ok(())
}

fn range(layout: &'static str, f: &Field, value: u64, ok: bool, allowed: &'static str) -> Result<(), LayoutError> {
    if ok {
        Ok(())
    } else {
        Err(LayoutError::Range {
            layout,
            field: f.name,
            value,
            allowed,
        })
    }
}

/// Largest message (bytes), as `proto`'s `post_write` (`TooLong` above).
pub const MAX_MESSAGE_LEN: u64 = 1 << 31;

/// Send-queue work descriptor (SQE), 64 bytes, one per ring slot.
pub mod sqe {
    use super::Field;
    /// Bytes per descriptor (one 512-bit DMA beat).
    pub const SIZE: usize = 64;
    pub const OPCODE: Field = Field::new("opcode", 0, 0, 8, "1 = WRITE, 2 = WRITE-IMM; anything else is rejected");
    pub const FLAGS: Field = Field::new(
        "flags",
        1,
        0,
        8,
        "bit 0 SIGNALED (a success completion is wanted); bits 1-7 reserved, must be 0",
    );
    pub const LENGTH: Field = Field::new(
        "length",
        4,
        0,
        32,
        "message length in bytes, 0..=2^31 (0 = one empty ONLY packet, as proto)",
    );
    pub const WR_ID: Field = Field::new("wr_id", 8, 0, 64, "returned in the completion");
    pub const LOCAL_IOVA: Field = Field::new(
        "local_iova",
        16,
        0,
        64,
        "IOVA of the message's first byte in host memory",
    );
    pub const REMOTE_VA: Field = Field::new("remote_va", 24, 0, 64, "remote virtual address (RETH VA of byte 0)");
    pub const RKEY: Field = Field::new("rkey", 32, 0, 32, "remote key");
    pub const IMM: Field = Field::new("imm", 36, 0, 32, "immediate data (WRITE-IMM only; ignored otherwise)");
    pub const FIELDS: &[Field] = &[OPCODE, FLAGS, LENGTH, WR_ID, LOCAL_IOVA, REMOTE_VA, RKEY, IMM];
    /// Opcode values.
    pub const OP_WRITE: u8 = 1;
    pub const OP_WRITE_IMM: u8 = 2;
    /// Flag bits.
    pub const FLAG_SIGNALED: u8 = 1;
}

/// Completion-queue entry (CQE), 32 bytes.
pub mod cqe {
    use super::Field;
    pub const SIZE: usize = 32;
    pub const PHASE: Field = Field::new(
        "phase",
        0,
        0,
        1,
        "flips on every pass over the ring: the entry is new when it differs from the last pass",
    );
    pub const STATUS: Field = Field::new("status", 1, 0, 8, "see the status table");
    pub const OPCODE: Field = Field::new(
        "opcode",
        2,
        0,
        8,
        "SQE opcode of the work request (0 when there is none: bad doorbell)",
    );
    pub const QP: Field = Field::new("qp", 4, 0, 24, "local QP number");
    pub const WR_ID: Field = Field::new("wr_id", 8, 0, 64, "the SQE's wr_id (0 for a bad doorbell)");
    pub const BYTE_LEN: Field = Field::new("byte_len", 16, 0, 32, "message length in bytes");
    pub const IMM: Field = Field::new("imm", 20, 0, 32, "immediate data (when has_imm)");
    pub const SQ_INDEX: Field = Field::new(
        "sq_index",
        24,
        0,
        32,
        "SQ consumer index of the descriptor (the rejected doorbell value for BAD_DOORBELL)",
    );
    pub const HAS_IMM: Field = Field::new("has_imm", 28, 0, 1, "imm is valid");
    pub const FIELDS: &[Field] = &[PHASE, STATUS, OPCODE, QP, WR_ID, BYTE_LEN, IMM, SQ_INDEX, HAS_IMM];
}

/// Completion status values (CQE `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CqStatus {
    Success = 0,
    /// SQE opcode not WRITE / WRITE-IMM.
    BadOpcode = 1,
    /// Reserved SQE flag bits set.
    BadFlags = 2,
    /// SQE length above 2^31.
    BadLength = 3,
    /// Doorbell producer index more than the ring size ahead of the
    /// consumer index, or the QP is not enabled.
    BadDoorbell = 4,
    /// Flushed by a move to ERR.
    Flushed = 5,
    /// Retry limit exceeded.
    RetryExceeded = 6,
    /// The responder NACKed a remote access.
    RemoteAccess = 7,
}

impl CqStatus {
    pub const ALL: [CqStatus; 8] = [
        CqStatus::Success,
        CqStatus::BadOpcode,
        CqStatus::BadFlags,
        CqStatus::BadLength,
        CqStatus::BadDoorbell,
        CqStatus::Flushed,
        CqStatus::RetryExceeded,
        CqStatus::RemoteAccess,
    ];
    pub fn from_u8(v: u8) -> Option<CqStatus> {
        CqStatus::ALL.get(v as usize).copied()
    }
}

/// EV-event queue entry, 16 bytes.
pub mod ev_event {
    use super::Field;
    pub const SIZE: usize = 16;
    pub const PHASE: Field = Field::new("phase", 0, 0, 1, "flips on every pass over the ring");
    pub const NEW_STATE: Field = Field::new(
        "new_state",
        1,
        0,
        8,
        "0 GOOD, 1 ASSUMED_BAD, 2 DENIED (proto::model::ev::EvState)",
    );
    pub const REASON: Field = Field::new(
        "reason",
        2,
        0,
        8,
        "0 CONTROL (deny/allow), 1 LOSS, 2 TIMEOUT, 3 PROBE_OK",
    );
    pub const EV_INDEX: Field = Field::new("ev_index", 3, 0, 7, "index of the EV in the QP's EV set (0..128)");
    pub const QP: Field = Field::new("qp", 4, 0, 24, "local QP number");
    pub const EV: Field = Field::new("ev", 8, 0, 32, "EV value (32 bits, MRC 1.0)");
    pub const TIME: Field = Field::new("time", 12, 0, 32, "time of the change, ns, wrapping");
    pub const FIELDS: &[Field] = &[PHASE, NEW_STATE, REASON, QP, EV, EV_INDEX, TIME];
}

/// QP send-context row: `cfg$data` (256 bits = 32 bytes, byte 0 in
/// bits `[7:0]`) of a config write with `cfg$table` =
/// [`crate::config::table::SQ_CTX`] and `cfg$index` = the QP.
pub mod sq_ctx {
    use super::Field;
    pub const SIZE: usize = 32;
    pub const SQ_BASE: Field = Field::new("sq_base", 0, 0, 64, "IOVA of SQ slot 0, 64-byte aligned");
    pub const CQ_INDEX: Field = Field::new("cq_index", 8, 0, 16, "completion queue of this QP");
    pub const ADDR_INDEX: Field = Field::new(
        "addr_index",
        10,
        0,
        16,
        "row of the remote address table (MAC, IP) of the peer",
    );
    pub const DEST_QP: Field = Field::new("dest_qp", 12, 0, 24, "peer QP number (BTH dest_qp)");
    pub const START_PSN: Field = Field::new("start_psn", 16, 0, 24, "first PSN sent (RtsAttr::sq_psn)");
    pub const PKEY: Field = Field::new("pkey", 20, 0, 16, "P_Key (InitAttr::pkey)");
    pub const SQ_LOG2_SIZE: Field = Field::new("sq_log2_size", 22, 0, 8, "log2 of the SQ ring's slots, 0..=16");
    pub const LOG2_MTU: Field = Field::new(
        "log2_mtu",
        23,
        0,
        8,
        "log2 of the path MTU (payload bytes per packet), 8..=13",
    );
    pub const EV_COUNT: Field = Field::new("ev_count", 24, 0, 8, "EVs in the QP's EV set, 1..=128");
    pub const ENABLE: Field = Field::new(
        "enable",
        25,
        0,
        1,
        "the QP sends (RTS); doorbells of a disabled QP are rejected",
    );
    pub const SEND_MPR_UNITS: Field = Field::new(
        "send_mpr_units",
        26,
        0,
        8,
        "send window in units of 128 PSNs, 1..=255 (RtsAttr::send_mpr_units)",
    );
    pub const EV_MIN_ACTIVE: Field = Field::new(
        "ev_min_active",
        27,
        0,
        8,
        "GOOD EVs the NIC keeps: a loss mark that would leave fewer is refused (the EV profile's ev_min_active), 0..=ev_count",
    );
    pub const FIELDS: &[Field] = &[
        SQ_BASE,
        CQ_INDEX,
        ADDR_INDEX,
        DEST_QP,
        START_PSN,
        PKEY,
        SQ_LOG2_SIZE,
        LOG2_MTU,
        EV_COUNT,
        ENABLE,
        SEND_MPR_UNITS,
        EV_MIN_ACTIVE,
    ];
}

/// SQE opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqOpcode {
    Write,
    WriteImm,
}

impl SqOpcode {
    pub fn code(self) -> u8 {
        match self {
            SqOpcode::Write => sqe::OP_WRITE,
            SqOpcode::WriteImm => sqe::OP_WRITE_IMM,
        }
    }
}

/// A send-queue work descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqDescriptor {
    pub opcode: SqOpcode,
    pub signaled: bool,
    pub length: u32,
    pub wr_id: u64,
    pub local_iova: u64,
    pub remote_va: u64,
    pub rkey: u32,
    /// Immediate (encoded only for WRITE-IMM; decoded as 0 otherwise).
    pub imm: u32,
}

impl SqDescriptor {
    pub fn encode(&self) -> Result<[u8; sqe::SIZE], LayoutError> {
        let l = u64::from(self.length);
        range("sqe", &sqe::LENGTH, l, l <= MAX_MESSAGE_LEN, "0..=2^31")?;
        let mut b = [0u8; sqe::SIZE];
        sqe::OPCODE.put(&mut b, u64::from(self.opcode.code()));
        sqe::FLAGS.put(
            &mut b,
            if self.signaled {
                u64::from(sqe::FLAG_SIGNALED)
            } else {
                0
            },
        );
        sqe::LENGTH.put(&mut b, l);
        sqe::WR_ID.put(&mut b, self.wr_id);
        sqe::LOCAL_IOVA.put(&mut b, self.local_iova);
        sqe::REMOTE_VA.put(&mut b, self.remote_va);
        sqe::RKEY.put(&mut b, u64::from(self.rkey));
        if self.opcode == SqOpcode::WriteImm {
            sqe::IMM.put(&mut b, u64::from(self.imm));
        }
        Ok(b)
    }

    /// Decode with the checks the hardware applies (same order: opcode,
    /// flags, length).
    pub fn decode(b: &[u8]) -> Result<SqDescriptor, LayoutError> {
        check_len("sqe", b, sqe::SIZE)?;
        let op = sqe::OPCODE.get(b);
        let opcode = match op as u8 {
            sqe::OP_WRITE => SqOpcode::Write,
            sqe::OP_WRITE_IMM => SqOpcode::WriteImm,
            _ => {
                return Err(LayoutError::Unknown {
                    layout: "sqe",
                    field: "opcode",
                    value: op,
                })
            }
        };
        let flags = sqe::FLAGS.get(b);
        if flags & !u64::from(sqe::FLAG_SIGNALED) != 0 {
            return Err(LayoutError::Reserved {
                layout: "sqe",
                field: "flags",
                value: flags,
            });
        }
        let length = sqe::LENGTH.get(b);
        range("sqe", &sqe::LENGTH, length, length <= MAX_MESSAGE_LEN, "0..=2^31")?;
        Ok(SqDescriptor {
            opcode,
            signaled: flags & u64::from(sqe::FLAG_SIGNALED) != 0,
            length: length as u32,
            wr_id: sqe::WR_ID.get(b),
            local_iova: sqe::LOCAL_IOVA.get(b),
            remote_va: sqe::REMOTE_VA.get(b),
            rkey: sqe::RKEY.get(b) as u32,
            imm: if opcode == SqOpcode::WriteImm {
                sqe::IMM.get(b) as u32
            } else {
                0
            },
        })
    }
}

/// A completion-queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub phase: bool,
    pub status: CqStatus,
    /// SQE opcode code (0 = none).
    pub opcode: u8,
    pub qp: u32,
    pub wr_id: u64,
    pub byte_len: u32,
    pub imm: Option<u32>,
    pub sq_index: u32,
}

impl Completion {
    pub fn encode(&self) -> Result<[u8; cqe::SIZE], LayoutError> {
        range("cqe", &cqe::QP, u64::from(self.qp), self.qp < 1 << 24, "0..2^24")?;
        let mut b = [0u8; cqe::SIZE];
        cqe::PHASE.put(&mut b, u64::from(self.phase));
        cqe::STATUS.put(&mut b, self.status as u64);
        cqe::OPCODE.put(&mut b, u64::from(self.opcode));
        cqe::QP.put(&mut b, u64::from(self.qp));
        cqe::WR_ID.put(&mut b, self.wr_id);
        cqe::BYTE_LEN.put(&mut b, u64::from(self.byte_len));
        cqe::IMM.put(&mut b, u64::from(self.imm.unwrap_or(0)));
        cqe::SQ_INDEX.put(&mut b, u64::from(self.sq_index));
        cqe::HAS_IMM.put(&mut b, u64::from(self.imm.is_some()));
        Ok(b)
    }

    pub fn decode(b: &[u8]) -> Result<Completion, LayoutError> {
        check_len("cqe", b, cqe::SIZE)?;
        let s = cqe::STATUS.get(b);
        let status = CqStatus::from_u8(s as u8).ok_or(LayoutError::Unknown {
            layout: "cqe",
            field: "status",
            value: s,
        })?;
        let op = cqe::OPCODE.get(b);
        if op > u64::from(sqe::OP_WRITE_IMM) {
            return Err(LayoutError::Unknown {
                layout: "cqe",
                field: "opcode",
                value: op,
            });
        }
        let rsv = b[0] >> 1;
        if rsv != 0 {
            return Err(LayoutError::Reserved {
                layout: "cqe",
                field: "phase",
                value: u64::from(b[0]),
            });
        }
        let has_imm = cqe::HAS_IMM.get(b) == 1;
        if b[cqe::HAS_IMM.offset] >> 1 != 0 {
            return Err(LayoutError::Reserved {
                layout: "cqe",
                field: "has_imm",
                value: u64::from(b[28]),
            });
        }
        Ok(Completion {
            phase: cqe::PHASE.get(b) == 1,
            status,
            opcode: op as u8,
            qp: cqe::QP.get(b) as u32,
            wr_id: cqe::WR_ID.get(b),
            byte_len: cqe::BYTE_LEN.get(b) as u32,
            imm: has_imm.then(|| cqe::IMM.get(b) as u32),
            sq_index: cqe::SQ_INDEX.get(b) as u32,
        })
    }
}

/// EV state in an EV event (as `proto::model::ev::EvState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvNewState {
    Good = 0,
    AssumedBad = 1,
    Denied = 2,
}

/// Why an EV changed state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvReason {
    Control = 0,
    Loss = 1,
    Timeout = 2,
    ProbeOk = 3,
}

/// An EV-event queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvEvent {
    pub phase: bool,
    pub new_state: EvNewState,
    pub reason: EvReason,
    pub qp: u32,
    pub ev: u32,
    pub ev_index: u8,
    pub time_ns: u32,
}

impl EvEvent {
    pub fn encode(&self) -> Result<[u8; ev_event::SIZE], LayoutError> {
        range(
            "ev_event",
            &ev_event::QP,
            u64::from(self.qp),
            self.qp < 1 << 24,
            "0..2^24",
        )?;
        range(
            "ev_event",
            &ev_event::EV_INDEX,
            u64::from(self.ev_index),
            self.ev_index < 128,
            "0..128",
        )?;
        let mut b = [0u8; ev_event::SIZE];
        ev_event::PHASE.put(&mut b, u64::from(self.phase));
        ev_event::NEW_STATE.put(&mut b, self.new_state as u64);
        ev_event::REASON.put(&mut b, self.reason as u64);
        ev_event::QP.put(&mut b, u64::from(self.qp));
        ev_event::EV.put(&mut b, u64::from(self.ev));
        ev_event::EV_INDEX.put(&mut b, u64::from(self.ev_index));
        ev_event::TIME.put(&mut b, u64::from(self.time_ns));
        Ok(b)
    }

    pub fn decode(b: &[u8]) -> Result<EvEvent, LayoutError> {
        check_len("ev_event", b, ev_event::SIZE)?;
        let st = ev_event::NEW_STATE.get(b);
        let new_state = match st {
            0 => EvNewState::Good,
            1 => EvNewState::AssumedBad,
            2 => EvNewState::Denied,
            _ => {
                return Err(LayoutError::Unknown {
                    layout: "ev_event",
                    field: "new_state",
                    value: st,
                })
            }
        };
        let r = ev_event::REASON.get(b);
        let reason = match r {
            0 => EvReason::Control,
            1 => EvReason::Loss,
            2 => EvReason::Timeout,
            3 => EvReason::ProbeOk,
            _ => {
                return Err(LayoutError::Unknown {
                    layout: "ev_event",
                    field: "reason",
                    value: r,
                })
            }
        };
        if b[0] >> 1 != 0 {
            return Err(LayoutError::Reserved {
                layout: "ev_event",
                field: "phase",
                value: u64::from(b[0]),
            });
        }
        if b[ev_event::EV_INDEX.offset] >> 7 != 0 {
            return Err(LayoutError::Reserved {
                layout: "ev_event",
                field: "ev_index",
                value: u64::from(b[10]),
            });
        }
        Ok(EvEvent {
            phase: ev_event::PHASE.get(b) == 1,
            new_state,
            reason,
            qp: ev_event::QP.get(b) as u32,
            ev: ev_event::EV.get(b) as u32,
            ev_index: ev_event::EV_INDEX.get(b) as u8,
            time_ns: ev_event::TIME.get(b) as u32,
        })
    }
}

/// A QP send-context row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqContext {
    pub sq_base: u64,
    pub cq_index: u16,
    pub addr_index: u16,
    pub dest_qp: u32,
    pub start_psn: u32,
    pub pkey: u16,
    pub sq_log2_size: u8,
    pub log2_mtu: u8,
    pub ev_count: u8,
    pub enable: bool,
    pub send_mpr_units: u8,
    /// GOOD EVs the NIC keeps (MRC 1.0's per-profile `ev_min_active`).
    pub ev_min_active: u8,
}

impl SqContext {
    fn check(&self) -> Result<(), LayoutError> {
        let l = "sq_ctx";
        range(
            l,
            &sq_ctx::SQ_BASE,
            self.sq_base,
            self.sq_base.is_multiple_of(64),
            "64-byte aligned",
        )?;
        range(
            l,
            &sq_ctx::DEST_QP,
            u64::from(self.dest_qp),
            self.dest_qp < 1 << 24,
            "0..2^24",
        )?;
        range(
            l,
            &sq_ctx::START_PSN,
            u64::from(self.start_psn),
            self.start_psn < 1 << 24,
            "0..2^24",
        )?;
        range(
            l,
            &sq_ctx::SQ_LOG2_SIZE,
            u64::from(self.sq_log2_size),
            self.sq_log2_size <= 16,
            "0..=16",
        )?;
        range(
            l,
            &sq_ctx::LOG2_MTU,
            u64::from(self.log2_mtu),
            (8..=13).contains(&self.log2_mtu),
            "8..=13",
        )?;
        range(
            l,
            &sq_ctx::EV_COUNT,
            u64::from(self.ev_count),
            (1..=128).contains(&self.ev_count),
            "1..=128",
        )?;
        range(
            l,
            &sq_ctx::SEND_MPR_UNITS,
            u64::from(self.send_mpr_units),
            self.send_mpr_units >= 1,
            "1..=255",
        )?;
        range(
            l,
            &sq_ctx::EV_MIN_ACTIVE,
            u64::from(self.ev_min_active),
            self.ev_min_active <= self.ev_count,
            "0..=ev_count",
        )?;
        Ok(())
    }

    pub fn encode(&self) -> Result<[u8; sq_ctx::SIZE], LayoutError> {
        self.check()?;
        let mut b = [0u8; sq_ctx::SIZE];
        sq_ctx::SQ_BASE.put(&mut b, self.sq_base);
        sq_ctx::CQ_INDEX.put(&mut b, u64::from(self.cq_index));
        sq_ctx::ADDR_INDEX.put(&mut b, u64::from(self.addr_index));
        sq_ctx::DEST_QP.put(&mut b, u64::from(self.dest_qp));
        sq_ctx::START_PSN.put(&mut b, u64::from(self.start_psn));
        sq_ctx::PKEY.put(&mut b, u64::from(self.pkey));
        sq_ctx::SQ_LOG2_SIZE.put(&mut b, u64::from(self.sq_log2_size));
        sq_ctx::LOG2_MTU.put(&mut b, u64::from(self.log2_mtu));
        sq_ctx::EV_COUNT.put(&mut b, u64::from(self.ev_count));
        sq_ctx::ENABLE.put(&mut b, u64::from(self.enable));
        sq_ctx::SEND_MPR_UNITS.put(&mut b, u64::from(self.send_mpr_units));
        sq_ctx::EV_MIN_ACTIVE.put(&mut b, u64::from(self.ev_min_active));
        Ok(b)
    }

    pub fn decode(b: &[u8]) -> Result<SqContext, LayoutError> {
        check_len("sq_ctx", b, sq_ctx::SIZE)?;
        if b[15] != 0 || b[19] != 0 {
            return Err(LayoutError::Reserved {
                layout: "sq_ctx",
                field: "dest_qp/start_psn",
                value: u64::from(b[15] | b[19]),
            });
        }
        if b[sq_ctx::ENABLE.offset] >> 1 != 0 {
            return Err(LayoutError::Reserved {
                layout: "sq_ctx",
                field: "enable",
                value: u64::from(b[25]),
            });
        }
        let c = SqContext {
            sq_base: sq_ctx::SQ_BASE.get(b),
            cq_index: sq_ctx::CQ_INDEX.get(b) as u16,
            addr_index: sq_ctx::ADDR_INDEX.get(b) as u16,
            dest_qp: sq_ctx::DEST_QP.get(b) as u32,
            start_psn: sq_ctx::START_PSN.get(b) as u32,
            pkey: sq_ctx::PKEY.get(b) as u16,
            sq_log2_size: sq_ctx::SQ_LOG2_SIZE.get(b) as u8,
            log2_mtu: sq_ctx::LOG2_MTU.get(b) as u8,
            ev_count: sq_ctx::EV_COUNT.get(b) as u8,
            enable: sq_ctx::ENABLE.get(b) == 1,
            send_mpr_units: sq_ctx::SEND_MPR_UNITS.get(b) as u8,
            ev_min_active: sq_ctx::EV_MIN_ACTIVE.get(b) as u8,
        };
        c.check()?;
        Ok(c)
    }
}

fn table(s: &mut String, title: &str, size: usize, fields: &[Field]) {
    s.push_str(&format!("## {title} ({size} bytes)\n\n"));
    s.push_str("| field | byte | bit in byte | bits | bit offset (LE) | meaning |\n|---|---|---|---|---|---|\n");
    for f in fields {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            f.name,
            f.offset,
            f.shift,
            f.bits,
            f.bit(),
            f.meaning
        ));
    }
    s.push('\n');
}

/// `docs/hw/layout.md`.
pub fn render_markdown() -> String {
    let mut s = String::new();
    s.push_str("# Host-memory and configuration layouts\n\n");
    s.push_str(
        "Generated from `contract::layout` and `contract::config` (do not edit by hand; `contract`'s test \
`layout_doc_is_current` fails when this page is stale, `MRC_BLESS=1 cargo test -p contract layout` rewrites it).\n\n\
All multi-byte fields are little-endian. The bit offset is the field's least significant bit in the \
record read as one little-endian integer: in a 512-bit DMA beat or in `cfg$data`, whose byte 0 is \
bits `[7:0]` (the convention of `rx_parser`). Reserved bytes are written as zero and ignored on \
read; reserved bits inside a used byte must be zero (`decode` rejects them with a typed error). \
Rust: `SqDescriptor`, `Completion`, `EvEvent`, `SqContext`, each with `encode`/`decode`.\n\n",
    );
    table(&mut s, "Send-queue work descriptor (SQE)", sqe::SIZE, sqe::FIELDS);
    s.push_str(
        "The hardware rejects (error completion, counter pulse) in this order: opcode not 1/2 \
(`BAD_OPCODE`), reserved flag bits (`BAD_FLAGS`), length above 2^31 (`BAD_LENGTH`), as `proto`'s \
`post_write` (`TooLong`). A zero length is legal: one empty WRITE ONLY packet, as `proto`.\n\n",
    );
    table(&mut s, "Completion-queue entry (CQE)", cqe::SIZE, cqe::FIELDS);
    s.push_str("| status | value | meaning |\n|---|---|---|\n");
    for st in CqStatus::ALL {
        let m = match st {
            CqStatus::Success => "the message was acknowledged",
            CqStatus::BadOpcode => "SQE opcode not WRITE / WRITE-IMM (the SQE is consumed, nothing sent)",
            CqStatus::BadFlags => "reserved SQE flag bits set (consumed, nothing sent)",
            CqStatus::BadLength => "SQE length above 2^31 (consumed, nothing sent)",
            CqStatus::BadDoorbell => "doorbell producer index more than the ring size ahead of the consumer index, or QP disabled (doorbell ignored)",
            CqStatus::Flushed => "flushed by a move to ERR",
            CqStatus::RetryExceeded => "retry limit exceeded",
            CqStatus::RemoteAccess => "remote access NACK",
        };
        s.push_str(&format!("| {st:?} | {} | {m} |\n", st as u8));
    }
    s.push('\n');
    table(&mut s, "EV-event queue entry", ev_event::SIZE, ev_event::FIELDS);
    table(
        &mut s,
        &format!(
            "QP send-context row (`cfg$table` = {}, `cfg$index` = QP)",
            crate::config::table::SQ_CTX
        ),
        sq_ctx::SIZE,
        sq_ctx::FIELDS,
    );
    s.push_str(
        "A write of this row resets the QP's send state in the requester: consumer index 0, next \
PSN = `start_psn`, retransmit table empty. Write it only while the QP is idle (no doorbell \
queued or in service).\n",
    );
    s.push_str(
        "\n# Config rows\n\nThe other config tables' rows (`contract::config`), as written by the driver \
and decoded by the RTL (`hw::contract_rows`). Unused bits are written as zero.\n\n",
    );
    for row in crate::config::ROWS.iter().filter(|r| r.fields != sq_ctx::FIELDS) {
        let tables: Vec<String> = row
            .tables
            .iter()
            .map(|id| {
                let (name, ..) = crate::config::table::ALL
                    .iter()
                    .find(|(_, t, _)| t == id)
                    .expect("listed table");
                format!("{id} ({name})")
            })
            .collect();
        table(
            &mut s,
            &format!(
                "`{}`: `cfg$table` {}, `cfg$index` {}",
                row.name,
                tables.join(", "),
                row.index
            ),
            crate::config::ROW_BYTES,
            row.fields,
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::field::assert_disjoint as no_overlap;

    #[test]
    fn fields_fit_and_do_not_overlap() {
        no_overlap(sqe::SIZE, sqe::FIELDS);
        no_overlap(cqe::SIZE, cqe::FIELDS);
        no_overlap(ev_event::SIZE, ev_event::FIELDS);
        no_overlap(sq_ctx::SIZE, sq_ctx::FIELDS);
        const { assert!(sq_ctx::SIZE * 8 <= 256, "the row must fit cfg$data") };
        const { assert!(sqe::SIZE * 8 <= 512, "a descriptor is one DMA beat") };
    }

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Every field sits at its documented offset: write a distinct
    /// pattern in one field via `put`, check the exact bytes and that
    /// `get` and the little-endian bit offset agree.
    #[test]
    fn every_field_at_its_offset() {
        for (size, fields) in [
            (64, sqe::FIELDS),
            (32, cqe::FIELDS),
            (16, ev_event::FIELDS),
            (32, sq_ctx::FIELDS),
        ] {
            for f in fields {
                let v = 0xA5C3_9617_2B4E_D8F1u64 & f.mask();
                let mut b = vec![0u8; size];
                f.put(&mut b, v);
                // The record as one little-endian bit string.
                let all = |bit: usize| (b[bit / 8] >> (bit % 8)) & 1;
                for bit in 0..size * 8 {
                    let want = if bit >= f.bit() && bit < f.bit() + f.bits {
                        (v >> (bit - f.bit())) & 1
                    } else {
                        0
                    };
                    assert_eq!(u64::from(all(bit)), want, "{} bit {bit}", f.name);
                }
                assert_eq!(f.get(&b), v);
            }
        }
        // Spot checks against the documented byte offsets.
        let d = SqDescriptor {
            opcode: SqOpcode::WriteImm,
            signaled: true,
            length: 0x0102_0304,
            wr_id: 0x1112_1314_1516_1718,
            local_iova: 0x2122_2324_2526_2728,
            remote_va: 0x3132_3334_3536_3738,
            rkey: 0x4142_4344,
            imm: 0x5152_5354,
        };
        let b = d.encode().unwrap();
        assert_eq!(&b[0..8], &[2, 1, 0, 0, 4, 3, 2, 1]);
        assert_eq!(b[8], 0x18);
        assert_eq!(b[16], 0x28);
        assert_eq!(b[24], 0x38);
        assert_eq!(&b[32..40], &[0x44, 0x43, 0x42, 0x41, 0x54, 0x53, 0x52, 0x51]);
        assert!(b[40..].iter().all(|&x| x == 0));
    }

    #[test]
    fn round_trips() {
        let mut s = 0x1234_5678_9abc_def1u64;
        for _ in 0..2000 {
            let r = xorshift(&mut s);
            let d = SqDescriptor {
                opcode: if r & 1 == 0 {
                    SqOpcode::Write
                } else {
                    SqOpcode::WriteImm
                },
                signaled: r & 2 != 0,
                length: (xorshift(&mut s) % (MAX_MESSAGE_LEN + 1)) as u32,
                wr_id: xorshift(&mut s),
                local_iova: xorshift(&mut s),
                remote_va: xorshift(&mut s),
                rkey: xorshift(&mut s) as u32,
                imm: if r & 1 == 0 { 0 } else { xorshift(&mut s) as u32 },
            };
            assert_eq!(SqDescriptor::decode(&d.encode().unwrap()).unwrap(), d);
            let c = Completion {
                phase: r & 4 != 0,
                status: CqStatus::ALL[(r >> 8) as usize % 8],
                opcode: (r >> 12) as u8 % 3,
                qp: (r >> 16) as u32 & 0xFF_FFFF,
                wr_id: xorshift(&mut s),
                byte_len: xorshift(&mut s) as u32,
                imm: (r & 8 != 0).then(|| xorshift(&mut s) as u32),
                sq_index: xorshift(&mut s) as u32,
            };
            assert_eq!(Completion::decode(&c.encode().unwrap()).unwrap(), c);
            let e = EvEvent {
                phase: r & 16 != 0,
                new_state: [EvNewState::Good, EvNewState::AssumedBad, EvNewState::Denied][(r >> 20) as usize % 3],
                reason: [EvReason::Control, EvReason::Loss, EvReason::Timeout, EvReason::ProbeOk]
                    [(r >> 24) as usize % 4],
                qp: (r >> 28) as u32 & 0xFF_FFFF,
                ev: (r >> 32) as u32,
                ev_index: (r >> 56) as u8 & 0x7F,
                time_ns: xorshift(&mut s) as u32,
            };
            assert_eq!(EvEvent::decode(&e.encode().unwrap()).unwrap(), e);
            let q = SqContext {
                sq_base: xorshift(&mut s) & !63,
                cq_index: r as u16,
                addr_index: (r >> 16) as u16,
                dest_qp: (r >> 32) as u32 & 0xFF_FFFF,
                start_psn: xorshift(&mut s) as u32 & 0xFF_FFFF,
                pkey: (r >> 48) as u16,
                sq_log2_size: (r % 17) as u8,
                log2_mtu: 8 + (r % 6) as u8,
                ev_count: 1 + (r % 128) as u8,
                enable: r & 32 != 0,
                send_mpr_units: 1 + (r % 255) as u8,
                ev_min_active: 1,
            };
            assert_eq!(SqContext::decode(&q.encode().unwrap()).unwrap(), q);
        }
    }

    #[test]
    fn rejects_bad_values() {
        let d = SqDescriptor {
            opcode: SqOpcode::Write,
            signaled: false,
            length: 100,
            wr_id: 1,
            local_iova: 2,
            remote_va: 3,
            rkey: 4,
            imm: 0,
        };
        let good = d.encode().unwrap();
        for op in [0u8, 3, 0x0A, 0xFF] {
            let mut b = good;
            b[0] = op;
            assert_eq!(
                SqDescriptor::decode(&b),
                Err(LayoutError::Unknown {
                    layout: "sqe",
                    field: "opcode",
                    value: u64::from(op)
                })
            );
        }
        let mut b = good;
        b[1] = 0x82;
        assert!(matches!(
            SqDescriptor::decode(&b),
            Err(LayoutError::Reserved { field: "flags", .. })
        ));
        let mut b = good;
        sqe::LENGTH.put(&mut b, MAX_MESSAGE_LEN + 1);
        assert!(matches!(
            SqDescriptor::decode(&b),
            Err(LayoutError::Range { field: "length", .. })
        ));
        sqe::LENGTH.put(&mut b, MAX_MESSAGE_LEN);
        assert_eq!(SqDescriptor::decode(&b).unwrap().length, 1 << 31);
        assert!(matches!(
            SqDescriptor {
                length: (1 << 31) + 1,
                ..d
            }
            .encode(),
            Err(LayoutError::Range { .. })
        ));
        assert!(matches!(
            SqDescriptor::decode(&good[..63]),
            Err(LayoutError::Short { need: 64, .. })
        ));

        let mut c = Completion {
            phase: true,
            status: CqStatus::Success,
            opcode: 1,
            qp: 5,
            wr_id: 9,
            byte_len: 1,
            imm: None,
            sq_index: 0,
        }
        .encode()
        .unwrap();
        c[1] = 8;
        assert!(matches!(
            Completion::decode(&c),
            Err(LayoutError::Unknown { field: "status", .. })
        ));
        assert!(Completion {
            phase: true,
            status: CqStatus::Success,
            opcode: 1,
            qp: 1 << 24,
            wr_id: 9,
            byte_len: 1,
            imm: None,
            sq_index: 0
        }
        .encode()
        .is_err());

        let mut e = EvEvent {
            phase: false,
            new_state: EvNewState::Good,
            reason: EvReason::Loss,
            qp: 1,
            ev: 2,
            ev_index: 3,
            time_ns: 4,
        }
        .encode()
        .unwrap();
        e[1] = 3;
        assert!(matches!(
            EvEvent::decode(&e),
            Err(LayoutError::Unknown { field: "new_state", .. })
        ));
        e[1] = 0;
        e[2] = 4;
        assert!(matches!(
            EvEvent::decode(&e),
            Err(LayoutError::Unknown { field: "reason", .. })
        ));

        let q = SqContext {
            sq_base: 0x1000,
            cq_index: 0,
            addr_index: 0,
            dest_qp: 7,
            start_psn: 100,
            pkey: 0xFFFF,
            sq_log2_size: 4,
            log2_mtu: 10,
            ev_count: 8,
            enable: true,
            send_mpr_units: 2,
            ev_min_active: 1,
        };
        assert!(q.encode().is_ok());
        for bad in [
            SqContext { sq_base: 0x1008, ..q },
            SqContext { log2_mtu: 7, ..q },
            SqContext { log2_mtu: 14, ..q },
            SqContext { sq_log2_size: 17, ..q },
            SqContext { ev_count: 0, ..q },
            SqContext { ev_count: 129, ..q },
            SqContext { dest_qp: 1 << 24, ..q },
            SqContext { send_mpr_units: 0, ..q },
            SqContext {
                ev_min_active: q.ev_count + 1,
                ..q
            },
        ] {
            assert!(matches!(bad.encode(), Err(LayoutError::Range { .. })), "{bad:?}");
        }
        let mut b = q.encode().unwrap();
        b[23] = 20;
        assert!(matches!(
            SqContext::decode(&b),
            Err(LayoutError::Range { field: "log2_mtu", .. })
        ));
    }

    #[test]
    fn layout_doc_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hw/layout.md");
        let want = render_markdown();
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want {
            if std::env::var_os("MRC_BLESS").is_some() {
                std::fs::write(path, &want).unwrap();
            } else {
                panic!("docs/hw/layout.md is stale: run `MRC_BLESS=1 cargo test -p contract layout`");
            }
        }
    }
}
