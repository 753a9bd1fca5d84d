//! A toy VMM embedding `stage2`, entirely in host memory:
//! `cargo run -p stage2 --example toy_vmm`.
//!
//! 16 MiB of host memory play the machine's physical memory ([`phys`]); stage-2 table frames
//! come from a pool inside it. A toy CPU ([`mmu`]) runs "guest" loads and stores by walking
//! those tables like the hardware walker, through a simulated TLB that the table code keeps
//! coherent via `TlbMaintenance` ([`tlb`]). The VMM ([`vmm`]) maps guest RAM (2 MiB blocks
//! and 4 KiB pages), populates a bank lazily, emulates a UART, re-protects memory, runs a
//! dirty log whose write faults go through `stage2::classify`, and finally unmaps everything
//! and checks that no table frame leaked. Every step checks its result and panics with a
//! message if it is wrong.

mod layout;
mod memmap;
mod mmu;
mod phys;
mod tlb;
mod vmm;

use std::collections::BTreeSet;

use stage2::{AbortReason, S2Attrs, Stage2Config, Stage2Table, VmVmid, VmidAllocator, PAGE_SIZE};

use layout::*;
use memmap::{MemoryMap, Region};
use phys::{Frames, PhysMem};
use tlb::ToyTlb;
use vmm::ToyVm;

/// `ID_AA64MMFR0_EL1.PARange` of the toy CPU: 0b0010 = 40-bit physical addresses.
const PARANGE_40_BITS: u64 = 0b0010;
/// IPA size the VMM asks for (`VTCR_EL2.T0SZ` = 64 - 40).
const IPA_BITS: u32 = 40;
/// Physical CPUs of the toy machine (for the VMID allocator).
const CPUS: usize = 1;
/// The physical CPU the vCPU runs on.
const CPU: usize = 0;

fn main() {
    let mem = PhysMem::new(PHYS_BASE, PHYS_SIZE);
    let frames = Frames::new(mem.clone(), POOL_PA, POOL_LEN);
    let cfg = Stage2Config::new(PARANGE_40_BITS, IPA_BITS, false).expect("stage-2 config");
    println!(
        "machine: {} MiB of host memory as PA {PHYS_BASE:#x}.., {} table frames in the pool",
        PHYS_SIZE / MIB,
        frames.capacity()
    );
    println!(
        "config:  {}-bit IPA, start level {}, {} concatenated root table(s), VTCR_EL2 = {:#x}",
        cfg.ipa_bits(),
        cfg.start_level(),
        cfg.root_tables(),
        cfg.vtcr()
    );
    let s2 = Stage2Table::with_tlb(cfg, frames.clone(), ToyTlb::default()).expect("root table");
    let mut vm = ToyVm::new(s2, mem.clone(), MemoryMap::new(regions()));

    vm.map_eager_ram();
    report_mappings(&vm, &frames);

    // vCPU load: a VMID for the VM, then VTTBR_EL2 (the table code now targets this VMID).
    let vmids = VmidAllocator::<CPUS>::new(cfg.vmid_bits() == 16);
    let vm_vmid = VmVmid::new();
    let vmid = vmids.vcpu_load(CPU, &vm_vmid, vm.s2.tlb()).expect("VMID");
    println!(
        "vcpu load: VMID {vmid}, VTTBR_EL2 = {:#x}",
        vm.s2.vttbr(vmid)
    );

    boot(&mut vm, &mem);
    protect(&mut vm, &frames);
    dirty_log(&mut vm, &frames);
    teardown(vm, &frames, &vmids);
    println!("toy_vmm: all checks passed");
}

/// Prints and checks how each region ended up mapped.
fn report_mappings(vm: &ToyVm, frames: &Frames) {
    for (ipa, level, what) in [
        (RAM_BLOCKS_IPA, 2, "2 MiB blocks"),
        (RAM_PAGES_IPA, 3, "4 KiB pages (PA not 2 MiB aligned)"),
        (ROM_IPA, 3, "4 KiB pages, read-only"),
    ] {
        let r = vm.map.region_of(ipa).expect("region");
        let m = vm.s2.lookup(ipa).expect("mapped");
        assert_eq!(
            m.level, level,
            "{} should be mapped at level {level}",
            r.name
        );
        println!(
            "map:     {:<10} IPA {:#010x} +{:>5} KiB -> PA {:#x}, {what}",
            r.name,
            r.ipa,
            r.len / KIB,
            m.pa
        );
    }
    let lazy = vm.map.get("ram-lazy");
    assert!(
        vm.s2.lookup(lazy.ipa).is_none(),
        "the lazy bank starts unmapped"
    );
    println!("map:     table frames in use: {}", frames.live());
}

