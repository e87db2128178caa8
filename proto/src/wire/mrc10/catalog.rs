//! One MRC 1.0 packet of every kind, each field a distinct non-zero value
//! where its width allows, so that a decoder that reads a field from the
//! wrong place shows it. Used by the dissector test, the decoder's tests,
//! the benchmarks and the fuzz corpus.

use bytes::Bytes;

use super::choices::{TrafficClass, ENDPOINT_QPN};
use super::{
    BthRepr, CcStateRepr, EethRepr, EndpointOp, ErthRepr, EvFormat, Headers, MethRepr, Mrc10Packet, NackReason,
    NethRepr, Opcode, PethRepr, SethRepr, SkipMode, TsethRepr, WriteHeaders,
};
use crate::wire::frame::pad_for;
use crate::wire::{AethRepr, RethRepr, Syndrome};
use crate::Psn;

/// The data QP of the catalog's connection.
pub const DATA_QP: u32 = 0x00AB_CD12;

/// A BTH for `opcode` with the catalog's values.
pub fn bth(opcode: Opcode, psn: u32) -> BthRepr {
    BthRepr {
        opcode,
        solicited: opcode.is_last(),
        mig_req: true,
        pad: 0,
        pkey: 0xFFFF,
        fecn: false,
        becn: false,
        dest_qp: if opcode.is_endpoint() { ENDPOINT_QPN } else { DATA_QP },
        ack_req: opcode.is_last(),
        retransmit: false,
        timestamp: false,
        psn: Psn::new(psn & 0xFF_FFFF),
    }
}

/// A data packet of `payload_len` bytes; with a TSETH when `timestamp`.
pub fn write(opcode: Opcode, psn: u32, payload_len: usize, timestamp: bool) -> Mrc10Packet {
    assert!(opcode.is_write());
    let mut b = bth(opcode, psn);
    b.pad = pad_for(payload_len);
    b.timestamp = timestamp;
    Mrc10Packet {
        ev: 0x8765_4321,
        ecn: crate::wire::ipv4::ecn::ECT0,
        class: TrafficClass::Trimmable,
        bth: b,
        headers: Headers::Write(WriteHeaders {
            meth: MethRepr {
                rq_msn: 0x0A0B,
                msn: 0x0C0D,
            },
            tseth: timestamp.then_some(TsethRepr {
                tx_ts: 0x7531,
                resolution: true,
                format: 0x5,
            }),
            reth: RethRepr {
                va: 0x0000_7F00_1234_5000,
                rkey: 0xBEEF_CAFE,
                dma_len: 0x0001_2345,
            },
            imm: opcode.has_imm().then_some(0xFEED_F00D),
        }),
        payload: Bytes::from((0..payload_len).map(|i| i as u8).collect::<Vec<u8>>()),
    }
}

fn control(opcode: Opcode, psn: u32, headers: Headers) -> Mrc10Packet {
    Mrc10Packet {
        ev: 0x1357_9BDF,
        ecn: crate::wire::ipv4::ecn::ECT0,
        class: TrafficClass::Control,
        bth: bth(opcode, psn),
        headers,
        payload: Bytes::new(),
    }
}

/// A SACK; `probe_response` answers probe `0x4242`.
pub fn sack(psn: u32, probe_response: bool) -> Mrc10Packet {
    control(
        Opcode::Sack,
        psn,
        Headers::Sack {
            seth: SethRepr {
                skip_mode: if probe_response {
                    SkipMode::None
                } else {
                    SkipMode::SkipOnce
                },
                probe_response,
                ack_psn_offset: if probe_response { 0x4242 } else { -3 },
                ev: 0x8765_4321,
                sender_context: 0x1111,
                receiver_context: 0x2222,
                cum_ack_psn: Psn::new(psn & 0xFF_FFFF),
                cc_type: 0x1,
                cc_flags: 0x6,
                mpr: 0x20,
                sack_offset: 2,
                bitmap: 0x8000_0000_0000_0005,
            },
            cc_state: CcStateRepr {
                echo_ts: 0x7531,
                ooo_count: 0x0123,
                restore: true,
                cwnd_penalty: 0x11,
                rcvd_bytes: 0x03_0405,
            },
        },
    )
}

