//! Emulated MMIO: turning a stage-2 data abort into an [`MmioAccess`], and routing it through an
//! [`MmioBus`] to a device model. The device learns which vCPU accesses it and reports what
//! the access changed beyond its result (interrupt lines, vCPUs to wake, work for a host
//! backend) through the caller's [`MmioEvents`]: the run loop knows no device address.
//!
//! Only aborts with a valid instruction syndrome (`ISV` = 1) are decoded here: single
//! general-purpose register loads and stores without writeback, which is what device drivers
//! use (`readl`/`writel`). Aborts with `ISV` = 0 (load/store pair, writeback addressing, SIMD
//! registers) would need the faulting instruction fetched from guest memory and decoded; that
//! is left to a later issue, and [`MmioAccess::from_abort`] returns `None` for them so the
//! caller injects an external abort and logs.
//!
//! Typical use in the run loop:
//!
//! ```text
//! if let Some(access) = MmioAccess::from_abort(&abort) {
//!     let rt_value = if access.rt == 31 { 0 } else { vcpu.x[access.rt] };
//!     let mut caller = MmioCaller { vcpu: vcpu_index, events: &mut vm_events };
//!     match bus.dispatch(&access, rt_value, &mut caller) {
//!         MmioOutcome::Read(v) => if let Some(r) = access.target_reg() { vcpu.x[r] = v },
//!         MmioOutcome::WriteDone => {}
//!         MmioOutcome::Unbacked | MmioOutcome::DeviceError { .. } => inject_dabt(),
//!     }
//!     vcpu.pc += 4;
//! }
//! ```

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::exit::DataAbort;

/// The width of an MMIO access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AccessSize {
    /// 8 bits.
    Byte = 1,
    /// 16 bits.
    Half = 2,
    /// 32 bits.
    Word = 4,
    /// 64 bits.
    Double = 8,
}

impl AccessSize {
    /// From `SAS` (log2 of the size in bytes); only the low two bits are used.
    pub const fn from_sas(sas: u8) -> AccessSize {
        match sas & 0b11 {
            0 => AccessSize::Byte,
            1 => AccessSize::Half,
            2 => AccessSize::Word,
            _ => AccessSize::Double,
        }
    }

    /// From a size in bytes; `None` unless 1, 2, 4 or 8.
    pub const fn from_bytes(bytes: u64) -> Option<AccessSize> {
        match bytes {
            1 => Some(AccessSize::Byte),
            2 => Some(AccessSize::Half),
            4 => Some(AccessSize::Word),
            8 => Some(AccessSize::Double),
            _ => None,
        }
    }

    /// Size in bytes.
    pub const fn bytes(self) -> u64 {
        self as u64
    }

    /// Size in bits.
    pub const fn bits(self) -> u32 {
        self as u32 * 8
    }

    /// A mask of the low `bits()` bits.
    pub const fn mask(self) -> u64 {
        // bits() is 8..=64: no branch for the 64-bit case.
        u64::MAX >> (64 - self.bits())
    }
}

/// One guest MMIO access, decoded from a data abort with a valid syndrome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmioAccess {
    /// The guest physical (intermediate physical) address accessed.
    pub ipa: u64,
    /// Access width.
    pub size: AccessSize,
    /// True for a store.
    pub is_write: bool,
    /// The transfer register (`SRT`). 31 is the zero register (XZR/WZR) here, not SP: a store
    /// writes zero and a load's result is discarded.
    pub rt: u8,
    /// `SSE`: a load sign-extends the value to the register width.
    pub sign_extend: bool,
    /// `SF`: the transfer register is 64 bits wide (X), otherwise 32 (W).
    pub sf: bool,
    /// `AR`: load-acquire / store-release.
    pub acquire_release: bool,
}

