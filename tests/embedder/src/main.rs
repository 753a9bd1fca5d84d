//! A toy VMM that composes the hypervisor's subsystem crates the way another hypervisor would:
//! synthetic guest exits (as `ESR_EL2`/`HPFAR_EL2` values) are decoded by `el2-core`, guest
//! RAM lives in a `stage2` table, MMIO goes to a `vgic` distributor or a `virtio-mmio`
//! transport by address, the timer comes from `vtimer`, and an ARMv7-A instruction is
//! classified by `dbt-armv7`. It prints what each step did and exits non-zero on any surprise.

mod host;

use el2_core::exit::{decode, Exit, ExitInfo};
use el2_core::mmio::MmioAccess;
use stage2::{S2Attrs, Stage2Config, Stage2Table};
use vgic::{GicVersion, Vgic, VgicConfig};
use virtio_mmio::devices::console::{ConsoleDevice, ConsoleOutput};
use virtio_mmio::{NoInterrupt, VecMemory, VirtioMmio};

use host::HeapTables;

/// Guest physical map of the toy VM (QEMU `virt`-like).
const GICD_BASE: u64 = 0x0800_0000;
const GICD_SIZE: u64 = 0x1_0000;
const VIRTIO_BASE: u64 = 0x0a00_0000;
const VIRTIO_SIZE: u64 = 0x200;
const RAM_BASE: u64 = 0x4000_0000;
const RAM_SIZE: u64 = 4 << 20;
/// Host physical address backing guest RAM (only translated, never touched).
const RAM_PA: u64 = 0x8_0000_0000;

/// `ESR_EL2.EC` of a data abort from a lower EL, `ESR_EL2.IL`, `ISS.ISV`, `ISS.WnR`.
const EC_DABT_LOW: u64 = 0x24;
const ESR_IL: u64 = 1 << 25;
const ISS_ISV: u64 = 1 << 24;
const ISS_WNR: u64 = 1 << 6;
/// `ISS.SAS` of a 32-bit access.
const ISS_SAS_WORD: u64 = 0b10 << 22;
/// `ISS.DFSC`: translation fault, level 3.
const DFSC_TRANSLATION_L3: u64 = 0b000111;
/// `GICD_TYPER`, `GICD_ISENABLER1` offsets in the distributor frame.
const GICD_TYPER: u64 = 0x004;
const GICD_ISENABLER1: u64 = 0x104;
/// virtio-mmio `MagicValue` ("virt") and `DeviceID` offsets.
const VIRTIO_MAGIC_VALUE: u64 = 0x000;
const VIRTIO_DEVICE_ID: u64 = 0x008;

/// The syndrome of a 32-bit load/store by the guest's `x{reg}` at `ipa` (Stage-2 fault).
fn data_abort(ipa: u64, write: bool, reg: u64) -> ExitInfo {
    let iss = ISS_ISV | ISS_SAS_WORD | (reg << 16) | if write { ISS_WNR } else { 0 };
    ExitInfo {
        esr: (EC_DABT_LOW << 26) | ESR_IL | iss | DFSC_TRANSLATION_L3,
        far: ipa,
        hpfar: (ipa >> 12) << 4,
    }
}

/// Prints the console bytes the guest wrote.
struct Stdout;
impl ConsoleOutput for Stdout {
    fn write(&mut self, bytes: &[u8]) {
        print!("{}", String::from_utf8_lossy(bytes));
    }
}