/// A NACK with `reason`.
pub fn nack(psn: u32, reason: NackReason) -> Mrc10Packet {
    control(
        Opcode::Nack,
        psn,
        Headers::Nack(NethRepr {
            reason,
            vendor_info: 0x5A5A,
            ev: 0x8765_4321,
            sender_context: 0x1111,
            receiver_context: 0x2222,
            nack_psn: Psn::new(psn & 0xFF_FFFF),
            cc_type: 0x1,
            cc_flags: 0x9,
            timestamp: 0x7531,
        }),
    )
}

/// An ACK.
pub fn ack(psn: u32) -> Mrc10Packet {
    control(
        Opcode::Ack,
        psn,
        Headers::Ack(AethRepr {
            syndrome: Syndrome::Ack { credits: 0x1F },
            msn: 0x00_0C0D,
        }),
    )
}

/// A reliability probe (PSN 0: it uses none).
pub fn probe(probe_id: u16) -> Mrc10Packet {
    control(
        Opcode::ReliabilityProbe,
        0,
        Headers::Probe(PethRepr {
            probe_id,
            sender_context: 0x1111,
            receiver_context: 0x2222,
            timestamp: 0x2468,
        }),
    )
}

/// An endpoint request or response with `op`.
pub fn endpoint(response: bool, op: EndpointOp) -> Mrc10Packet {
    let opcode = if response {
        Opcode::EndpointResponse
    } else {
        Opcode::EndpointRequest
    };
    let eeth = super::choices::eeth_follows(op).then(|| {
        let mut e = EethRepr::for_ev32(EvFormat::SourcePortFlowLabel32, 3, 0x8765_4321);
        e.service_time = if response { 0x0321 } else { 0 };
        e
    });
    control(
        opcode,
        0,
        Headers::Endpoint {
            erth: ErthRepr {
                op,
                request_id: 0x0777,
                port_status_mask: 0x0000_00F5,
                timestamp: 0x1357,
            },
            eeth,
        },
    )
}

/// Every MRC 1.0 packet kind: each WRITE opcode with and without TSETH,
/// a trimmed and a last-hop-trimmed WRITE, ACK, SACK and its probe-response
/// form, a NACK per reason, a reliability probe, and each endpoint
/// operation as request and response.
pub fn every_kind() -> Vec<Mrc10Packet> {
    let mut v = Vec::new();
    let mut psn = 0xFF_FFFC; // crosses the 24-bit wrap
    for op in Opcode::WRITES {
        for ts in [false, true] {
            v.push(write(op, psn, 61 + v.len(), ts));
            psn = (psn + 1) & 0xFF_FFFF;
        }
    }
    let mut retx = write(Opcode::WriteMiddle, psn, 64, false);
    retx.bth.retransmit = true;
    retx.class = TrafficClass::TrimmableRetx;
    v.push(retx);
    let mut no_trim = write(Opcode::WriteOnly, psn, 16, false);
    no_trim.class = TrafficClass::NoTrim;
    v.push(no_trim);
    for class in [TrafficClass::Trimmed, TrafficClass::TrimmedLastHop] {
        let mut t = write(Opcode::WriteMiddle, psn, 0, true);
        t.bth.pad = 3; // stale: the switch cut payload and pad
        t.class = class;
        v.push(t);
    }
    v.push(ack(psn));
    v.push(sack(psn, false));
    v.push(sack(psn, true));
    for reason in NackReason::ALL {
        v.push(nack(psn, reason));
    }
    v.push(probe(0x4242));
    for op in EndpointOp::ALL {
        for response in [false, true] {
            v.push(endpoint(response, op));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::mrc10::Profile;

    #[test]
    fn catalog_is_valid_and_covers_every_opcode() {
        let all = every_kind();
        for p in &all {
            p.validate(&Profile::DEFAULT).unwrap_or_else(|e| panic!("{e}: {p:?}"));
        }
        for op in Opcode::ALL {
            assert!(all.iter().any(|p| p.bth.opcode == op), "{op:?} missing");
        }
    }
}
