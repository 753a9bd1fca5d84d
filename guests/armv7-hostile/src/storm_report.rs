//! The storm phase as the program runs it: the seed, registers the storm must leave alone
//! read before and after, the counts printed, and the verdict (after PSCI has answered).

use core::arch::asm;

use crate::rt::fail;
use crate::storm::{self, Outcomes, ACCESSES};

/// What [`run`] hands to [`verdict`]: the accesses asked for, their outcomes, and the
/// PL0 phase.
pub type Storm = (u32, Outcomes, crate::storm_pl0::Pl0Storm);
use crate::uart::{putdec, puthex, puts};

/// Seed when the command line has no `seed=N`.
const DEFAULT_SEED: u32 = 1;

/// SCTLR, VBAR and MIDR (the first two are the storm's excluded writes; MIDR is what the
/// hypervisor answers, `VPIDR_EL2`).
pub fn guarded() -> [u32; 3] {
    let (sctlr, vbar, midr): (u32, u32, u32);
    // SAFETY: reads of three PL1 CP15 registers.
    unsafe {
        asm!(
            "mrc p15, 0, {s}, c1, c0, 0",
            "mrc p15, 0, {v}, c12, c0, 0",
            "mrc p15, 0, {m}, c0, c0, 0",
            s = out(reg) sctlr, v = out(reg) vbar, m = out(reg) midr,
            options(nomem, nostack),
        );
    }
    [sctlr, vbar, midr]
}

/// Runs the storm with the seed of the command line in the device tree at `dtb`, prints
/// its counts and checks the guarded registers; returns the outcomes for [`verdict`].
pub fn run(dtb: u32) -> Storm {
    let accesses = crate::seed::accesses(dtb).unwrap_or(ACCESSES);
    let seed = crate::seed::from_device_tree(dtb);
    puts("armv7-hostile: coprocessor storm seed ");
    putdec(seed.unwrap_or(DEFAULT_SEED));
    puts(if seed.is_some() {
        " (from the command line)\n"
    } else {
        " (none on the command line: the default)\n"
    });
    let before = guarded();
    let out = storm::run(seed.unwrap_or(DEFAULT_SEED), accesses, storm::at_pl1);
    let after = guarded();
    print_counts("storm ", &out);
    check_guarded(before, after, "");
    let pl0 = crate::storm_pl0::run(seed.unwrap_or(DEFAULT_SEED), accesses / 4);
    (accesses, out, pl0)
}

/// Prints one line per coprocessor and direction: `armv7-hostile: <prefix>CP15 reads : ...`.
pub fn print_counts(prefix: &str, out: &Outcomes) {
    for (cp, name) in [(1, "CP15"), (0, "CP14")] {
        for (w, dir) in [(0, "reads "), (1, "writes")] {
            let [done, undef, abort] = out[cp][w];
            puts("armv7-hostile: ");
            puts(prefix);
            puts(name);
            puts(" ");
            puts(dir);
            puts(": ");
            putdec(done + undef + abort);
            puts(" (");
            putdec(done);
            puts(" completed, ");
            putdec(undef);
            puts(" UNDEFINED, ");
            putdec(abort);
            puts(" external aborts)\n");
        }
    }
}

/// Fails unless SCTLR, VBAR and MIDR ([`guarded`]) read `after` as `before`; `phase` is
/// added to the failure (e.g. `" at PL0"`).
pub fn check_guarded(before: [u32; 3], after: [u32; 3], phase: &str) {
    for (i, name) in [
        "SCTLR changed by the storm",
        "VBAR changed by the storm",
        "MIDR changed by the storm",
    ]
    .iter()
    .enumerate()
    {
        if before[i] != after[i] {
            puthex(before[i]);
            puts(" before");
            puts(phase);
            puts("\n");
            fail(name, after[i]);
        }
    }
}

/// Prints the storm's verdict: every access accounted for, both outcomes seen (a storm
/// that only met UNDEFINED, or never did, would not have reached the registers), and the
/// guest still running (the caller has had PSCI answer; this line is the console).
pub fn verdict((accesses, out, pl0): Storm) {
    if accesses == 0 {
        puts("armv7-hostile: coprocessor storm: left out (storm=0)\n");
        return;
    }
    let sum = |k: usize| out.iter().flatten().map(|o| o[k]).sum::<u32>();
    let (done, undef, abort) = (sum(0), sum(1), sum(2));
    if done + undef + abort != accesses {
        fail("storm accesses accounted for", done + undef + abort);
    }
    if done == 0 || undef == 0 {
        fail("storm met only one outcome; completed", done);
    }
    puts("armv7-hostile: coprocessor storm: ");
    putdec(accesses);
    puts(" accesses, ");
    putdec(done);
    puts(" completed, ");
    putdec(undef);
    puts(" UNDEFINED, ");
    putdec(abort);
    puts(" external aborts; PSCI and console work: PASS\n");
    crate::storm_pl0::verdict(&pl0);
}