impl MmioAccess {
    /// Build an access from a data abort. `None` when the syndrome is not valid (`ISV` = 0),
    /// for a fault on a stage-1 table walk (`S1PTW`: the guest put page tables in MMIO space)
    /// and for cache maintenance (`CM`): none of those is an emulatable device access.
    pub const fn from_abort(abort: &DataAbort) -> Option<MmioAccess> {
        if !abort.isv || abort.s1ptw || abort.cm {
            return None;
        }
        Some(MmioAccess {
            ipa: abort.ipa,
            size: AccessSize::from_sas(abort.sas),
            is_write: abort.wnr,
            rt: abort.srt & 0x1f,
            sign_extend: abort.sse,
            sf: abort.sf,
            acquire_release: abort.ar,
        })
    }

    /// The register a load writes, `None` for the zero register (Rt = 31).
    pub const fn target_reg(&self) -> Option<u8> {
        if self.rt >= 31 {
            None
        } else {
            Some(self.rt)
        }
    }

    /// The value a load leaves in the register, given the raw value the device returned:
    /// truncated to the access size, then sign-extended (`SSE`) or zero-extended, to 64 bits
    /// for an X register or to 32 bits (upper half cleared) for a W register.
    #[inline(always)]
    pub const fn load_value(&self, raw: u64) -> u64 {
        // Sign extension (`LDRS*`, rare on devices) out of line: the common load is a mask.
        let value = if self.sign_extend {
            sign_extend(raw, self.size)
        } else {
            raw & self.size.mask()
        };
        if self.sf {
            value
        } else {
            value & 0xffff_ffff
        }
    }

    /// The value a store writes to the device, given the register's content: the low bytes
    /// of the register, masked to the access size.
    pub const fn store_value(&self, reg: u64) -> u64 {
        reg & self.size.mask()
    }
}

/// `raw` sign-extended from `size` to 64 bits: the access shifted to the top and back
/// arithmetically (a 64-bit access shifts by 0).
#[cold]
#[inline(never)]
const fn sign_extend(raw: u64, size: AccessSize) -> u64 {
    let shift = 64 - size.bits();
    (((raw << shift) as i64) >> shift) as u64
}

/// Why a device refused an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmioError {
    /// The access is architecturally invalid for this device (e.g. an unsupported width):
    /// the caller injects a synchronous external abort into the guest.
    ExternalAbort,
    /// The device failed for a reason of its own (e.g. a host-side backend error); the caller
    /// logs it and decides (inject an abort, or stop the VM).
    Device(&'static str),
}

impl fmt::Display for MmioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MmioError::ExternalAbort => f.write_str("external abort"),
            MmioError::Device(why) => write!(f, "device error: {why}"),
        }
    }
}

/// Result of a device access.
pub type MmioResult<T> = Result<T, MmioError>;

/// What a device reports about an access besides its result; the host implements it
/// (forwarding lines to its virtual interrupt controller, waking vCPUs, polling backends).
pub trait MmioEvents {
    /// The device's interrupt output `intid` is now at `level`. Devices report changes
    /// only (a repeated level is harmless).
    fn set_irq_level(&mut self, intid: u32, level: bool);
    /// vCPU `vcpu` of the VM has an interrupt to look at (an interrupt controller model made
    /// one pending for it): wake it or interrupt the CPU running it.
    fn kick(&mut self, vcpu: usize) {
        let _ = vcpu;
    }
    /// The device handed work to a host backend shared beyond this VM (e.g. frames on a
    /// virtual switch): the host polls its backends once the access is done.
    fn poll_backends(&mut self) {}
}

/// An [`MmioEvents`] that ignores everything (devices without interrupts, tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

impl MmioEvents for NoEvents {
    fn set_irq_level(&mut self, _intid: u32, _level: bool) {}
}

/// Who makes an access: the vCPU (banked registers, e.g. a GIC redistributor or the
/// private interrupts of a distributor), and where the device reports events.
pub struct MmioCaller<'a> {
    /// Index of the accessing vCPU in its VM.
    pub vcpu: usize,
    /// Where the device reports interrupt-line changes, kicks and backend work.
    pub events: &'a mut dyn MmioEvents,
}

