//! What the device tree in x0 says: memory, CPUs, `/chosen/bootargs`, the PSCI method.

use crate::{fail, say};
use fdt::Fdt;

/// Load address of this image (guest-rt's linker script); it must lie in the reported RAM.
const IMAGE_BASE: usize = 0x4008_0000;

/// The device-tree facts later checks need.
pub struct DtbFacts {
    /// `/chosen/bootargs`, empty when absent.
    pub bootargs: &'static str,
    /// The `reg` (MPIDR affinity) of every `/cpus/cpu@*` node, up to 8.
    pub cpu_ids: [Option<usize>; 8],
}

impl DtbFacts {
    /// True if `word` is one of the whitespace-separated words of the bootargs.
    pub fn bootargs_word(&self, word: &str) -> bool {
        self.bootargs.split_whitespace().any(|w| w == word)
    }
}

/// Parses the device tree at `dtb`, prints what it found and checks it is usable.
pub fn report(dtb: usize) -> DtbFacts {
    say!("dtb at {:#x}", dtb);
    // SAFETY: x0 at entry is the device tree's physical address per the boot protocol; with
    // the MMU off it is directly addressable, and the FDT header bounds the parser's reads.
    let fdt: Fdt<'static> = match unsafe { Fdt::from_ptr(dtb as *const u8) } {
        Ok(fdt) => fdt,
        Err(e) => fail(format_args!(
            "dtb: cannot parse the device tree at {dtb:#x}: {e:?}"
        )),
    };
    say!(
        "dtb: size {:#x} bytes, model \"{}\"",
        fdt.total_size(),
        model(&fdt)
    );

    let Some(memory) = fdt.find_node("/memory") else {
        fail(format_args!("dtb: no /memory node"));
    };
    let mut covers_image = false;
    for region in memory.reg().into_iter().flatten() {
        let base = region.starting_address as usize;
        let size = region.size.unwrap_or(0);
        say!(
            "memory: base={:#x} size={:#x} ({} MiB)",
            base,
            size,
            size >> 20
        );
        covers_image |= base <= IMAGE_BASE && IMAGE_BASE - base < size;
    }
    if !covers_image {
        fail(format_args!(
            "dtb: no /memory region contains the image at {IMAGE_BASE:#x}"
        ));
    }

    let mut cpu_ids = [None; 8];
    let mut cpus = 0;
    if let Some(node) = fdt.find_node("/cpus") {
        for cpu in node
            .children()
            .filter(|c| c.name.split('@').next() == Some("cpu"))
        {
            let id = cpu
                .reg()
                .and_then(|mut r| r.next())
                .map(|r| r.starting_address as usize);
            if let Some(slot) = cpu_ids.get_mut(cpus) {
                *slot = id;
            }
            cpus += 1;
        }
    }
    say!("cpus: {}", cpus);
    if cpus == 0 {
        fail(format_args!("dtb: no /cpus/cpu@* nodes"));
    }

    let bootargs = fdt
        .find_node("/chosen")
        .and_then(|c| c.property("bootargs"))
        .and_then(|p| p.as_str())
        .unwrap_or("");
    say!("bootargs: \"{}\"", bootargs);

    let method = fdt
        .find_node("/psci")
        .and_then(|p| p.property("method"))
        .and_then(|p| p.as_str());
    match method {
        Some(m) => say!("psci method: {}", m),
        None => say!("psci method: (no /psci node)"),
    }

    DtbFacts { bootargs, cpu_ids }
}

fn model<'a>(fdt: &Fdt<'a>) -> &'a str {
    fdt.find_node("/")
        .and_then(|root| root.property("model"))
        .and_then(|p| p.as_str())
        .unwrap_or("(none)")
}