/// Guest accesses: RAM banks, lazy population, the UART, ROM and a hole.
fn boot(vm: &mut ToyVm, mem: &PhysMem) {
    // One word per 2 MiB block and per 4 KiB page, checked in "physical memory".
    let blocks = (RAM_BLOCKS_IPA..RAM_BLOCKS_IPA + RAM_BLOCKS_LEN).step_by(BLOCK_2M as usize);
    let pages = (RAM_PAGES_IPA..RAM_PAGES_IPA + RAM_PAGES_LEN).step_by(PAGE_SIZE as usize);
    for (n, ipa) in blocks.chain(pages).enumerate() {
        let value = 0xc0de_0000 + n as u64;
        vm.guest_write(ipa + 8, value).expect("RAM write");
        assert_eq!(vm.guest_read(ipa + 8), Ok(value), "read back at {ipa:#x}");
        let (pa, _) = vm.s2.translate(ipa + 8).expect("mapped");
        assert_eq!(
            mem.read(pa),
            value,
            "guest store at {ipa:#x} not at PA {pa:#x}"
        );
    }
    assert_eq!(vm.exits, vmm::Exits::default(), "mapped RAM needs no exits");

    // Every fifth page of the lazy bank, three times.
    for page in 0..3 {
        vm.guest_write(RAM_LAZY_IPA + page * 5 * PAGE_SIZE, page)
            .expect("lazy RAM write");
    }
    assert_eq!(
        vm.exits.populate, 3,
        "one populate exit per touched lazy page"
    );
    assert_eq!(vm.s2.lookup(RAM_LAZY_IPA).map(|m| m.level), Some(3));

    for byte in b"hello from the guest\n" {
        vm.guest_write(UART_IPA, u64::from(*byte))
            .expect("UART write");
    }
    assert_eq!(vm.console, "hello from the guest\n");

    assert_eq!(vm.guest_read(ROM_IPA), Ok(0), "ROM is readable");
    assert_eq!(
        vm.guest_write(ROM_IPA, 1),
        Err(AbortReason::WriteToReadOnly)
    );
    assert_eq!(vm.guest_read(HOLE_IPA), Err(AbortReason::Unbacked));
    print!("boot:    UART says: {}", vm.console);
    println!(
        "boot:    exits: {} populate, {} MMIO, {} aborts injected (ROM write, hole)",
        vm.exits.populate, vm.exits.mmio, vm.exits.injected
    );
}

/// `protect`: split a block for one page, make a bank read-only and writable again.
fn protect(vm: &mut ToyVm, frames: &Frames) {
    let page = RAM_BLOCKS_IPA + BLOCK_2M + 7 * PAGE_SIZE;
    let before = frames.live();
    vm.s2
        .protect(page, PAGE_SIZE, S2Attrs::RAM_NX)
        .expect("protect");
    let m = vm.s2.lookup(page).expect("mapped");
    assert_eq!((m.level, m.attrs), (3, S2Attrs::RAM_NX));
    assert_eq!(
        frames.live(),
        before + 1,
        "the split needs one level-3 table"
    );
    assert_eq!(
        vm.s2.lookup(page + PAGE_SIZE).map(|m| m.attrs),
        Some(S2Attrs::RAM)
    );
    vm.guest_write(page, 7).expect("NX page stays writable");
    println!("protect: one page of a 2 MiB block made execute-never: block split (+1 frame)");

    let bank = *vm.map.get("ram-pages");
    vm.s2
        .protect(bank.ipa, bank.len, S2Attrs::RAM_RO)
        .expect("protect");
    vm.map.set_writable(bank.name, false);
    assert_eq!(
        vm.guest_write(bank.ipa, 1),
        Err(AbortReason::WriteToReadOnly),
        "the TLB still allowed a write to a page made read-only"
    );
    vm.s2
        .protect(bank.ipa, bank.len, S2Attrs::RAM)
        .expect("protect");
    vm.map.set_writable(bank.name, true);
    vm.guest_write(bank.ipa, 2).expect("writable again");
    println!(
        "protect: {} read-only (write aborted), then writable again",
        bank.name
    );
}

