//! Hello, RDMA WRITE: the smallest program of the driver's verbs API, on
//! one co-simulated card in MAC loopback (no second card, no cable).
//!
//! It opens the card, sets its address, turns loopback on, registers a
//! source and a destination buffer, brings a pair of QPs up (INIT -> RTR ->
//! RTS, each QP's peer being the other), posts one signaled WRITE and
//! polls its send completion, then checks the destination holds the
//! bytes. On a real card only the device changes: `driver::vfio` in place
//! of `CosimDevice` (docs/driver.md).
//!
//!     cargo run -p cosim --example hello_write
//!
//! The first run builds the Verilator model of the core (minutes); later
//! runs reuse it.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use contract::layout::CqStatus;
use cosim::device::{CosimDevice, CosimOptions};
use driver::{
    Access, CcProfile, Context, EvProfile, LocalAddress, OpenOptions, PeerAddress, QpTransition, RtrAttr, RtsAttr,
    Timeouts, WriteWr,
};

/// Simulated cycles to wait for the completion before giving up (about
/// 3 ms of the card's time).
const MAX_CYCLES: u64 = 1_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The card: the core's Verilog under Verilator behind the driver's
    // `Device` trait.
    let built = cosim::nic::build_core(&verilated::BuildOptions::default())?;
    let dev = Arc::new(CosimDevice::single(&built, &CosimOptions::default())?);
    let ctx = Context::open(dev.clone(), &OpenOptions::default())?;
    println!("opened a card, build {:016x}", ctx.info().git_hash);

    let me = LocalAddress {
        mac: [2, 0, 0, 0, 0, 1],
        ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        vlan_tci: None,
        dscp: 26,
        ttl: 64,
        wire_mrc10: false,
    };
    ctx.set_local_address(&me);
    ctx.set_mac_loopback(true);
    // EV events go to a controller ring, which must exist before a QP
    // reaches RTS.
    let _controller = ctx.controller(10)?;

    let pd = ctx.alloc_pd();
    let mut send_cq = ctx.create_cq(6)?;
    let mut recv_cq = ctx.create_cq(6)?;
    let message = b"hello, RDMA WRITE over MRC";
    let src_buf = pd.alloc_buffer(message.len())?;
    let dst_buf = pd.alloc_buffer(message.len())?;
    src_buf.write(0, message)?;
    let src = pd.register(&src_buf, Access::LocalOnly)?;
    let dst = pd.register(&dst_buf, Access::RemoteWrite)?;

    // Two QPs of the same card, each the other's peer.
    let mut requester = pd.create_qp(&mut send_cq, 4)?;
    let mut responder = pd.create_qp(&mut recv_cq, 1)?;
    let peer = PeerAddress { mac: me.mac, ip: me.ip };
    let rts = RtsAttr {
        sq_psn: 0,
        send_mpr_units: 2,
        max_wimm: 1,
        timeouts: Timeouts::default(),
        evs: EvProfile {
            values: (0..8).map(|i| 0x1000 + i).collect(),
            min_active: 1,
        },
        cc: CcProfile::default(),
    };
    let (a, b) = (requester.wire_qpn(), responder.wire_qpn());
    for (qp, dest_qp) in [(&mut requester, b), (&mut responder, a)] {
        qp.modify(QpTransition::Init { pkey: 0xFFFF })?;
        qp.modify(QpTransition::Rtr(RtrAttr {
            dest_qp,
            rq_psn: 0,
            peer,
            log2_mtu: 10,
            max_wimm: 1,
        }))?;
        qp.modify(QpTransition::Rts(rts.clone()))?;
    }
    ctx.sync()?;

    requester.post_write(&WriteWr {
        wr_id: 1,
        local: &src,
        local_offset: 0,
        len: message.len() as u32,
        remote_va: dst.remote_va(),
        rkey: dst.rkey().expect("registered for remote write"),
        signaled: true,
        imm: None,
    })?;
    let start = dev.cycles();
    let wc = loop {
        if let Some(wc) = send_cq.poll_cq()? {
            break wc;
        }
        if dev.cycles() - start > MAX_CYCLES {
            return Err("no completion within the cycle budget".into());
        }
    };
    println!(
        "completion: QP {} wr_id {} {:?} after {:.2} us (simulated)",
        wc.qp,
        wc.wr_id,
        wc.status,
        cosim::device::cycles_to_ns(dev.cycles() - start) / 1000.0
    );
    if wc.status != CqStatus::Success {
        return Err(format!("WRITE failed: {:?}", wc.status).into());
    }
    let mut got = vec![0u8; message.len()];
    dst_buf.read(0, &mut got)?;
    println!("destination: {:?}", String::from_utf8_lossy(&got));
    if got != message {
        return Err("the destination does not hold the message".into());
    }
    println!("OK");
    Ok(())
}