impl fmt::Debug for MmioCaller<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MmioCaller")
            .field("vcpu", &self.vcpu)
            .finish()
    }
}

/// A device model reachable through MMIO. Offsets are relative to the device's region base.
pub trait MmioDevice: Send {
    /// A load of `size` bytes at `offset` by `caller`. The returned value is truncated to
    /// `size`.
    fn read(
        &mut self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
    ) -> MmioResult<u64>;
    /// A store of `size` bytes at `offset` by `caller`; `value` is already masked to `size`.
    fn write(
        &mut self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()>;
}

impl<D: MmioDevice + ?Sized> MmioDevice for Box<D> {
    fn read(
        &mut self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
    ) -> MmioResult<u64> {
        (**self).read(caller, offset, size)
    }
    fn write(
        &mut self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        (**self).write(caller, offset, size, value)
    }
}

/// A device model that does its own locking, called through a shared reference: the bus
/// takes no lock of its own, so accesses by different CPUs to different devices run side
/// by side, and a device guards exactly the state it has (a device already shared with the
/// host behind a lock, such as a virtual GIC, is locked once per access instead of twice).
/// Every [`MmioDevice`] behind a [`spin::Mutex`] is one ([`MmioBus::add`] wraps it so).
pub trait SharedMmioDevice: Send + Sync {
    /// A load, as [`MmioDevice::read`].
    fn read(&self, caller: &mut MmioCaller<'_>, offset: u64, size: AccessSize) -> MmioResult<u64>;
    /// A store, as [`MmioDevice::write`].
    fn write(
        &self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()>;
}

impl<D: MmioDevice> SharedMmioDevice for spin::Mutex<D> {
    fn read(&self, caller: &mut MmioCaller<'_>, offset: u64, size: AccessSize) -> MmioResult<u64> {
        self.lock().read(caller, offset, size)
    }
    fn write(
        &self,
        caller: &mut MmioCaller<'_>,
        offset: u64,
        size: AccessSize,
        value: u64,
    ) -> MmioResult<()> {
        self.lock().write(caller, offset, size, value)
    }
}

/// What came of an access routed through the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmioOutcome {
    /// A load completed: put this value (already extended per `SSE`/`SF`) in `Rt` unless
    /// `Rt` is 31.
    Read(u64),
    /// A store completed.
    WriteDone,
    /// No device backs the whole access (no region, or the access crosses a region's end):
    /// inject an external abort and log.
    Unbacked,
    /// The device refused the access.
    DeviceError {
        /// The region name.
        device: &'static str,
        /// The device's error.
        error: MmioError,
    },
}

/// Why a region could not be added to the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusError {
    /// The new region overlaps an existing one, named here.
    Overlap {
        /// Name of the region already there.
        existing: &'static str,
    },
    /// Zero length, or `base + len` overflows.
    BadRange,
}

impl fmt::Display for BusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BusError::Overlap { existing } => write!(f, "overlaps MMIO region {existing}"),
            BusError::BadRange => f.write_str("empty or overflowing MMIO range"),
        }
    }
}

struct Region {
    base: u64,
    len: u64,
    name: &'static str,
    device: Box<dyn SharedMmioDevice>,
}

impl Region {
    /// Exclusive end; `add` guarantees no overflow.
    fn end(&self) -> u64 {
        self.base + self.len
    }
}

/// A VM's MMIO address space: non-overlapping regions, each backed by a device. Its regions
/// are fixed once the VM runs; accesses go through a shared reference (`dispatch(&self)`),
/// each device locking itself ([`SharedMmioDevice`]), so the bus needs no lock.
#[derive(Default)]
pub struct MmioBus {
    /// Sorted by base.
    regions: Vec<Region>,
    /// Index of the region the last access hit (tried before the binary search: a guest
    /// mostly polls one device at a time, e.g. the console UART). A hint: any value is safe.
    last: AtomicUsize,
}

