//! A virtual machine: its RAM (isolated by stage 2), its MMIO bus with emulated devices,
//! its vCPUs and its exit statistics. Built from one VM of the VM package.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use el2_core::mmio::MmioBus;
use el2_core::vcpu::{VcpuContext, VcpuControls};
use stage2::{S2Attrs, Stage2Config, Stage2Table};

use super::frames::{self, FrameTables};
use super::stats::ExitStats;
use crate::devices::pl011::{LinePrefixer, Pl011, UartOutput};
use crate::guest_fdt::{self, GuestFdtConfig, UartNode};
use crate::layout;
use crate::loader::{self, LoadError};

/// Why a VM could not be created.
#[derive(Debug)]
pub enum VmError {
    /// Not enough free host memory for its RAM or tables.
    OutOfMemory,
    /// Stage-2 setup failed.
    Stage2(stage2::Error),
    /// Its images do not fit or are malformed.
    Load(LoadError),
    /// The guest device tree could not be generated.
    Fdt,
}

/// One virtual CPU of a VM.
pub struct Vcpu {
    /// Register state and EL2 controls.
    pub ctx: VcpuContext,
    /// The vCPU's MPIDR affinity (what `VMPIDR_EL2` reports, without bit 31).
    pub mpidr: u64,
}

/// A guest VM.
pub struct Vm {
    /// Name (console prefix, logs).
    pub name: String,
    /// Guest RAM: IPA base, host PA, size.
    pub ram_ipa: u64,
    /// Host physical address of guest RAM.
    pub ram_pa: u64,
    /// Guest RAM size in bytes.
    pub ram_size: u64,
    /// Stage-2 tables.
    pub stage2: Stage2Table<FrameTables>,
    /// Emulated devices.
    pub bus: MmioBus,
    /// vCPUs (one until SMP lands).
    pub vcpus: Vec<Vcpu>,
    /// Exits by reason.
    pub stats: ExitStats,
}

/// Guest console output: whole lines to the hypervisor console.
struct ConsoleOut;

impl UartOutput for ConsoleOut {
    fn write_bytes(&mut self, bytes: &[u8]) {
        super::console::write_bytes(bytes);
    }
}

fn log_pl011(args: core::fmt::Arguments<'_>) {
    crate::hv_warn!("{}", args);
}

/// Everything needed to build a VM that does not come from the package.
pub struct VmParams<'a> {
    /// The package entry.
    pub spec: &'a vmpkg::VmSpec<'a>,
    /// Index of the VM (VMID = index + 1).
    pub index: usize,
    /// Several VMs share the console: prefix lines with the VM's name.
    pub prefix_console: bool,
    /// Stage-2 configuration for this machine.
    pub s2cfg: Stage2Config,
    /// `HCR_EL2` for its vCPUs.
    pub hcr: u64,
    /// Host `MIDR_EL1` (what the guest sees through `VPIDR_EL2`).
    pub midr: u64,
}

impl Vm {
    /// Allocates RAM, builds stage 2, loads kernel/initrd/device tree and creates vCPU 0.
    pub fn create(p: VmParams<'_>) -> Result<Vm, VmError> {
        let spec = p.spec;
        let ram_size = spec.mem_bytes.next_multiple_of(2 << 20);
        let kernel = loader::inspect(spec.kernel).map_err(VmError::Load)?;
        let layout_plan = loader::plan(
            layout::RAM_BASE,
            ram_size,
            &kernel,
            spec.initrd.map(|i| i.len() as u64),
        )
        .map_err(VmError::Load)?;
        let ram_pa = frames::alloc_zeroed(ram_size).ok_or(VmError::OutOfMemory)?;
        let mut stage2 = Stage2Table::new(p.s2cfg, FrameTables).map_err(VmError::Stage2)?;
        stage2
            .map(layout::RAM_BASE, ram_pa, ram_size, S2Attrs::RAM)
            .map_err(VmError::Stage2)?;

        let mut vm = Vm {
            name: String::from(spec.name),
            ram_ipa: layout::RAM_BASE,
            ram_pa,
            ram_size,
            stage2,
            bus: MmioBus::new(),
            vcpus: Vec::new(),
            stats: ExitStats::default(),
        };
        vm.copy_in(layout_plan.kernel, spec.kernel)?;
        if let (Some(initrd), Some((start, _))) = (spec.initrd, layout_plan.initrd) {
            vm.copy_in(start, initrd)?;
        }

        let out: Box<dyn UartOutput> = if p.prefix_console {
            Box::new(LinePrefixer::new(spec.name, ConsoleOut))
        } else {
            Box::new(ConsoleOut)
        };
        let mut uart = Pl011::new(out);
        uart.set_log_hook(log_pl011);
        vm.bus
            .add(
                layout::UART_BASE,
                layout::UART_SIZE,
                "pl011",
                Box::new(uart),
            )
            .map_err(|_| VmError::Fdt)?;

        let mpidr = 0u64;
        let fdt_cfg = GuestFdtConfig {
            ram_base: layout::RAM_BASE,
            ram_size,
            cpu_mpidrs: alloc::vec![mpidr],
            uart: Some(UartNode {
                base: layout::UART_BASE,
                size: layout::UART_SIZE,
                spi: None,
            }),
            gic: None,
            bootargs: String::from(spec.cmdline),
            initrd: layout_plan.initrd,
            ..GuestFdtConfig::default()
        };
        let dtb = guest_fdt::build(&fdt_cfg).map_err(|_| VmError::Fdt)?;
        if dtb.len() as u64 > loader::DTB_RESERVE {
            return Err(VmError::Fdt);
        }
        vm.copy_in(layout_plan.dtb, &dtb)?;

        let vmid = (p.index + 1) as u16;
        let controls = VcpuControls {
            hcr_el2: p.hcr,
            vttbr_el2: vm.stage2.vttbr(vmid),
            vmpidr_el2: (1 << 31) | mpidr,
            vpidr_el2: p.midr,
            cntvoff_el2: 0,
        };
        let mut ctx = VcpuContext::new_at(layout_plan.kernel, layout_plan.dtb, controls);
        ctx.el1.actlr_el1 = el2_core::read_sysreg!("actlr_el1");
        vm.vcpus.push(Vcpu { ctx, mpidr });
        Ok(vm)
    }

    /// Copies `data` into guest RAM at `ipa` (bounds-checked against the VM's RAM).
    pub fn copy_in(&mut self, ipa: u64, data: &[u8]) -> Result<(), VmError> {
        let off = ipa
            .checked_sub(self.ram_ipa)
            .ok_or(VmError::Load(LoadError::DoesNotFit))?;
        let end = off
            .checked_add(data.len() as u64)
            .ok_or(VmError::Load(LoadError::DoesNotFit))?;
        if end > self.ram_size {
            return Err(VmError::Load(LoadError::DoesNotFit));
        }
        // SAFETY: [ram_pa + off, ram_pa + end) lies inside this VM's RAM, which it owns and
        // which is identity-mapped in the hypervisor; `data` does not overlap it (it is in
        // the package or the heap).
        unsafe {
            core::ptr::copy_nonoverlapping(
                data.as_ptr(),
                (self.ram_pa + off) as *mut u8,
                data.len(),
            )
        };
        Ok(())
    }
}

impl Drop for Vm {
    fn drop(&mut self) {
        frames::free(self.ram_pa, self.ram_size);
    }
}