fn main() {
    // Stage 2: the VM's RAM, 2 MiB blocks where alignment allows.
    let cfg = Stage2Config::new(0b0010, 40, false).expect("40-bit IPA on a 40-bit PA host");
    let mut s2 =
        Stage2Table::with_tlb(cfg, HeapTables::default(), stage2::NoTlb).expect("root table");
    s2.map(RAM_BASE, RAM_PA, RAM_SIZE, S2Attrs::RAM)
        .expect("map RAM");
    let (pa, _) = s2.translate(RAM_BASE + 0x1234).expect("RAM is mapped");
    assert_eq!(pa, RAM_PA + 0x1234);
    assert!(s2.translate(GICD_BASE).is_none(), "MMIO stays unmapped");
    println!(
        "stage2: {} MiB of RAM at IPA {RAM_BASE:#x} -> PA {RAM_PA:#x}",
        RAM_SIZE >> 20
    );

    // Devices: a GICv3 distributor and a virtio console.
    let mut gic = Vgic::new(VgicConfig {
        version: GicVersion::V3,
        vcpu_mpidrs: vec![0],
        nr_spis: 64,
    })
    .expect("vGIC");
    let mut console = VirtioMmio::new(
        ConsoleDevice::new(Stdout),
        VecMemory::new(RAM_BASE, 1 << 16),
        NoInterrupt,
    );

    // The guest's MMIO accesses, as exits through x1; `regs` are its general registers.
    let mut regs = [0u64; 31];
    let accesses = [
        (GICD_BASE + GICD_TYPER, false, 0),
        (GICD_BASE + GICD_ISENABLER1, true, 1 << 1), // enable SPI 33
        (GICD_BASE + GICD_ISENABLER1, false, 0),
        (VIRTIO_BASE + VIRTIO_MAGIC_VALUE, false, 0),
        (VIRTIO_BASE + VIRTIO_DEVICE_ID, false, 0),
    ];
    let mut reads = Vec::new();
    for (ipa, write, value) in accesses {
        regs[1] = value;
        let Exit::DataAbort(da) = decode(&data_abort(ipa, write, 1)) else {
            panic!("a data abort syndrome decoded as something else");
        };
        let access = MmioAccess::from_abort(&da).expect("ISV=1: the syndrome describes it");
        assert_eq!((access.ipa, access.is_write), (ipa, write));
        let (width, rt) = (access.size as u8, usize::from(access.rt));
        let result = if (GICD_BASE..GICD_BASE + GICD_SIZE).contains(&ipa) {
            let off = ipa - GICD_BASE;
            if write {
                gic.gicd_write(0, off, width, regs[rt]).map(|()| None)
            } else {
                gic.gicd_read(0, off, width).map(Some)
            }
            .map_err(|e| format!("{e:?}"))
        } else if (VIRTIO_BASE..VIRTIO_BASE + VIRTIO_SIZE).contains(&ipa) {
            let off = ipa - VIRTIO_BASE;
            if write {
                console.write(off, width, regs[rt]).map(|()| None)
            } else {
                console.read(off, width).map(Some)
            }
            .map_err(|e| format!("{e:?}"))
        } else {
            Err("unbacked: inject an external abort".into())
        };
        match result.expect("every access of this guest is to a device") {
            Some(v) => {
                regs[rt] = v;
                reads.push(v);
                println!("mmio: read  {ipa:#x} -> {v:#x}");
            }
            None => println!("mmio: write {ipa:#x} <- {:#x}", regs[rt]),
        }
    }
    let [typer, enabled, magic, device_id] = reads[..] else {
        panic!("four reads expected, got {reads:?}");
    };
    assert_eq!(
        (typer & 0x1f) + 1,
        64 / 32 + 1,
        "GICD_TYPER.ITLinesNumber for 64 SPIs"
    );
    assert_eq!(
        enabled & (1 << 1),
        1 << 1,
        "SPI 33 enabled through GICD_ISENABLER1"
    );
    assert_eq!(magic, 0x7472_6976, "virtio-mmio MagicValue \"virt\"");
    assert_eq!(device_id, 3, "virtio console device ID");

    // Timer: a VM counter that starts at 0, and the emulated physical timer's wake-up.
    let boot = 1_000_000;
    let counter = vtimer::VmCounter::starting_at(boot);
    assert_eq!(counter.virtual_now(boot + 500), 500);
    let mut ptimer = vtimer::PhysTimer::default();
    ptimer.write(vtimer::PhysTimerReg::Cval, boot + 2_000, boot);
    ptimer.write(
        vtimer::PhysTimerReg::Ctl,
        vtimer::CTL_ENABLE,
        boot,
    );
    let vtimer_state = vtimer::TimerState::default();
    let wake = vtimer::wake_deadline(&vtimer_state, &counter, &ptimer);
    assert_eq!(wake, Some(boot + 2_000));
    assert!(
        ptimer.irq_level(boot + 2_000),
        "the physical timer fires at CVAL"
    );
    println!("vtimer: a vCPU in WFI wakes at counter {}", boot + 2_000);

    // DBT: an ARMv7-A kernel's `mcr p15, 0, r0, c1, c0, 0` (write SCTLR) must be translated.
    let insn = dbt_armv7::decode_a32(0xee01_0f10);
    println!(
        "dbt-armv7: {:#010x} is {:?} ({})",
        insn.raw,
        insn.op,
        insn.class.describe()
    );
    assert_eq!(insn.len, 4);

    println!("embedder: PASS");
}