impl fmt::Debug for MmioBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for r in &self.regions {
            list.entry(&format_args!("{} @ {:#x}+{:#x}", r.name, r.base, r.len));
        }
        list.finish()
    }
}

impl MmioBus {
    /// An empty bus.
    pub const fn new() -> MmioBus {
        MmioBus {
            regions: Vec::new(),
            last: AtomicUsize::new(0),
        }
    }

    /// Add a device at `[base, base + len)`, behind a lock of its own. Fails if the range
    /// is empty, overflows, or overlaps a region already on the bus.
    pub fn add(
        &mut self,
        base: u64,
        len: u64,
        name: &'static str,
        device: Box<dyn MmioDevice>,
    ) -> Result<(), BusError> {
        self.add_shared(base, len, name, Box::new(spin::Mutex::new(device)))
    }

    /// Add a device that locks itself at `[base, base + len)`; fails as [`MmioBus::add`].
    pub fn add_shared(
        &mut self,
        base: u64,
        len: u64,
        name: &'static str,
        device: Box<dyn SharedMmioDevice>,
    ) -> Result<(), BusError> {
        let end = match base.checked_add(len) {
            Some(end) if len > 0 => end,
            _ => return Err(BusError::BadRange),
        };
        if let Some(r) = self.regions.iter().find(|r| base < r.end() && r.base < end) {
            return Err(BusError::Overlap { existing: r.name });
        }
        let at = self.regions.partition_point(|r| r.base < base);
        self.regions.insert(
            at,
            Region {
                base,
                len,
                name,
                device,
            },
        );
        Ok(())
    }

    /// The region containing `ipa`: the one the last access hit, else by binary search
    /// (which then becomes the hint).
    #[inline(always)]
    fn find(&self, ipa: u64) -> Option<&Region> {
        if let Some(r) = self.regions.get(self.last.load(Ordering::Relaxed)) {
            if ipa.wrapping_sub(r.base) < r.len {
                return Some(r);
            }
        }
        self.search(ipa)
    }

    /// [`MmioBus::find`] without the hint.
    #[inline(never)]
    fn search(&self, ipa: u64) -> Option<&Region> {
        let i = self
            .regions
            .partition_point(|r| r.base <= ipa)
            .checked_sub(1)?;
        let r = &self.regions[i];
        if ipa < r.end() {
            self.last.store(i, Ordering::Relaxed);
            Some(r)
        } else {
            None
        }
    }

