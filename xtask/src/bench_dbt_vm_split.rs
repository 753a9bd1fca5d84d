//! Where the host instructions of each in-VM DBT row go (`cargo xtask bench --dbt`): a QEMU
//! TCG plugin sorts every executed instruction by address into the DBT runtime's code
//! cache (translated code), the rest of the runtime's region (the engine, interpreter,
//! shadow MMU) and everything else (the hypervisor at EL2), and takes a snapshot of the
//! three counts whenever the runtime reads `CNTVCT_EL0` for the guest, which
//! `guests/armv7-dbtbench` does twice around each of its runs (a warm-up run, then the
//! timed one). The differences between snapshots give each timed window's split;
//! deterministic like the rows (`-icount`). How the ratios of the rows were brought down
//! (issue 17) was found with this split, per address.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::bench_profile::build_qemu_plugin;
use crate::error::{IoContext, Result};

/// The DBT runtime's region (`crates/hypervisor/src/dbt_runtime.rs` `REGION_IPA`,
/// `REGION_SIZE`; identity-mapped by the runtime, so these are its virtual addresses).
pub const REGION: (u64, u64) = (0x10_0000_0000, 64 << 20);
/// The code cache: the region's last 16 MiB (`guests/dbt-runtime/src/entry.rs`
/// `CODE_CACHE_SIZE`).
pub const CODE_CACHE: u64 = 16 << 20;
/// Counter reads per kernel: warm-up start and end, timed start and end.
pub const READS_PER_KERNEL: usize = 4;

/// The plugin (QEMU plugin API version 1, declarations written out). Arguments:
/// `cache=` and `runtime=` (start addresses; the runtime ends where the cache starts),
/// `end=` (the cache's end), `out=` (one line per snapshot: code, runtime, other).
const PLUGIN_C: &str = concat!(
    crate::bench_profile::qemu_plugin_api!(),
    r#"
static uint64_t cache, runtime, end, counts[3];
static uint64_t *snaps;
static size_t nsnaps, cap;
static char out[4096];
/* Optional per-address profile of the window between snapshots `profile` and
   `profile` + 1 (0-based), written to `prof` as "address count" lines. */
struct site { uint64_t va, count, base; };
static struct site **sites;
static size_t nsites, sites_cap;
static long long profile = -1;
static char prof[4096];
static void snapshot(unsigned int vcpu, void *u) {
    if (profile >= 0 && (long long)nsnaps == profile)
        for (size_t i = 0; i < nsites; i++) sites[i]->base = sites[i]->count;
    if (profile >= 0 && (long long)nsnaps == profile + 1)
        for (size_t i = 0; i < nsites; i++) sites[i]->base = sites[i]->count - sites[i]->base;
    if (nsnaps == cap) {
        cap = cap ? 2 * cap : 256;
        snaps = realloc(snaps, cap * 3 * sizeof *snaps);
        if (!snaps) abort();
    }
    memcpy(&snaps[3 * nsnaps++], counts, sizeof counts);
}
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t va = qemu_plugin_insn_vaddr(insn);
        int slot = va >= cache && va < end ? 0 : va >= runtime && va < cache ? 1 : 2;
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                   &counts[slot], 1);
        if (profile >= 0) {
            if (nsites == sites_cap) {
                sites_cap = sites_cap ? 2 * sites_cap : 4096;
                sites = realloc(sites, sites_cap * sizeof *sites);
                if (!sites) abort();
            }
            struct site *st = calloc(1, sizeof *st);
            if (!st) abort();
            st->va = va;
            sites[nsites++] = st;
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                       &st->count, 1);
        }
        uint32_t w = 0;
        if (qemu_plugin_insn_size(insn) == 4) memcpy(&w, qemu_plugin_insn_data(insn), 4);
        /* MRS Xt, CNTVCT_EL0 in the runtime or its code: the answer to a guest counter read. */
        if (slot != 2 && (w & 0xffffffe0) == 0xd53be040)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, snapshot, QEMU_PLUGIN_CB_NO_REGS, 0);
    }
}
static void done(qemu_plugin_id_t id, void *p) {
    FILE *f = fopen(out, "w");
    if (!f) return;
    for (size_t i = 0; i < nsnaps; i++)
        fprintf(f, "%llu %llu %llu\n", (unsigned long long)snaps[3 * i],
                (unsigned long long)snaps[3 * i + 1], (unsigned long long)snaps[3 * i + 2]);
    fclose(f);
    if (profile >= 0 && prof[0] && (f = fopen(prof, "w"))) {
        /* Sites translated after the window's end count nothing in it. */
        for (size_t i = 0; i < nsites; i++)
            if ((long long)nsnaps > profile + 1 && sites[i]->base)
                fprintf(f, "%llx %llu\n", (unsigned long long)sites[i]->va,
                        (unsigned long long)sites[i]->base);
        fclose(f);
    }
}
__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "cache=", 6)) cache = strtoull(argv[i] + 6, 0, 0);
        if (!strncmp(argv[i], "runtime=", 8)) runtime = strtoull(argv[i] + 8, 0, 0);
        if (!strncmp(argv[i], "end=", 4)) end = strtoull(argv[i] + 4, 0, 0);
        if (!strncmp(argv[i], "out=", 4)) snprintf(out, sizeof out, "%s", argv[i] + 4);
        if (!strncmp(argv[i], "profile=", 8)) profile = strtoll(argv[i] + 8, 0, 0);
        if (!strncmp(argv[i], "prof=", 5)) snprintf(prof, sizeof prof, "%s", argv[i] + 5);
    }
    if (!out[0] || !end) return -1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, done, 0);
    return 0;
}
"#
);

