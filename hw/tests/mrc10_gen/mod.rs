//! Shared by the MRC 1.0 header tests (`rx_parser_mrc10`,
//! `tx_header_mrc10`): random valid `proto::wire::mrc10` packets of every
//! opcode, every field random within its width.
#![allow(dead_code)]

use proto::wire::mrc10::{
    catalog, choices, CcStateRepr, EethRepr, EndpointOp, ErthRepr, EvFormat, Headers, MethRepr, Mrc10Packet,
    NackReason, NethRepr, Opcode, PethRepr, SethRepr, SkipMode, TrafficClass, TsethRepr,
};
use proto::wire::{AethRepr, RethRepr, Syndrome};
use proto::Psn;
use tb::rng::Rng;

pub fn is_trimmed(class: TrafficClass) -> bool {
    matches!(class, TrafficClass::Trimmed | TrafficClass::TrimmedLastHop)
}

fn psn(r: &mut Rng) -> Psn {
    Psn::new(r.next_u64() as u32 & 0xFF_FFFF)
}

/// A random valid packet with `op`: every field random within its width.
pub fn random_packet(r: &mut Rng, op: Opcode) -> Mrc10Packet {
    let mut p = if op.is_write() {
        let len = r.below(200) as usize;
        let mut p = catalog::write(op, 0, len, r.chance(50));
        if let Headers::Write(w) = &mut p.headers {
            w.meth = MethRepr {
                rq_msn: r.next_u64() as u16,
                msn: r.next_u64() as u16,
            };
            if w.tseth.is_some() {
                w.tseth = Some(TsethRepr {
                    tx_ts: r.next_u64() as u16,
                    resolution: r.chance(50),
                    format: r.below(16) as u8,
                });
            }
            w.reth = RethRepr {
                va: r.next_u64(),
                rkey: r.next_u64() as u32,
                dma_len: r.next_u64() as u32,
            };
            if w.imm.is_some() {
                w.imm = Some(r.next_u64() as u32);
            }
        }
        p.class = match r.below(4) {
            0 => TrafficClass::NoTrim,
            1 => TrafficClass::Trimmed,
            2 => TrafficClass::TrimmedLastHop,
            _ => TrafficClass::Trimmable,
        };
        if is_trimmed(p.class) {
            // A switch cut payload and pad; PadCnt is stale.
            p.payload.truncate(r.below(3) as usize);
            p.bth.pad = r.below(4) as u8;
        }
        p
    } else {
        match op {
            Opcode::Ack => {
                let mut p = catalog::ack(0);
                p.headers = Headers::Ack(AethRepr {
                    syndrome: Syndrome::from_u8(r.next_u64() as u8),
                    msn: r.next_u64() as u32 & 0xFF_FFFF,
                });
                p
            }
            Opcode::Sack => {
                let mut p = catalog::sack(0, false);
                p.headers = Headers::Sack {
                    seth: SethRepr {
                        skip_mode: [SkipMode::None, SkipMode::SkipOnce, SkipMode::AlwaysSkip][r.below(3) as usize],
                        probe_response: r.chance(50),
                        ack_psn_offset: r.next_u64() as i16,
                        ev: r.next_u64() as u32,
                        sender_context: r.next_u64() as u16,
                        receiver_context: r.next_u64() as u16,
                        cum_ack_psn: psn(r),
                        cc_type: r.below(16) as u8,
                        cc_flags: r.below(16) as u8,
                        mpr: r.next_u64() as u8,
                        sack_offset: r.next_u64() as i16,
                        bitmap: r.next_u64(),
                    },
                    cc_state: CcStateRepr {
                        echo_ts: r.next_u64() as u16,
                        ooo_count: r.below(1 << 15) as u16,
                        restore: r.chance(50),
                        cwnd_penalty: r.below(128) as u8,
                        rcvd_bytes: r.below(1 << 24) as u32,
                    },
                };
                p
            }
            Opcode::Nack => {
                let mut p = catalog::nack(0, NackReason::Trimmed);
                p.headers = Headers::Nack(NethRepr {
                    reason: NackReason::ALL[r.below(NackReason::ALL.len() as u64) as usize],
                    vendor_info: r.next_u64() as u16,
                    ev: r.next_u64() as u32,
                    sender_context: r.next_u64() as u16,
                    receiver_context: r.next_u64() as u16,
                    nack_psn: psn(r),
                    cc_type: r.below(16) as u8,
                    cc_flags: r.below(16) as u8,
                    timestamp: r.next_u64() as u16,
                });
                p
            }
            Opcode::ReliabilityProbe => {
                let mut p = catalog::probe(0);
                p.headers = Headers::Probe(PethRepr {
                    probe_id: r.next_u64() as u16,
                    sender_context: r.next_u64() as u16,
                    receiver_context: r.next_u64() as u16,
                    timestamp: r.next_u64() as u16,
                });
                p
            }
            _ => {
                let eop = EndpointOp::ALL[r.below(2) as usize];
                let mut p = catalog::endpoint(op == Opcode::EndpointResponse, eop);
                let eeth = choices::eeth_follows(eop).then(|| {
                    let mut ev = [0u8; 32];
                    r.fill(&mut ev);
                    EethRepr {
                        ev_format: EvFormat::ALL[r.below(4) as usize],
                        port: r.next_u64() as u8,
                        service_time: r.next_u64() as u16,
                        ev,
                    }
                });
                p.headers = Headers::Endpoint {
                    erth: ErthRepr {
                        op: eop,
                        request_id: r.next_u64() as u16,
                        port_status_mask: r.next_u64() as u32,
                        timestamp: r.next_u64() as u16,
                    },
                    eeth,
                };
                p
            }
        }
    };
    let b = &mut p.bth;
    b.solicited = r.chance(50);
    b.mig_req = r.chance(50);
    b.pkey = r.next_u64() as u16;
    b.fecn = r.chance(50);
    b.becn = r.chance(50);
    b.ack_req = r.chance(50);
    b.retransmit = r.chance(50);
    b.psn = psn(r);
    if !op.is_endpoint() {
        b.dest_qp = loop {
            let q = r.next_u64() as u32 & 0xFF_FFFF;
            if q != choices::ENDPOINT_QPN {
                break q;
            }
        };
    }
    p.ev = r.next_u64() as u32;
    p
}
