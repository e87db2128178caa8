//! One way to name a NIC, for every program that opens one: the `mrc`
//! commands take it as `--device`, and [`DEVICE_ENV`] names it for
//! programs that take no flag.
//!
//! | spec | device |
//! |---|---|
//! | `soft:IP` or `soft:IP:PORT` (`soft:[IPv6]:PORT`) | a soft NIC ([`crate::soft`]) on that address, UDP port 4791 by default |
//! | `vfio:DDDD:BB:DD.F` | a card bound to `vfio-pci` ([`crate::vfio`]) |
//! | `mock` | the register-file model of the tests ([`crate::mock`]) |
//!
//! The co-simulated card is not here: it lives in the `cosim` crate, which
//! the driver does not build (it needs Verilator); the `mrc` commands that
//! run it name it `cosim`.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use crate::mock::MockDevice;
use crate::soft::{SoftNic, SoftNicConfig, ROCEV2_PORT};
use crate::vfio::{VfioDevice, VfioError, VfioOptions};
use crate::Device;

/// The environment variable naming the device of programs that take no
/// `--device` flag.
pub const DEVICE_ENV: &str = "MRC_DEVICE";

/// A device, named.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceSpec {
    Soft(SoftNicConfig),
    /// A co-simulated card (the verilated core) whose MAC is bridged to a
    /// UDP socket on `ip:port` (`cosim::udp_bridge`). The `cosim` crate
    /// provides it to the programs that link it ([`register_cosim`]).
    Cosim {
        ip: IpAddr,
        port: u16,
    },
    Vfio(String),
    Mock,
}

/// What opens a [`DeviceSpec::Cosim`]: registered by a program that
/// links the co-simulation (this crate does not depend on it).
pub type CosimOpener = fn(IpAddr, u16) -> Result<Arc<dyn Device>, String>;

static COSIM: std::sync::OnceLock<CosimOpener> = std::sync::OnceLock::new();

/// Make `cosim:` specs openable in this program (the first registration
/// wins).
pub fn register_cosim(opener: CosimOpener) {
    let _ = COSIM.set(opener);
}

/// A spec that names no device.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("device `{0}`: expected soft:IP[:PORT], cosim:IP[:PORT], vfio:DDDD:BB:DD.F or mock")]
    Kind(String),
    #[error("device `{0}`: `{1}` is not an IP address or IP:PORT")]
    Address(String, String),
}

/// Opening a named device failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenDeviceError {
    #[error("soft NIC on {addr}: {source}")]
    Soft { addr: SocketAddr, source: std::io::Error },
    #[error(transparent)]
    Vfio(#[from] VfioError),
    #[error("co-simulated card on {addr}: this program was built without the co-simulation (lib_mrc.so: scripts/libmrc.sh with MRC_LIBMRC_FEATURES=cosim)")]
    CosimNotBuilt { addr: SocketAddr },
    #[error("co-simulated card on {addr}: {why}")]
    Cosim { addr: SocketAddr, why: String },
}

impl FromStr for DeviceSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<DeviceSpec, SpecError> {
        if s == "mock" {
            return Ok(DeviceSpec::Mock);
        }
        if let Some(bdf) = s.strip_prefix("vfio:") {
            return Ok(DeviceSpec::Vfio(bdf.to_string()));
        }
        let (cosim, addr) = match (s.strip_prefix("soft:"), s.strip_prefix("cosim:")) {
            (Some(a), _) => (false, a),
            (_, Some(a)) => (true, a),
            _ => return Err(SpecError::Kind(s.to_string())),
        };
        let bad = || SpecError::Address(s.to_string(), addr.to_string());
        let (ip, port) = if let Ok(sa) = addr.parse::<SocketAddr>() {
            (sa.ip(), sa.port())
        } else {
            let ip = addr
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .map_err(|_| bad())?;
            (ip, ROCEV2_PORT)
        };
        if cosim {
            return Ok(DeviceSpec::Cosim { ip, port });
        }
        Ok(DeviceSpec::Soft(SoftNicConfig {
            ip,
            port,
            ..SoftNicConfig::default()
        }))
    }
}

impl DeviceSpec {
    /// The spec in [`DEVICE_ENV`], if set.
    pub fn from_env() -> Option<Result<DeviceSpec, SpecError>> {
        std::env::var(DEVICE_ENV).ok().map(|v| v.parse())
    }

    /// Open the device.
    pub fn open(&self) -> Result<Arc<dyn Device>, OpenDeviceError> {
        Ok(match self {
            DeviceSpec::Soft(cfg) => Arc::new(SoftNic::new(cfg.clone()).map_err(|source| OpenDeviceError::Soft {
                addr: SocketAddr::new(cfg.ip, cfg.port),
                source,
            })?),
            DeviceSpec::Cosim { ip, port } => {
                let addr = SocketAddr::new(*ip, *port);
                let open = COSIM.get().ok_or(OpenDeviceError::CosimNotBuilt { addr })?;
                open(*ip, *port).map_err(|why| OpenDeviceError::Cosim { addr, why })?
            }
            DeviceSpec::Vfio(bdf) => Arc::new(VfioDevice::open(bdf, &VfioOptions::default())?),
            DeviceSpec::Mock => Arc::new(MockDevice::new()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn specs_parse_and_bad_ones_say_why() {
        let soft = |s: &str| match s.parse::<DeviceSpec>().unwrap() {
            DeviceSpec::Soft(c) => (c.ip, c.port),
            other => panic!("{other:?}"),
        };
        assert_eq!(soft("soft:10.0.0.1"), (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 4791));
        assert_eq!(
            soft("soft:10.0.0.1:5000"),
            (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 5000)
        );
        assert_eq!(soft("soft:[::1]:5000"), (IpAddr::V6(Ipv6Addr::LOCALHOST), 5000));
        assert_eq!(soft("soft:::1"), (IpAddr::V6(Ipv6Addr::LOCALHOST), 4791));
        assert_eq!(
            "vfio:0000:3b:00.0".parse::<DeviceSpec>(),
            Ok(DeviceSpec::Vfio("0000:3b:00.0".into()))
        );
        assert_eq!("mock".parse::<DeviceSpec>(), Ok(DeviceSpec::Mock));
        assert_eq!(
            "cosim:10.0.0.3".parse::<DeviceSpec>(),
            Ok(DeviceSpec::Cosim {
                ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 3)),
                port: 4791
            })
        );
        // Without the co-simulation linked, opening one says so.
        let e = "cosim:127.0.0.1".parse::<DeviceSpec>().unwrap().open().err().unwrap();
        assert!(e.to_string().contains("built without the co-simulation"), "{e}");
        assert!(matches!(
            "soft:nowhere".parse::<DeviceSpec>(),
            Err(SpecError::Address(..))
        ));
        assert!(matches!("card0".parse::<DeviceSpec>(), Err(SpecError::Kind(_))));
    }
}