/// Host instructions of one timed window: in translated code, in the rest of the
/// runtime, elsewhere (the hypervisor).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// In the code cache.
    pub code: u64,
    /// In the rest of the runtime's region.
    pub runtime: u64,
    /// Outside the runtime's region: the hypervisor.
    pub other: u64,
}

/// Builds the plugin into `dir`; returns the QEMU arguments that load it, writing its
/// snapshots to `out`.
/// With `profile` = (snapshot `k`, file): also the per-address counts of the window between
/// snapshots `k` and `k + 1` into the file (`bench_dbt_vm_profile.rs`).
pub fn plugin_args(
    dir: &Path,
    out: &Path,
    profile: Option<(usize, &Path)>,
) -> Result<Vec<OsString>> {
    let so = build_qemu_plugin(dir, "dbt-vm-split", PLUGIN_C, "bench --dbt's in-VM split")?;
    let cache = REGION.0 + REGION.1 - CODE_CACHE;
    let mut arg = OsString::from(so);
    arg.push(format!(
        ",cache={cache:#x},runtime={:#x},end={:#x},out=",
        REGION.0,
        REGION.0 + REGION.1
    ));
    arg.push(out);
    if let Some((k, prof)) = profile {
        arg.push(format!(",profile={k},prof="));
        arg.push(prof);
    }
    Ok(vec!["-plugin".into(), arg])
}

/// The timed windows' splits from the plugin's snapshots in `out`, one per kernel in the
/// guest's order, or `None` when the snapshots are not [`READS_PER_KERNEL`] per kernel.
pub fn windows(out: &PathBuf, kernels: usize) -> Result<Option<Vec<Split>>> {
    let text = std::fs::read_to_string(out).io(|| format!("reading {}", out.display()))?;
    Ok(parse(&text, kernels))
}

fn parse(text: &str, kernels: usize) -> Option<Vec<Split>> {
    let snaps: Vec<[u64; 3]> = text
        .lines()
        .map(|l| {
            let v: Vec<u64> = l
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            <[u64; 3]>::try_from(v).ok()
        })
        .collect::<Option<_>>()?;
    if snaps.len() != kernels * READS_PER_KERNEL {
        return None;
    }
    let split = |a: [u64; 3], b: [u64; 3]| Split {
        code: b[0] - a[0],
        runtime: b[1] - a[1],
        other: b[2] - a[2],
    };
    Some(
        (0..kernels)
            .map(|k| {
                let t0 = k * READS_PER_KERNEL + 2;
                split(snaps[t0], snaps[t0 + 1])
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_window_of_each_kernel() {
        let text = "0 0 0\n5 5 5\n10 10 10\n14 12 11\n20 20 20\n21 21 21\n30 30 30\n39 31 30\n";
        assert_eq!(
            parse(text, 2),
            Some(vec![
                Split {
                    code: 4,
                    runtime: 2,
                    other: 1
                },
                Split {
                    code: 9,
                    runtime: 1,
                    other: 0
                }
            ])
        );
        assert_eq!(parse(text, 3), None);
        assert_eq!(parse("1 2\n", 1), None);
    }
}
