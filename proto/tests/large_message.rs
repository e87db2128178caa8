//! The 2 GiB message limit, end to end for both transports: a 2 GiB WRITE
//! with immediate crosses the PSN wrap and completes on both sides; one byte
//! more is refused. The responder's region is a sink (checked, not stored)
//! and the source is one zero-filled buffer, so the test needs no 4 GiB.

use bytes::Bytes;
use proto::loopback::Scenario;
use proto::model::*;
use proto::time::{Duration, Instant};

const VA: u64 = 0x40_0000_0000;
const RKEY: u32 = 0x77;

fn pair(transport: Transport) -> (Qp, Qp) {
    let mut sc = Scenario::new(transport, 4, Vec::new()).with_start_psn(0xFF_F000);
    for ep in [&mut sc.a, &mut sc.b] {
        ep.cfg.mtu = MAX_MTU;
        ep.cfg.ack_every = 16;
        ep.rts.cc = cc::CcConfig::Fixed { window: 64 << 20 };
    }
    let a: Qp = sc.a.bring_up(Instant::ZERO).unwrap();
    let mut b: Qp = sc.b.bring_up(Instant::ZERO).unwrap();
    b.memory_mut().register_sink(VA, MAX_MESSAGE_LEN, RKEY).unwrap();
    b.post_recv(1).unwrap();
    (a, b)
}

#[test]
fn two_gib_write_with_immediate_completes_on_both_transports() {
    // calloc'd: pages are only mapped when read, and reads of untouched
    // pages share the zero page.
    let data = Bytes::from(vec![0u8; MAX_MESSAGE_LEN as usize]);
    for transport in [Transport::Mrc, Transport::Rc] {
        let (mut a, mut b) = pair(transport);
        let too_long = WriteRequest {
            wr_id: 9,
            data: Bytes::from(vec![0u8; MAX_MESSAGE_LEN as usize + 1]),
            remote_va: VA,
            rkey: RKEY,
            imm: None,
        };
        assert_eq!(
            a.post_write(Instant::ZERO, too_long),
            Err(PostError::TooLong(MAX_MESSAGE_LEN + 1))
        );
        let wr = WriteRequest {
            wr_id: 7,
            data: data.clone(),
            remote_va: VA,
            rkey: RKEY,
            imm: Some(0xC0DE),
        };
        a.post_write(Instant::ZERO, wr).unwrap();
        let mut now = Instant::ZERO;
        let (mut sent, mut recvd) = (None, None);
        while sent.is_none() || recvd.is_none() {
            let mut moved = false;
            while let Some(p) = a.poll_transmit(now) {
                b.handle_packet(now, p).unwrap();
                moved = true;
            }
            while let Some(p) = b.poll_transmit(now) {
                a.handle_packet(now, p).unwrap();
                moved = true;
            }
            while let Some(e) = a.poll_event() {
                if let Event::SendCompleted(c) = e {
                    sent = Some(c);
                }
            }
            while let Some(e) = b.poll_event() {
                if let Event::RecvCompleted(c) = e {
                    recvd = Some(c);
                }
            }
            now += Duration::from_ns(100);
            if !moved {
                if let Some(t) = a.poll_timeout().into_iter().chain(b.poll_timeout()).min() {
                    now = now.max(t);
                    a.handle_timeout(now);
                    b.handle_timeout(now);
                }
            }
            assert!(now < Instant::from_us(10_000_000), "{transport:?}: stuck");
        }
        let sent = sent.unwrap();
        let recvd = recvd.unwrap();
        assert_eq!(sent.status, WcStatus::Success, "{transport:?}");
        assert_eq!(sent.wr_id, 7);
        assert_eq!(recvd.status, WcStatus::Success, "{transport:?}");
        assert_eq!(
            (recvd.wr_id, recvd.imm, recvd.len),
            (1, Some(0xC0DE), 1 << 31),
            "{transport:?}"
        );
        let packets = MAX_MESSAGE_LEN.div_ceil(MAX_MTU as u64);
        assert_eq!(a.counters().tx_data_packets, packets, "{transport:?}");
        assert_eq!(b.counters().rx_data_bytes, MAX_MESSAGE_LEN, "{transport:?}");
        assert_eq!(a.counters().retransmitted_packets, 0, "{transport:?}");
    }
}
