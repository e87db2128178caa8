//! The VFIO backend: a real card, from user space.
//!
//! Bring-up (docs/driver.md has the host steps): the card's PCI function
//! is bound to `vfio-pci`; its IOMMU group (`/sys/bus/pci/devices/<addr>/
//! iommu_group`) is opened through a VFIO container; BAR0 is mapped into
//! this process ([`BarMap`]: `vfio-ioctls` has no mmap helper, so the
//! device fd is mapped at the region's offset with `memmap2`); DMA buffers
//! are anonymous (optionally huge-page) mappings pinned and mapped into
//! the IOMMU at IOVAs this driver chooses (`VFIO_IOMMU_MAP_DMA`), unmapped
//! when the last [`DmaBuffer`] clone drops.
//!
//! What runs here without a card: PCI address parsing, sysfs resolution
//! on a fake tree ([`Sysfs`] with another root), IOMMU-group viability,
//! and [`BarMap`] over a file-backed mapping. Opening a container and a
//! device needs `/dev/vfio`, which this machine does not have.

use crate::device::{DeviceError, DmaBacking, DmaBuffer, IovaAllocator};
use crate::Device;
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::str::FromStr;
use std::sync::Arc;

/// A PCI function address, `dddd:bb:dd.f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PciAddress {
    pub domain: u16,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

