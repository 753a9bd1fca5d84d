//! The VM package reader (`vmpkg::Package`): any bytes are parsed or refused; every VM of
//! a parsed package can be read, and writing the VMs back with the package writer and
//! reading the result gives the same VMs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmpkg::{Package, PackageBuilder, VmImage, VmSpec};

fn image(vm: &VmSpec<'_>) -> VmImage {
    VmImage {
        name: vm.name.into(),
        mem_bytes: vm.mem_bytes,
        vcpus: vm.vcpus,
        flags: vm.flags,
        kernel: vm.kernel.to_vec(),
        initrd: vm.initrd.map(<[u8]>::to_vec),
        cmdline: vm.cmdline.into(),
        mac: vm.mac,
        disk: vm.disk.map(<[u8]>::to_vec),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(pkg) = Package::parse(data) else {
        return;
    };
    let _ = (pkg.flags(), pkg.len(), pkg.is_empty());
    let vms: Vec<VmSpec<'_>> = pkg.vms().collect();
    assert_eq!(vms.len(), pkg.vm_count() as usize);
    for (i, vm) in vms.iter().enumerate() {
        assert_eq!(pkg.vm(i as u32).as_ref(), Ok(vm));
    }
    assert!(pkg.vm(pkg.vm_count()).is_err());
    let mut builder = PackageBuilder::new();
    for vm in &vms {
        builder.add_vm(image(vm));
    }
    let bytes = builder.build();
    let again = Package::parse(&bytes).expect("a written package reads back");
    let reread: Vec<VmSpec<'_>> = again.vms().collect();
    assert_eq!(vms, reread);
});