    /// The name of the region containing `ipa`, if any (for log lines).
    pub fn region_name(&self, ipa: u64) -> Option<&'static str> {
        self.find(ipa).map(|r| r.name)
    }

    /// Route one access by `caller`. `reg_value` is the content of `Rt` for a store (pass
    /// anything for a load; for Rt = 31 the bus stores zero whatever is passed).
    // Inlined into an exit's fast path: the access stays in registers.
    #[inline(always)]
    pub fn dispatch(
        &self,
        access: &MmioAccess,
        reg_value: u64,
        caller: &mut MmioCaller<'_>,
    ) -> MmioOutcome {
        let Some(region) = self.find(access.ipa) else {
            return MmioOutcome::Unbacked;
        };
        let offset = access.ipa - region.base;
        // The access must lie entirely inside the region.
        if offset
            .checked_add(access.size.bytes())
            .is_none_or(|end| end > region.len)
        {
            return MmioOutcome::Unbacked;
        }
        if access.is_write {
            let reg = if access.rt >= 31 { 0 } else { reg_value };
            match region
                .device
                .write(caller, offset, access.size, access.store_value(reg))
            {
                Ok(()) => MmioOutcome::WriteDone,
                Err(error) => MmioOutcome::DeviceError {
                    device: region.name,
                    error,
                },
            }
        } else {
            match region.device.read(caller, offset, access.size) {
                Ok(raw) => MmioOutcome::Read(access.load_value(raw)),
                Err(error) => MmioOutcome::DeviceError {
                    device: region.name,
                    error,
                },
            }
        }
    }

    /// The device registered under `name`.
    pub fn get(&self, name: &str) -> Option<&dyn SharedMmioDevice> {
        self.regions
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.device.as_ref())
    }

    /// `(base, len, name)` of each region, in address order.
    pub fn regions(&self) -> impl Iterator<Item = (u64, u64, &'static str)> + '_ {
        self.regions.iter().map(|r| (r.base, r.len, r.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::{decode, Exit, ExitInfo};
    use alloc::sync::Arc;
    use core::sync::atomic::{AtomicU64, Ordering};

    /// Decode an ESR through the real exit decoder (IPA from `hpfar`/`far`).
    fn access(esr: u64, ipa: u64) -> MmioAccess {
        let info = ExitInfo {
            esr,
            far: ipa & 0xfff,
            hpfar: (ipa >> 12) << 4,
        };
        let Exit::DataAbort(da) = decode(&info) else {
            panic!("not a data abort")
        };
        MmioAccess::from_abort(&da).expect("ISV")
    }

    /// ESR of a data abort with ISV from its fields (EC 0x24, IL, ISV, DFSC = translation L3).
    fn esr(sas: u64, sse: bool, srt: u64, sf: bool, wnr: bool) -> u64 {
        (0x24 << 26)
            | (1 << 25)
            | (1 << 24)
            | (sas << 22)
            | ((sse as u64) << 21)
            | (srt << 16)
            | ((sf as u64) << 15)
            | ((wnr as u64) << 6)
            | 0x07
    }

    #[test]
    fn from_abort_ldr_w1() {
        // ldr w1, [x0] -> ESR 0x9381_0006 (see exit tests for the derivation).
        let a = access(0x9381_0006, 0x0900_0018);
        assert_eq!(a.ipa, 0x0900_0018);
        assert_eq!(a.size, AccessSize::Word);
        assert!(!a.is_write && !a.sign_extend && !a.sf && !a.acquire_release);
        assert_eq!(a.rt, 1);
        assert_eq!(a.target_reg(), Some(1));
    }

    #[test]
    fn no_access_without_isv_or_for_walks_and_cm() {
        for esr in [
            0x9200_0006u64,
            0x9381_0086, /* S1PTW */
            0x9381_0106, /* CM */
        ] {
            let Exit::DataAbort(da) = decode(&ExitInfo {
                esr,
                far: 0,
                hpfar: 0,
            }) else {
                panic!()
            };
            assert_eq!(MmioAccess::from_abort(&da), None, "{esr:#x}");
        }
    }

    #[test]
    fn sign_extension() {
        // ldrsb w2, [x0]: SAS 0, SSE, SF = 0 -> sign-extend to 32 bits, upper half zero.
        let a = access(esr(0, true, 2, false, false), 0x1000);
        assert_eq!(a.load_value(0x80), 0xffff_ff80);
        assert_eq!(a.load_value(0x7f), 0x7f);
        assert_eq!(a.load_value(0xabcd_ef12_3456_7880), 0xffff_ff80);
        // ldrsb x2, [x0]: SF = 1 -> sign-extend to 64 bits.
        let a = access(esr(0, true, 2, true, false), 0x1000);
        assert_eq!(a.load_value(0x80), 0xffff_ffff_ffff_ff80);
        // ldrsh x3: 16 bits.
        let a = access(esr(1, true, 3, true, false), 0x1000);
        assert_eq!(a.load_value(0x8001), 0xffff_ffff_ffff_8001);
        // ldrsw x4: 32 bits.
        let a = access(esr(2, true, 4, true, false), 0x1000);
        assert_eq!(a.load_value(0x8000_0000), 0xffff_ffff_8000_0000);
        // ldrb w5 (zero-extend) and ldr x6 (no extension).
        let a = access(esr(0, false, 5, false, false), 0x1000);
        assert_eq!(a.load_value(0xffff_ffff_ffff_ff80), 0x80);
        let a = access(esr(3, false, 6, true, false), 0x1000);
        assert_eq!(a.load_value(0x8000_0000_0000_0001), 0x8000_0000_0000_0001);
    }

    #[test]
    fn store_masking() {
        let a = access(esr(0, false, 1, false, true), 0x1000);
        assert!(a.is_write);
        assert_eq!(a.store_value(0x1234_5678_9abc_def0), 0xf0);
        let a = access(esr(1, false, 1, false, true), 0x1000);
        assert_eq!(a.store_value(0x1234_5678_9abc_def0), 0xdef0);
        let a = access(esr(2, false, 1, false, true), 0x1000);
        assert_eq!(a.store_value(0x1234_5678_9abc_def0), 0x9abc_def0);
        let a = access(esr(3, false, 1, true, true), 0x1000);
        assert_eq!(a.store_value(0x1234_5678_9abc_def0), 0x1234_5678_9abc_def0);
    }

    /// A device that records the last write and answers reads with `tag + offset`.
    struct Probe {
        tag: u64,
        last: Arc<AtomicU64>,
    }

    impl MmioDevice for Probe {
        fn read(
            &mut self,
            caller: &mut MmioCaller<'_>,
            offset: u64,
            size: AccessSize,
        ) -> MmioResult<u64> {
            if size == AccessSize::Double {
                return Err(MmioError::ExternalAbort);
            }
            Ok(self.tag + offset + caller.vcpu as u64)
        }
        fn write(
            &mut self,
            caller: &mut MmioCaller<'_>,
            offset: u64,
            _size: AccessSize,
            value: u64,
        ) -> MmioResult<()> {
            self.last
                .store(self.tag + offset + value, Ordering::Relaxed);
            // The probe's interrupt line follows bit 0 of what was written.
            caller.events.set_irq_level(IRQ, value & 1 != 0);
            Ok(())
        }
    }

    /// The interrupt line of a [`Probe`].
    const IRQ: u32 = 40;

    /// Records the interrupt-line changes devices report.
    #[derive(Default)]
    struct Lines(Vec<(u32, bool)>);

    impl MmioEvents for Lines {
        fn set_irq_level(&mut self, intid: u32, level: bool) {
            self.0.push((intid, level));
        }
    }

    /// Dispatches `a` on `bus` as vCPU 0 without events.
    fn go(bus: &mut MmioBus, a: &MmioAccess, value: u64) -> MmioOutcome {
        bus.dispatch(
            a,
            value,
            &mut MmioCaller {
                vcpu: 0,
                events: &mut NoEvents,
            },
        )
    }

    fn probe(tag: u64) -> (Box<dyn MmioDevice>, Arc<AtomicU64>) {
        let last = Arc::new(AtomicU64::new(0));
        (
            Box::new(Probe {
                tag,
                last: last.clone(),
            }),
            last,
        )
    }

    #[test]
    fn routing_adjacent_regions() {
        let mut bus = MmioBus::new();
        let (a, a_last) = probe(0x1000_0000);
        let (b, b_last) = probe(0x2000_0000);
        // Added out of order; adjacent: [0x9000000, 0x9001000) and [0x9001000, 0x9002000).
        bus.add(0x0900_1000, 0x1000, "b", b).unwrap();
        bus.add(0x0900_0000, 0x1000, "a", a).unwrap();
        let ldr = esr(2, false, 1, false, false);
        assert_eq!(
            go(&mut bus, &access(ldr, 0x0900_0ffc), 0),
            MmioOutcome::Read(0x1000_0ffc)
        );
        assert_eq!(
            go(&mut bus, &access(ldr, 0x0900_1000), 0),
            MmioOutcome::Read(0x2000_0000)
        );
        let str_w = esr(2, false, 3, false, true);
        assert_eq!(
            go(&mut bus, &access(str_w, 0x0900_1004), 0xffff_ffff_0000_0005),
            MmioOutcome::WriteDone
        );
        assert_eq!(b_last.load(Ordering::Relaxed), 0x2000_0000 + 4 + 5);
        assert_eq!(a_last.load(Ordering::Relaxed), 0);
        // Store of XZR writes zero whatever the caller passes.
        let str_xzr = esr(2, false, 31, false, true);
        assert_eq!(
            go(&mut bus, &access(str_xzr, 0x0900_0008), 0x1234),
            MmioOutcome::WriteDone
        );
        assert_eq!(a_last.load(Ordering::Relaxed), 0x1000_0008);
        // The device sees the accessing vCPU and reports its line through the caller.
        let mut lines = Lines::default();
        let mut caller = MmioCaller {
            vcpu: 3,
            events: &mut lines,
        };
        assert_eq!(
            bus.dispatch(&access(ldr, 0x0900_0ffc), 0, &mut caller),
            MmioOutcome::Read(0x1000_0ffc + 3)
        );
        bus.dispatch(&access(str_w, 0x0900_1000), 1, &mut caller);
        bus.dispatch(&access(str_w, 0x0900_1000), 0, &mut caller);
        assert_eq!(lines.0, [(IRQ, true), (IRQ, false)]);
        assert_eq!(bus.region_name(0x0900_1fff), Some("b"));
        assert_eq!(bus.region_name(0x0900_2000), None);
        assert!(bus.get("a").is_some());
        assert!(bus.get("c").is_none());
        let names: Vec<_> = bus.regions().map(|r| r.2).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn unbacked_and_crossing() {
        let mut bus = MmioBus::new();
        let (a, _) = probe(0);
        bus.add(0x1000, 0x100, "a", a).unwrap();
        let ldr = esr(2, false, 1, false, false);
        assert_eq!(go(&mut bus, &access(ldr, 0xffc), 0), MmioOutcome::Unbacked);
        assert_eq!(go(&mut bus, &access(ldr, 0x1100), 0), MmioOutcome::Unbacked);
        // A word at 0x10fe crosses the region end at 0x1100.
        assert_eq!(go(&mut bus, &access(ldr, 0x10fe), 0), MmioOutcome::Unbacked);
        assert_eq!(
            go(&mut bus, &access(ldr, 0x10fc), 0),
            MmioOutcome::Read(0xfc)
        );
        // The device refuses 64-bit accesses.
        let ldr_x = esr(3, false, 1, true, false);
        assert_eq!(
            go(&mut bus, &access(ldr_x, 0x1000), 0),
            MmioOutcome::DeviceError {
                device: "a",
                error: MmioError::ExternalAbort
            }
        );
        // An access at the very top of the address space must not overflow.
        let a = MmioAccess {
            ipa: u64::MAX - 3,
            size: AccessSize::Double,
            is_write: false,
            rt: 0,
            sign_extend: false,
            sf: true,
            acquire_release: false,
        };
        assert_eq!(go(&mut bus, &a, 0), MmioOutcome::Unbacked);
    }

    #[test]
    fn overlapping_add_rejected() {
        let mut bus = MmioBus::new();
        bus.add(0x1000, 0x1000, "a", probe(0).0).unwrap();
        for (base, len) in [
            (0x1000, 0x1000),
            (0x0800, 0x1000),
            (0x1800, 0x10),
            (0x1fff, 1),
            (0, 0x2000),
        ] {
            assert_eq!(
                bus.add(base, len, "x", probe(0).0),
                Err(BusError::Overlap { existing: "a" }),
                "{base:#x}+{len:#x}"
            );
        }
        assert_eq!(bus.add(0x5000, 0, "x", probe(0).0), Err(BusError::BadRange));
        assert_eq!(
            bus.add(u64::MAX, 2, "x", probe(0).0),
            Err(BusError::BadRange)
        );
        bus.add(0x0, 0x1000, "below", probe(0).0).unwrap();
        bus.add(0x2000, 0x1000, "above", probe(0).0).unwrap();
    }
}
