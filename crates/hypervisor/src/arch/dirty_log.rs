//! Dirty-page logging of a VM's RAM as a vendor-specific hypervisor service (SMCCC owner 6,
//! SMC64 fast calls), on top of [`stage2::Stage2Table`]'s dirty log: logged pages are
//! write-protected in Stage 2; the first write to one faults to EL2, which marks it dirty and
//! makes it writable again (see `run::classify_abort`).
//!
//! Until a management interface exists (live migration, a VMM), the VM itself drives its
//! log through these calls; that is how the test guests prove the log exact. Writes done by
//! the hypervisor on the VM's behalf (virtio devices filling buffers) bypass Stage 2 and are
//! not logged.
//!
//! | function | arguments | returns in x0 |
//! |---|---|---|
//! | [`HV_DIRTY_LOG_START`] | x1 = IPA, x2 = length (page-aligned, inside guest RAM) | 0; -2 bad range; -3 a log runs |
//! | [`HV_DIRTY_LOG_COLLECT`] | x1 = IPA of a buffer, x2 = its size in bytes | dirty pages since the last collect (their bitmap, one bit per page from the log's start, little-endian 64-bit words, is written to the buffer; logging goes on); -2 buffer too small or outside RAM; -3 no log |
//! | [`HV_DIRTY_LOG_STOP`] | — | pages dirtied since the last collect; -3 no log |

use stage2::PAGE_SIZE;
use virtio_mmio::GuestMemory;

use super::virtio_glue::GuestRam;
use super::vm::Vm;

/// Starts logging `[x1, x1 + x2)` of the VM's RAM.
pub const HV_DIRTY_LOG_START: u32 = 0xc600_0003;
/// Hands the dirty bitmap to the guest and re-protects the pages.
pub const HV_DIRTY_LOG_COLLECT: u32 = 0xc600_0004;
/// Stops logging and makes every page writable again.
pub const HV_DIRTY_LOG_STOP: u32 = 0xc600_0005;

/// SMCCC/PSCI `INVALID_PARAMETERS`.
const INVALID_PARAMETERS: i64 = -2;
/// SMCCC/PSCI `DENIED`.
const DENIED: i64 = -3;

/// Handles one of the dirty-log calls (`fid`, arguments `x1`, `x2`) for `vm`; `None` if
/// `fid` is not one of them.
pub fn call(vm: &Vm, fid: u32, x1: u64, x2: u64) -> Option<i64> {
    Some(match fid {
        HV_DIRTY_LOG_START => start(vm, x1, x2),
        HV_DIRTY_LOG_COLLECT => collect(vm, x1, x2),
        HV_DIRTY_LOG_STOP => match vm.stage2.lock().stop_dirty_log() {
            Some(bitmap) => bitmap.count() as i64,
            None => DENIED,
        },
        _ => return None,
    })
}

fn start(vm: &Vm, ipa: u64, len: u64) -> i64 {
    let inside = ipa >= vm.ram_ipa
        && ipa
            .checked_add(len)
            .is_some_and(|end| end <= vm.ram_ipa + vm.ram_size);
    if len == 0 || !ipa.is_multiple_of(PAGE_SIZE) || !len.is_multiple_of(PAGE_SIZE) || !inside {
        crate::hv_warn!(
            "{}: dirty log of [{ipa:#x}, +{len:#x}) refused: not page-aligned guest RAM",
            vm.name
        );
        return INVALID_PARAMETERS;
    }
    match vm.stage2.lock().start_dirty_log(ipa, len) {
        Ok(()) => {
            crate::hv_log!(
                "{}: dirty logging {} pages from IPA {ipa:#x}",
                vm.name,
                len / PAGE_SIZE
            );
            0
        }
        Err(stage2::Error::DirtyLogActive) => DENIED,
        Err(e) => {
            crate::hv_warn!("{}: dirty log start failed: {e:?}", vm.name);
            INVALID_PARAMETERS
        }
    }
}

fn collect(vm: &Vm, buf: u64, size: u64) -> i64 {
    let mut ram = GuestRam {
        ipa: vm.ram_ipa,
        pa: vm.ram_pa,
        size: vm.ram_size,
    };
    let mut s2 = vm.stage2.lock();
    let Some((_, len)) = s2.dirty_log_range() else {
        return DENIED;
    };
    let need = (len / PAGE_SIZE).div_ceil(64) * 8;
    if size < need || ram.check_range(buf, need).is_err() {
        crate::hv_warn!(
            "{}: dirty bitmap buffer [{buf:#x}, +{size:#x}) refused: needs {need} bytes of guest RAM",
            vm.name
        );
        return INVALID_PARAMETERS;
    }
    let Some(bitmap) = s2.take_dirty() else {
        return DENIED;
    };
    drop(s2);
    for (i, w) in bitmap.words().iter().enumerate() {
        // Checked above: the whole bitmap fits in guest RAM.
        let _ = ram.write(buf + 8 * i as u64, &w.to_le_bytes());
    }
    bitmap.count() as i64
}