/// Errors of the VFIO backend.
#[derive(Debug, thiserror::Error)]
pub enum VfioError {
    #[error("bad PCI address `{0}` (want dddd:bb:dd.f or bb:dd.f, hex; device <= 1f, function <= 7)")]
    BadAddress(String),
    #[error("no PCI device {0} (is the card seated and enumerated? `lspci -s {0}`)")]
    NoDevice(PciAddress),
    #[error("PCI device {0} has no IOMMU group: enable the IOMMU (intel_iommu=on / amd_iommu=on, iommu=pt) on the kernel command line")]
    NoIommuGroup(PciAddress),
    #[error("PCI device {addr} is bound to `{driver}`, not vfio-pci: bind it (docs/driver.md)")]
    NotVfio { addr: PciAddress, driver: String },
    #[error("IOMMU group {group} is not viable: {member} is bound to `{driver}`; every device of the group must be bound to vfio-pci (or to no driver)")]
    GroupNotViable { group: u32, member: String, driver: String },
    #[error("{path}: {source} (permissions: the user needs read/write on /dev/vfio/<group>, and RLIMIT_MEMLOCK large enough for the DMA buffers)")]
    Access { path: PathBuf, source: std::io::Error },
    #[error("sysfs {path}: {source}")]
    Sysfs { path: PathBuf, source: std::io::Error },
    #[error("BAR{index}: {why}")]
    Bar { index: u32, why: String },
    #[error("VFIO: {0}")]
    Ioctl(#[from] vfio_ioctls::VfioError),
}

impl fmt::Display for PciAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl FromStr for PciAddress {
    type Err = VfioError;
    fn from_str(s: &str) -> Result<PciAddress, VfioError> {
        let bad = || VfioError::BadAddress(s.to_string());
        let parts: Vec<&str> = s.trim().split(':').collect();
        let (domain, bus, devfn) = match parts.as_slice() {
            [d, b, df] => (*d, *b, *df),
            [b, df] => ("0", *b, *df),
            _ => return Err(bad()),
        };
        let (dev, func) = devfn.split_once('.').ok_or_else(bad)?;
        let hex = |t: &str, max_len: usize| {
            if t.is_empty() || t.len() > max_len {
                return Err(bad());
            }
            u32::from_str_radix(t, 16).map_err(|_| bad())
        };
        let a = PciAddress {
            domain: hex(domain, 4)? as u16,
            bus: hex(bus, 2)? as u8,
            device: hex(dev, 2)? as u8,
            function: hex(func, 1)? as u8,
        };
        if a.device > 0x1f || a.function > 7 {
            return Err(bad());
        }
        Ok(a)
    }
}

/// The sysfs tree (`/sys`, or a fake one in tests).
#[derive(Clone, Debug)]
pub struct Sysfs {
    pub root: PathBuf,
}

impl Default for Sysfs {
    fn default() -> Self {
        Sysfs {
            root: PathBuf::from("/sys"),
        }
    }
}

fn link_name(path: &Path) -> Result<Option<String>, VfioError> {
    match std::fs::read_link(path) {
        Ok(t) => Ok(t.file_name().map(|n| n.to_string_lossy().into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(VfioError::Sysfs {
            path: path.to_path_buf(),
            source,
        }),
    }
}

impl Sysfs {
    pub fn with_root(root: impl Into<PathBuf>) -> Sysfs {
        Sysfs { root: root.into() }
    }

    /// `/sys/bus/pci/devices/<addr>` (what `VfioDevice::new` is given).
    pub fn device_dir(&self, addr: PciAddress) -> PathBuf {
        self.root.join("bus/pci/devices").join(addr.to_string())
    }

    /// The IOMMU group number of `addr`.
    pub fn iommu_group(&self, addr: PciAddress) -> Result<u32, VfioError> {
        let dir = self.device_dir(addr);
        if !dir.exists() {
            return Err(VfioError::NoDevice(addr));
        }
        let name = link_name(&dir.join("iommu_group"))?.ok_or(VfioError::NoIommuGroup(addr))?;
        name.parse().map_err(|_| VfioError::Sysfs {
            path: dir.join("iommu_group"),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("group `{name}` is not a number"),
            ),
        })
    }

    /// The kernel driver bound to `addr`, if any.
    pub fn driver(&self, addr: PciAddress) -> Result<Option<String>, VfioError> {
        link_name(&self.device_dir(addr).join("driver"))
    }

    /// The devices (sysfs names) of IOMMU group `group`.
    pub fn group_members(&self, group: u32) -> Result<Vec<String>, VfioError> {
        let dir = self
            .root
            .join("kernel/iommu_groups")
            .join(group.to_string())
            .join("devices");
        let rd = std::fs::read_dir(&dir).map_err(|source| VfioError::Sysfs {
            path: dir.clone(),
            source,
        })?;
        let mut v: Vec<String> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        Ok(v)
    }

    /// Check that `addr` can be opened through VFIO: bound to vfio-pci,
    /// its group viable (every member bound to vfio-pci or to nothing;
    /// PCIe bridges bound to `pcieport` are allowed, as the kernel does).
    /// Returns the group number.
    pub fn check_vfio_ready(&self, addr: PciAddress) -> Result<u32, VfioError> {
        let group = self.iommu_group(addr)?;
        match self.driver(addr)? {
            Some(d) if d == "vfio-pci" => {}
            other => {
                return Err(VfioError::NotVfio {
                    addr,
                    driver: other.unwrap_or_else(|| "no driver".into()),
                })
            }
        }
        for member in self.group_members(group)? {
            let drv = link_name(&self.root.join("bus/pci/devices").join(&member).join("driver"))?;
            if let Some(d) = drv {
                if d != "vfio-pci" && d != "pcieport" {
                    return Err(VfioError::GroupNotViable {
                        group,
                        member,
                        driver: d,
                    });
                }
            }
        }
        Ok(group)
    }
}

/// `/dev/vfio/<group>`.
pub fn group_device_path(group: u32) -> PathBuf {
    PathBuf::from("/dev/vfio").join(group.to_string())
}

/// A BAR mapped into this process: bounds- and alignment-checked
/// volatile 32/64-bit accesses. Out-of-range or misaligned accesses read
/// all-ones and write nothing (never a wild pointer).
pub struct BarMap {
    map: memmap2::MmapRaw,
}

impl fmt::Debug for BarMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BarMap {{ len: {:#x} }}", self.map.len())
    }
}

impl BarMap {
    /// Map `len` bytes of `fd` at `offset` (a VFIO region offset, or a
    /// file offset in tests), shared, read/write.
    pub fn map<T: memmap2::MmapAsRawDesc>(fd: T, offset: u64, len: usize) -> std::io::Result<BarMap> {
        if len == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty BAR"));
        }
        let map = memmap2::MmapOptions::new().offset(offset).len(len).map_raw(fd)?;
        Ok(BarMap { map })
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    fn at(&self, offset: u64, width: u64) -> Option<*mut u8> {
        let end = offset.checked_add(width)?;
        (offset.is_multiple_of(width) && end <= self.map.len() as u64)
            // SAFETY: in bounds of the mapping.
            .then(|| unsafe { self.map.as_mut_ptr().add(offset as usize) })
    }

    pub fn read32(&self, offset: u64) -> u32 {
        // SAFETY: in bounds and aligned; volatile (MMIO).
        self.at(offset, 4)
            .map_or(u32::MAX, |p| unsafe { std::ptr::read_volatile(p as *const u32) })
    }

    pub fn write32(&self, offset: u64, value: u32) {
        if let Some(p) = self.at(offset, 4) {
            // SAFETY: in bounds and aligned; volatile (MMIO).
            unsafe { std::ptr::write_volatile(p as *mut u32, value) }
        }
    }

    pub fn read64(&self, offset: u64) -> u64 {
        // SAFETY: in bounds and aligned; volatile.
        self.at(offset, 8)
            .map_or(u64::MAX, |p| unsafe { std::ptr::read_volatile(p as *const u64) })
    }

    pub fn write64(&self, offset: u64, value: u64) {
        if let Some(p) = self.at(offset, 8) {
            // SAFETY: in bounds and aligned; volatile.
            unsafe { std::ptr::write_volatile(p as *mut u64, value) }
        }
    }
}

/// Options of [`VfioDevice::open`].
#[derive(Clone, Debug)]
pub struct VfioOptions {
    /// Reset the function (FLR) after opening.
    pub reset: bool,
    /// Back DMA buffers with 2 MiB huge pages (needs reserved hugepages).
    pub huge_pages: bool,
    pub sysfs: Sysfs,
}

impl Default for VfioOptions {
    fn default() -> Self {
        VfioOptions {
            reset: true,
            huge_pages: false,
            sysfs: Sysfs::default(),
        }
    }
}

/// DMA memory mapped through the IOMMU: unmapped, then freed, on drop.
struct VfioDma {
    container: Arc<vfio_ioctls::VfioContainer>,
    iova: u64,
    len: usize,
    _map: memmap2::MmapMut,
}

impl DmaBacking for VfioDma {}

impl Drop for VfioDma {
    fn drop(&mut self) {
        // Unmap before the pages go back to the kernel: the card must not
        // reach freed memory. A failure here leaves the pages pinned until
        // the container closes; nothing better can be done in a drop.
        let _ = self.container.vfio_dma_unmap(self.iova, self.len);
    }
}

/// The IOMMU mapping of program memory ([`Device::map_host_memory`]):
/// unmapped on drop; the memory stays the program's.
struct VfioUserDma {
    container: Arc<vfio_ioctls::VfioContainer>,
    iova: u64,
    len: usize,
}

impl DmaBacking for VfioUserDma {}

impl Drop for VfioUserDma {
    fn drop(&mut self) {
        // As `VfioDma`: the card must not reach the pages after this.
        let _ = self.container.vfio_dma_unmap(self.iova, self.len);
    }
}

/// A card through VFIO.
pub struct VfioDevice {
    addr: PciAddress,
    container: Arc<vfio_ioctls::VfioContainer>,
    device: vfio_ioctls::VfioDevice,
    bar0: BarMap,
    iovas: IovaAllocator,
    huge_pages: bool,
}

/// PCI command register bits: memory space and bus master.
const PCI_COMMAND: u64 = 0x04;
const PCI_COMMAND_MEMORY: u16 = 1 << 1;
const PCI_COMMAND_MASTER: u16 = 1 << 2;

impl VfioDevice {
    /// Open `addr` (`"0000:3b:00.0"`): check sysfs, open the container
    /// and the group, get the device, map BAR0, enable memory decoding and
    /// bus mastering, optionally reset.
    pub fn open(addr: &str, opts: &VfioOptions) -> Result<VfioDevice, VfioError> {
        use vfio_bindings::bindings::vfio::{
            VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX, VFIO_REGION_INFO_FLAG_MMAP,
        };
        let addr: PciAddress = addr.parse()?;
        let group = opts.sysfs.check_vfio_ready(addr)?;
        // Open the group node once ourselves for a clear permission error
        // (the crate's error does not say what to fix).
        let node = group_device_path(group);
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&node)
            .map_err(|source| VfioError::Access { path: node, source })?;
        let container = Arc::new(vfio_ioctls::VfioContainer::new(None)?);
        let ops: Arc<dyn vfio_ioctls::VfioOps> = container.clone();
        let device = vfio_ioctls::VfioDevice::new(&opts.sysfs.device_dir(addr), ops, false)?;
        let bar = VFIO_PCI_BAR0_REGION_INDEX;
        if device.get_region_flags(bar) & VFIO_REGION_INFO_FLAG_MMAP == 0 {
            return Err(VfioError::Bar {
                index: bar,
                why: "not mappable (VFIO_REGION_INFO_FLAG_MMAP clear)".into(),
            });
        }
        let size = device.get_region_size(bar);
        if size < 1 << contract::regmap::ADDR_BITS {
            return Err(VfioError::Bar {
                index: bar,
                why: format!(
                    "{size:#x} bytes, the register map needs {:#x}",
                    1u64 << contract::regmap::ADDR_BITS
                ),
            });
        }
        let offset = device.get_region_offset(bar);
        use std::os::fd::AsRawFd;
        let bar0 = BarMap::map(device.as_raw_fd(), offset, size as usize).map_err(|e| VfioError::Bar {
            index: bar,
            why: format!("mmap: {e}"),
        })?;
        if opts.reset {
            device.reset();
        }
        let cfg = VFIO_PCI_CONFIG_REGION_INDEX;
        let mut cmd = [0u8; 2];
        device.region_read(cfg, &mut cmd, PCI_COMMAND);
        let cmd = u16::from_le_bytes(cmd) | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
        device.region_write(cfg, &cmd.to_le_bytes(), PCI_COMMAND);
        Ok(VfioDevice {
            addr,
            container,
            device,
            bar0,
            iovas: IovaAllocator::new(),
            huge_pages: opts.huge_pages,
        })
    }

    pub fn address(&self) -> PciAddress {
        self.addr
    }
}

impl Device for VfioDevice {
    fn name(&self) -> String {
        format!("vfio:{}", self.addr)
    }
    fn bar_len(&self) -> u64 {
        self.bar0.len() as u64
    }
    fn read32(&self, offset: u64) -> u32 {
        self.bar0.read32(offset)
    }
    fn write32(&self, offset: u64, value: u32) {
        self.bar0.write32(offset, value)
    }
    fn alloc_dma(&self, len: usize) -> Result<DmaBuffer, DeviceError> {
        let page: usize = if self.huge_pages { 2 << 20 } else { 4096 };
        let size = len.max(1).div_ceil(page) * page;
        let mut o = memmap2::MmapOptions::new();
        o.len(size).populate();
        if self.huge_pages {
            o.huge(Some(21));
        }
        let mut map = o.map_anon().map_err(|e| DeviceError::DmaAlloc {
            len,
            why: format!("mmap: {e}"),
        })?;
        let ptr = NonNull::new(map.as_mut_ptr()).ok_or(DeviceError::DmaAlloc {
            len,
            why: "null mapping".into(),
        })?;
        let iova = self.iovas.take(size, page as u64);
        // SAFETY: `map` is `size` bytes we own; it outlives the IOMMU
        // mapping (VfioDma unmaps before dropping it); only raw/volatile
        // accesses reach it through DmaBuffer.
        unsafe { self.container.vfio_dma_map(iova, size, ptr.as_ptr()) }.map_err(|e| DeviceError::DmaAlloc {
            len,
            why: format!("VFIO_IOMMU_MAP_DMA: {e} (RLIMIT_MEMLOCK?)"),
        })?;
        let backing = VfioDma {
            container: self.container.clone(),
            iova,
            len: size,
            _map: map,
        };
        // SAFETY: the memory is owned by `backing`.
        Ok(unsafe { DmaBuffer::from_raw(ptr, len, iova, Box::new(backing)) })
    }
    /// Map the program's pages into the IOMMU at a fresh IOVA (the card
    /// then reaches them; `remote_va` of a region over them is that IOVA,
    /// not the host address). Not run here: no card.
    unsafe fn map_host_memory(&self, ptr: NonNull<u8>, len: usize) -> Result<DmaBuffer, DeviceError> {
        const PAGE: usize = 4096;
        let start = ptr.as_ptr() as usize & !(PAGE - 1);
        let end = (ptr.as_ptr() as usize)
            .checked_add(len.max(1))
            .and_then(|e| e.checked_next_multiple_of(PAGE))
            .ok_or(DeviceError::DmaAlloc {
                len,
                why: "the range wraps the address space".into(),
            })?;
        let size = end - start;
        let iova = self.iovas.take(size, PAGE as u64);
        // SAFETY: the caller keeps the pages valid while the buffer lives;
        // the backing unmaps them from the IOMMU when it is dropped.
        unsafe { self.container.vfio_dma_map(iova, size, start as *mut u8) }.map_err(|e| DeviceError::DmaAlloc {
            len,
            why: format!("VFIO_IOMMU_MAP_DMA of program memory: {e} (RLIMIT_MEMLOCK?)"),
        })?;
        let backing = VfioUserDma {
            container: self.container.clone(),
            iova,
            len: size,
        };
        let at = iova + (ptr.as_ptr() as usize - start) as u64;
        // SAFETY: the caller's promise keeps the memory valid.
        Ok(unsafe { DmaBuffer::from_raw(ptr, len, at, Box::new(backing)) })
    }

    fn reset(&self) -> Result<(), DeviceError> {
        self.device.reset();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::symlink;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mrc-driver-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn parses_and_prints_pci_addresses() {
        let a: PciAddress = "0000:3b:00.1".parse().unwrap();
        assert_eq!(
            a,
            PciAddress {
                domain: 0,
                bus: 0x3b,
                device: 0,
                function: 1
            }
        );
        assert_eq!(a.to_string(), "0000:3b:00.1");
        let b: PciAddress = "af:1f.7".parse().unwrap();
        assert_eq!(b.to_string(), "0000:af:1f.7");
        assert_eq!("10000:00:00.0".parse::<PciAddress>().ok(), None);
        for bad in [
            "",
            "3b:00",
            "3b:20.0",
            "3b:00.8",
            "zz:00.0",
            "0000:3b:00.0:1",
            "3b:00.",
            "3b:000.0",
        ] {
            assert!(
                matches!(bad.parse::<PciAddress>(), Err(VfioError::BadAddress(_))),
                "{bad}"
            );
        }
    }

    /// A fake sysfs: the card in group 42 with a sibling function, bound
    /// as given.
    fn fake_tree(root: &Path, card_driver: Option<&str>, sibling_driver: Option<&str>) {
        let devs = root.join("bus/pci/devices");
        let drivers = root.join("bus/pci/drivers");
        let group = root.join("kernel/iommu_groups/42/devices");
        std::fs::create_dir_all(&group).unwrap();
        for (name, drv) in [("0000:3b:00.0", card_driver), ("0000:3b:00.1", sibling_driver)] {
            let d = devs.join(name);
            std::fs::create_dir_all(&d).unwrap();
            symlink("../../../../kernel/iommu_groups/42", d.join("iommu_group")).unwrap();
            if let Some(drv) = drv {
                std::fs::create_dir_all(drivers.join(drv)).unwrap();
                symlink(format!("../../../../bus/pci/drivers/{drv}"), d.join("driver")).unwrap();
            }
            symlink(format!("../../../../bus/pci/devices/{name}"), group.join(name)).unwrap();
        }
        // A device without an IOMMU group (IOMMU off).
        std::fs::create_dir_all(devs.join("0000:00:1f.0")).unwrap();
    }

    #[test]
    fn resolves_groups_and_checks_bindings_on_a_fake_sysfs() {
        let root = temp_dir("sysfs");
        fake_tree(&root, Some("vfio-pci"), None);
        let s = Sysfs::with_root(&root);
        let card: PciAddress = "0000:3b:00.0".parse().unwrap();
        assert_eq!(s.device_dir(card), root.join("bus/pci/devices/0000:3b:00.0"));
        assert_eq!(s.iommu_group(card).unwrap(), 42);
        assert_eq!(s.driver(card).unwrap().as_deref(), Some("vfio-pci"));
        assert_eq!(s.group_members(42).unwrap(), vec!["0000:3b:00.0", "0000:3b:00.1"]);
        assert_eq!(s.check_vfio_ready(card).unwrap(), 42);
        assert_eq!(group_device_path(42), PathBuf::from("/dev/vfio/42"));
        assert!(matches!(
            s.iommu_group("0000:00:1f.0".parse().unwrap()),
            Err(VfioError::NoIommuGroup(_))
        ));
        assert!(matches!(
            s.iommu_group("0000:99:00.0".parse().unwrap()),
            Err(VfioError::NoDevice(_))
        ));

        // The sibling bound to a host driver makes the group unusable.
        let root2 = temp_dir("sysfs2");
        fake_tree(&root2, Some("vfio-pci"), Some("xdma"));
        let e = Sysfs::with_root(&root2).check_vfio_ready(card).unwrap_err();
        assert!(
            matches!(&e, VfioError::GroupNotViable { group: 42, member, driver } if member == "0000:3b:00.1" && driver == "xdma"),
            "{e}"
        );
        // The card itself still on its vendor driver.
        let root3 = temp_dir("sysfs3");
        fake_tree(&root3, Some("xdma"), None);
        let e = Sysfs::with_root(&root3).check_vfio_ready(card).unwrap_err();
        assert!(e.to_string().contains("bound to `xdma`, not vfio-pci"), "{e}");
        for r in [root, root2, root3] {
            std::fs::remove_dir_all(r).unwrap();
        }
    }

    #[test]
    fn bar_map_over_a_file() {
        let dir = temp_dir("bar");
        let path = dir.join("bar0");
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        // A page of something else, then the "BAR" at offset 4096 (a VFIO
        // region offset is page aligned too).
        f.write_all(&[0xEE; 4096]).unwrap();
        let mut bar = vec![0u8; 8192];
        bar[0..4].copy_from_slice(&u32::from_be_bytes(*b"MRCB").to_le_bytes());
        f.write_all(&bar).unwrap();
        f.flush().unwrap();
        let m = BarMap::map(&f, 4096, 8192).unwrap();
        assert_eq!(m.len(), 8192);
        assert_eq!(m.read32(0), u32::from_be_bytes(*b"MRCB"));
        m.write32(0x300, 0xDEAD_BEEF);
        m.write64(0x308, 0x0102_0304_0506_0708);
        assert_eq!(m.read32(0x300), 0xDEAD_BEEF);
        assert_eq!(m.read64(0x308), 0x0102_0304_0506_0708);
        assert_eq!(m.read32(0x30C), 0x0102_0304, "little-endian halves");
        // Out of range and misaligned: all-ones, writes dropped.
        assert_eq!(m.read32(8192), u32::MAX);
        assert_eq!(m.read32(8190), u32::MAX);
        assert_eq!(m.read32(2), u32::MAX);
        assert_eq!(m.read64(4), u64::MAX);
        assert_eq!(m.read32(u64::MAX - 1), u32::MAX);
        m.write32(8192, 1);
        m.write32(2, 1);
        drop(m);
        // The writes reached the file at the region offset, and only there.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 4096 + 8192);
        assert!(bytes[..4096].iter().all(|&b| b == 0xEE));
        assert_eq!(&bytes[4096 + 0x300..4096 + 0x304], &0xDEAD_BEEFu32.to_le_bytes());
        assert_eq!(&bytes[4096..4100], &u32::from_be_bytes(*b"MRCB").to_le_bytes());
        assert!(bytes[4096 + 4..4096 + 0x300].iter().all(|&b| b == 0), "no stray writes");
        assert!(BarMap::map(&f, 0, 0).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn open_explains_what_is_missing() {
        // No card here: the sysfs check fails first, with the address.
        let root = temp_dir("open");
        let opts = VfioOptions {
            sysfs: Sysfs::with_root(&root),
            ..VfioOptions::default()
        };
        let e = VfioDevice::open("0000:3b:00.0", &opts).err().unwrap();
        assert!(matches!(e, VfioError::NoDevice(_)), "{e}");
        assert!(e.to_string().contains("0000:3b:00.0"));
        assert!(matches!(
            VfioDevice::open("nonsense", &opts).err().unwrap(),
            VfioError::BadAddress(_)
        ));
        std::fs::remove_dir_all(root).unwrap();
    }
}