/// Dirty logging of the block bank over two rounds.
fn dirty_log(vm: &mut ToyVm, frames: &Frames) {
    let before = frames.live();
    vm.s2
        .start_dirty_log(RAM_BLOCKS_IPA, RAM_BLOCKS_LEN)
        .expect("start dirty log");
    // Four 2 MiB blocks, one of them split already by `protect`.
    assert_eq!(
        frames.live(),
        before + 3,
        "logging splits the remaining blocks"
    );
    println!(
        "dirty:   logging {} MiB at {RAM_BLOCKS_IPA:#x}: blocks split to pages ({} -> {} frames)",
        RAM_BLOCKS_LEN / MIB,
        before,
        frames.live()
    );

    let round1 = [0x0, 0x1008, 0x1ff0, 0x20_0000, 0x35_5000, 0x7f_f000];
    let dirty1 = written_pages(vm, &round1);
    assert_eq!(dirty1.len(), 5, "0x1008 and 0x1ff0 share a page");
    assert_eq!(
        vm.exits.dirty_log,
        dirty1.len() as u64,
        "one write fault per page and round"
    );
    let taken = vm.s2.take_dirty().expect("log running");
    assert_eq!(
        taken.iter().collect::<BTreeSet<_>>(),
        dirty1,
        "round 1 bitmap"
    );
    println!(
        "dirty:   round 1: {} writes, {} faults, dirty pages {}",
        round1.len(),
        vm.exits.dirty_log,
        hexes(&dirty1)
    );

    let round2 = [0x1000, 0x40_0000];
    let dirty2 = written_pages(vm, &round2);
    let faults = (dirty1.len() + dirty2.len()) as u64;
    assert_eq!(
        vm.exits.dirty_log, faults,
        "pages taken in round 1 are write-protected again"
    );
    vm.guest_write(RAM_PAGES_IPA, 3).expect("unlogged RAM");
    assert_eq!(
        vm.exits.dirty_log, faults,
        "writes outside the logged range do not fault"
    );
    let taken = vm.s2.take_dirty().expect("log running");
    assert_eq!(
        taken.iter().collect::<BTreeSet<_>>(),
        dirty2,
        "round 2 bitmap"
    );
    println!("dirty:   round 2: dirty pages {}", hexes(&dirty2));

    let rest = vm.s2.stop_dirty_log().expect("log running");
    assert!(rest.is_empty(), "nothing written since the last collect");
    vm.guest_write(RAM_BLOCKS_IPA, 4).expect("RAM write");
    assert_eq!(vm.exits.dirty_log, faults, "no faults after stop");
    println!("dirty:   stopped: pages writable again without faults");
}

/// Writes to `RAM_BLOCKS_IPA + offset` for each offset; returns the pages written.
fn written_pages(vm: &mut ToyVm, offsets: &[u64]) -> BTreeSet<u64> {
    offsets
        .iter()
        .map(|off| {
            let ipa = RAM_BLOCKS_IPA + off;
            vm.guest_write(ipa, *off).expect("logged RAM write");
            ipa & !(PAGE_SIZE - 1)
        })
        .collect()
}

fn hexes(pages: &BTreeSet<u64>) -> String {
    let v: Vec<String> = pages.iter().map(|p| format!("{p:#x}")).collect();
    v.join(" ")
}

/// Unmaps everything, checks the guest sees nothing, and that every table frame came back.
fn teardown(mut vm: ToyVm, frames: &Frames, vmids: &VmidAllocator<CPUS>) {
    let regions: Vec<Region> = vm.map.regions().to_vec();
    for r in &regions {
        vm.s2.unmap(r.ipa, r.len).expect("unmap");
        assert!(vm.s2.lookup(r.ipa).is_none(), "{} still mapped", r.name);
    }
    assert_eq!(
        vm.guest_read(RAM_BLOCKS_IPA),
        Err(AbortReason::RamNotMapped),
        "a stale TLB entry survived the unmap"
    );
    assert_eq!(vm.s2.tlb().len(), 0, "stale TLB entries survived the unmap");
    let roots = vm.s2.config().root_tables() as usize;
    assert_eq!(
        frames.live(),
        roots,
        "only the root may remain after unmapping everything"
    );
    let t = vm.s2.tlb().counts();
    println!(
        "tlb:     {} TLBI IPAS2E1IS, {} syncs, {} TLBI VMALLS12E1IS, {} DSB ISHST; TLB empty",
        t.ipa, t.sync, t.vmid, t.publish
    );
    vmids.vcpu_put(CPU);
    drop(vm);
    assert_eq!(frames.live(), 0, "table frames leaked");
    println!(
        "unmap:   all regions unmapped, root freed on drop: 0 of {} frames live (peak {})",
        frames.capacity(),
        frames.peak()
    );
}
