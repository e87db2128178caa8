//! A co-simulated card's MAC on a real UDP socket: [`UdpBridge`] is the
//! [`Interconnect`] of a one-card bench that sends every frame the core
//! puts on MAC TX as a UDP datagram to the IP it is addressed to, and
//! feeds every datagram that arrives to MAC RX as the frame a wire would
//! have delivered, so a verilated card exchanges traffic with a soft NIC
//! (`driver::soft`) in another process or on another machine.
//!
//! The datagrams are the frames' UDP payloads (BTH to ICRC) with the same
//! rules as the soft NIC's (`driver::soft::datagram`): each EV leaves from
//! its own source port, the traffic class is carried per packet, the ICRC
//! holds for the headers the kernel writes. The card's clock is simulated
//! and runs far slower than the wall clock (the bench advances only while
//! the driver touches the card), so a peer's timeouts must allow for it.

use std::net::{IpAddr, SocketAddr};

use driver::soft::datagram::{self, Arrival};
use driver::soft::udp::{EvSockets, SendError};
use proto::wire::frame::parse_outer;

use crate::device::{DriverMemory, Interconnect};
use crate::nic::Nic;

/// Cycles between two looks at the socket (a system call each).
const POLL_EVERY_CYCLES: u64 = 32;
/// Datagrams taken per look.
const RX_BATCH: usize = 16;

/// What the bridge counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    pub tx_datagrams: u64,
    /// A frame the core sent that is not IP/UDP (nothing to send it to).
    pub tx_unroutable: u64,
    pub tx_errors: u64,
    pub rx_datagrams: u64,
    /// A datagram of the other address family.
    pub rx_dropped: u64,
}

/// See the module doc.
pub struct UdpBridge {
    sockets: EvSockets,
    /// The card's address: its frames come from it, datagrams arrive at it.
    at: Arrival,
    /// UDP port of the peers.
    port: u16,
    rx: Vec<u8>,
    frame: Vec<u8>,
    pub stats: BridgeStats,
}

impl UdpBridge {
    /// Bind the card's address `ip:port` (and, per EV, `ip:EV`); `mac` is
    /// the card's MAC (the destination of the frames it receives).
    pub fn bind(ip: IpAddr, port: u16, mac: [u8; 6]) -> std::io::Result<UdpBridge> {
        let mut sockets = EvSockets::bind(ip, port, true, false)?;
        sockets.allow_all();
        Ok(UdpBridge {
            sockets,
            at: Arrival { ip, mac },
            port,
            rx: vec![0; driver::soft::engine::MAX_DATAGRAM],
            frame: Vec::new(),
            stats: BridgeStats::default(),
        })
    }

    fn send(&mut self, mut frame: Vec<u8>) {
        let (encap, src_port, dst) = match parse_outer(&frame, false) {
            Ok(o) => {
                let dst = match o.encap.ip {
                    proto::wire::IpPair::V4 { dst, .. } => IpAddr::from(dst),
                    proto::wire::IpPair::V6 { dst, .. } => IpAddr::from(dst),
                };
                (o.encap, o.src_port, dst)
            }
            Err(_) => {
                self.stats.tx_unroutable += 1;
                return;
            }
        };
        let (sock, src) = self.sockets.for_ev(src_port);
        let out = datagram::frame_to_datagram(&mut frame, &encap, Some(src));
        match sock.send(&frame[out.payload_at..], SocketAddr::new(dst, self.port), out.tos) {
            Ok(()) => self.stats.tx_datagrams += 1,
            Err(SendError::Busy | SendError::TooBig | SendError::Io(_)) => self.stats.tx_errors += 1,
        }
    }
}

impl Interconnect for UdpBridge {
    fn step(&mut self, cycle: u64, nics: &mut [Nic<DriverMemory>]) {
        let Some(nic) = nics.first_mut() else { return };
        let frames: Vec<Vec<u8>> = nic.tx.frames.drain(..).collect();
        for f in frames {
            self.send(f);
        }
        if !cycle.is_multiple_of(POLL_EVERY_CYCLES) {
            return;
        }
        for _ in 0..RX_BATCH {
            let Ok(Some(r)) = self.sockets.own.recv(&mut self.rx) else {
                break;
            };
            self.stats.rx_datagrams += 1;
            if datagram::from_datagram(&self.rx[..r.len], r.from, self.at, r.tos, &mut self.frame).is_some() {
                nic.rx.push(std::mem::take(&mut self.frame));
            } else {
                self.stats.rx_dropped += 1;
            }
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A co-simulated card on its own, its MAC on a UDP socket at `ip:port`,
/// its clock free-running (what `cosim:IP[:PORT]` names through
/// `driver::select`, for programs such as `lib_mrc.so` built with the
/// co-simulation). The verilated core is built once and cached
/// (`cosim::nic::build_core`). Its MAC address is
/// `driver::soft::mac_for(ip)`, as every soft NIC's peer derives it.
pub fn open_card(ip: IpAddr, port: u16) -> Result<std::sync::Arc<dyn driver::Device>, String> {
    use crate::device::{CosimDevice, CosimOptions};
    let built = crate::nic::build_core(&verilated::BuildOptions::default()).map_err(|e| e.to_string())?;
    let card = CosimDevice::single(&built, &CosimOptions::default()).map_err(|e| e.to_string())?;
    let bridge = UdpBridge::bind(ip, port, driver::soft::mac_for(ip)).map_err(|e| format!("bind {ip}:{port}: {e}"))?;
    card.with_bench(|b| b.link = Some(Box::new(bridge)));
    card.run_free().map_err(|e| e.to_string())?;
    Ok(std::sync::Arc::new(card))
}

/// Make `cosim:` device names openable in this program.
pub fn register_with_driver() {
    driver::select::register_cosim(open_card);
}
