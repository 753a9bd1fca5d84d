//! `cargo xtask bench`, virtio-blk part: the `virtio-test` guest with `bench` in its bootargs
//! (1 vCPU on 1 physical CPU) in every hypervisor cell. The guest drives the hypervisor's
//! virtio-blk device (the 4 MiB RAM disk: no `-drive` is given to QEMU) with `virtio-drivers`'
//! blocking (polling) API in batches of sequential requests and prints per batch
//! `virtio-test: blk-bench <batch> <n> req: <x> instr/req, <y> MB/s, <z> req/s, exits/req
//! <reason>=<per req> ...`; instructions and MB/s are of virtual time under `-icount shift=0`,
//! identical from run to run.

use std::fmt::Write as _;
use std::path::Path;

use crate::bench::{
    cell_args, cells, exits_text, guest_line, hypervisor_columns, json_str, run_logged, Cell,
};
use crate::cli::Gic;

/// The guest crate.
pub const GUEST: &str = "virtio-test";
/// Its bootargs.
pub const CMDLINE: &str = "bench";
/// Batches in the guest's order (the table's rows).
pub const BATCHES: &[&str] = &["read-4k", "write-4k", "read-64k"];

/// One batch as the guest reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// `read-4k`, `write-4k`, `read-64k`.
    pub name: String,
    /// Requests in the batch.
    pub requests: u64,
    /// Instructions (virtual ns) per request.
    pub instr_per_req: f64,
    /// MB/s (10^6 bytes) of virtual time.
    pub mb_s: f64,
    /// Requests per second of virtual time.
    pub req_s: u64,
    /// Exits per request on the guest's vCPU (non-zero reasons only; empty = none; `None`
    /// when the guest could not read them).
    pub exits: Option<Vec<(String, f64)>>,
}

/// What one run produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlkResults {
    /// The batches, in order.
    pub batches: Vec<Batch>,
    /// The guest printed `virtio-test: blk-bench done`.
    pub done: bool,
}

impl BlkResults {
    /// The batch `name`, if reported.
    pub fn get(&self, name: &str) -> Option<&Batch> {
        self.batches.iter().find(|b| b.name == name)
    }
}

/// Parses one `blk-bench` line after `virtio-test: blk-bench `: `<batch> <n> req: <x>
/// instr/req, <y> MB/s, <z> req/s[, exits/req reason=v ...]`.
fn parse_batch(rest: &str) -> Option<Batch> {
    let (head, figures) = rest.split_once(" req: ")?;
    let (name, requests) = head.split_once(' ')?;
    let mut fields = figures.split(", ");
    let mut number = |unit: &str| -> Option<String> {
        let f = fields.next()?;
        Some(f.strip_suffix(unit)?.trim().to_string())
    };
    let instr_per_req = number(" instr/req")?.parse().ok()?;
    let mb_s = number(" MB/s")?.parse().ok()?;
    let req_s = number(" req/s")?.parse().ok()?;
    let exits = match fields.next() {
        None => None,
        Some(e) => {
            let per_req = e.strip_prefix("exits/req")?;
            Some(
                per_req
                    .split_whitespace()
                    .filter_map(|kv| kv.split_once('='))
                    .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                    .collect(),
            )
        }
    };
    Some(Batch {
        name: name.to_string(),
        requests: requests.parse().ok()?,
        instr_per_req,
        mb_s,
        req_s,
        exits,
    })
}

/// Parses a run's console (guest lines, possibly prefixed `[vm] ` by the hypervisor).
pub fn parse(output: &str) -> BlkResults {
    let mut r = BlkResults::default();
    for line in output.lines() {
        let line = guest_line(line);
        let Some(rest) = line.strip_prefix("virtio-test: blk-bench ") else {
            continue;
        };
        if rest == "done" {
            r.done = true;
        } else if let Some(b) = parse_batch(rest) {
            if r.get(&b.name).is_none() {
                r.batches.push(b);
            }
        }
    }
    r
}

/// Runs the guest in every hypervisor cell matching `filter`. Returns per cell the results,
/// or `None` when the run failed or did not finish (reported on stderr).
pub fn run(
    qemu_path: &Path,
    out_dir: &Path,
    guest_bin: &Path,
    hypervisor: &Path,
    package: &Path,
    filter: Option<&str>,
) -> Vec<(Cell, Option<BlkResults>)> {
    let mut out = Vec::new();
    for cell in cells() {
        if cell.backend.is_none() || filter.is_some_and(|f| !cell.name().contains(f)) {
            continue;
        }
        let name = format!("virtio-blk {}", cell.name());
        let log = out_dir.join(format!("{}.log", name.replace([' ', '/'], "-")));
        eprintln!("xtask: bench {name}");
        let args = cell_args(cell, 1, guest_bin, hypervisor, package);
        let r = match run_logged(qemu_path, &args, &log, true) {
            Ok(text) => Some(parse(&text)).filter(|r| r.done),
            Err(e) => {
                eprintln!("xtask: bench {name}: {e}");
                None
            }
        };
        if r.is_none() {
            eprintln!(
                "xtask: bench {name}: no `virtio-test: blk-bench done` (log: {})",
                log.display()
            );
        }
        out.push((cell, r));
    }
    out
}

/// The table: per GIC, batches as rows, hypervisor cells as columns, each
/// `instructions/request / MB/s / exits per request`.
pub fn table(runs: &[(Cell, Option<BlkResults>)]) -> String {
    let mut s = String::from(
        "virtio-blk (RAM disk): instructions per request / MB/s / exits per request \
         (virtio-test guest, 1 vCPU, virtio-drivers polling; virtual time under -icount \
         shift=0)\n",
    );
    for gic in [Gic::V2, Gic::V3] {
        let cols = hypervisor_columns(&mut s, gic, 28);
        for &batch in BATCHES {
            let n = runs
                .iter()
                .filter_map(|(_, r)| r.as_ref()?.get(batch))
                .map(|b| b.requests)
                .next();
            let row = n.map_or(batch.to_string(), |n| format!("{batch} x{n}"));
            let _ = write!(s, "{row:<14}");
            for c in &cols {
                let b = runs
                    .iter()
                    .find(|(x, _)| x == c)
                    .and_then(|(_, r)| r.as_ref()?.get(batch));
                let text = b.map_or("-".into(), |b| {
                    format!(
                        "{:.1} / {:.1} / {}",
                        b.instr_per_req,
                        b.mb_s,
                        exits_text(b.exits.as_deref())
                    )
                });
                let _ = write!(s, " {text:>28}");
            }
            s.push('\n');
        }
    }
    s
}

/// `results.json` with a `"virtio_blk"` list added before the closing brace: per cell
/// `{"cell": .., "batches": {"<batch>": {"requests", "instr_per_req", "mb_s", "req_s",
/// "exits_per_req": {..} or null}}}` (`"batches": null` for a failed run).
pub fn add_to_json(json: &str, runs: &[(Cell, Option<BlkResults>)]) -> String {
    let items: Vec<String> = runs
        .iter()
        .map(|(c, r)| {
            let batches = r.as_ref().map_or("null".into(), |r| {
                let b: Vec<String> = r
                    .batches
                    .iter()
                    .map(|b| {
                        let exits = b.exits.as_ref().map_or("null".into(), |kv| {
                            let kv: Vec<String> = kv
                                .iter()
                                .map(|(k, v)| format!("{}: {v:.2}", json_str(k)))
                                .collect();
                            format!("{{{}}}", kv.join(", "))
                        });
                        format!(
                            "{}: {{\"requests\": {}, \"instr_per_req\": {:.1}, \"mb_s\": {:.1}, \
                             \"req_s\": {}, \"exits_per_req\": {exits}}}",
                            json_str(&b.name),
                            b.requests,
                            b.instr_per_req,
                            b.mb_s,
                            b.req_s
                        )
                    })
                    .collect();
                format!("{{{}}}", b.join(", "))
            });
            format!(
                "\n    {{\"cell\": {}, \"batches\": {batches}}}",
                json_str(&c.name())
            )
        })
        .collect();
    let body = json.trim_end().trim_end_matches('}').trim_end();
    format!("{body},\n  \"virtio_blk\": [{}\n  ]\n}}\n", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "virtio-test: bootargs: \"bench\"\n\
        virtio-test: blk-bench: capacity 8192 sectors, counter 62500000 Hz, polling (no interrupts)\n\
        virtio-test: blk-bench read-4k 200 req: 31756.8 instr/req, 129.0 MB/s, 31489 req/s, exits/req mmio=1.00\n\
        [vm1] virtio-test: blk-bench write-4k 200 req: 19175.3 instr/req, 213.6 MB/s, 52150 req/s, exits/req mmio=1.00 irq=0.02\n\
        virtio-test: blk-bench read-64k 50 req: 132604.2 instr/req, 494.2 MB/s, 7541 req/s, exits/req 0\n\
        virtio-test: blk-bench done\r\n\
        virtio-test: PASS\n\
        [hv] virtio-test: Some(PowerOff); exits: total=2548 hvc=67 mmio=2480 fp=1\n";

    #[test]
    fn parses_batches() {
        let r = parse(LOG);
        assert!(r.done);
        assert_eq!(r.batches.len(), 3);
        let b = r.get("read-4k").unwrap();
        assert_eq!(b.requests, 200);
        assert_eq!(b.instr_per_req, 31756.8);
        assert_eq!(b.mb_s, 129.0);
        assert_eq!(b.req_s, 31489);
        assert_eq!(b.exits, Some(vec![("mmio".to_string(), 1.0)]));
        let w = r.get("write-4k").unwrap();
        assert_eq!(
            w.exits,
            Some(vec![("mmio".to_string(), 1.0), ("irq".to_string(), 0.02)])
        );
        assert_eq!(exits_text(w.exits.as_deref()), "1 mmio + 0.02 irq");
        let l = r.get("read-64k").unwrap();
        assert_eq!((l.requests, l.req_s), (50, 7541));
        assert_eq!(l.exits, Some(vec![]));
        assert_eq!(exits_text(l.exits.as_deref()), "0");
    }

    #[test]
    fn native_lines_and_garbage() {
        // Natively (no HV_EXIT_COUNT) the exits part is missing.
        let r =
            parse("virtio-test: blk-bench read-4k 200 req: 10.5 instr/req, 1.0 MB/s, 5 req/s\n");
        assert!(!r.done);
        let b = r.get("read-4k").unwrap();
        assert_eq!(b.exits, None);
        assert_eq!(exits_text(b.exits.as_deref()), "-");
        for bad in [
            "virtio-test: blk-bench: FAIL init: x",
            "virtio-test: blk-bench read-4k 200 req: x instr/req, 1.0 MB/s, 5 req/s",
            "virtio-test: blk-bench read-4k 200 req: 1.0 instr/req, 1.0 MB/s",
            "virtio-test: blk-bench read-4k two req: 1.0 instr/req, 1.0 MB/s, 5 req/s",
            "virtio-test: blk-bench read-4k 200 req: 1.0 instr/req, 1.0 MB/s, 5 req/s, mmio=1",
        ] {
            assert!(parse(bad).batches.is_empty(), "{bad}");
        }
    }

    #[test]
    fn table_and_json() {
        let all = cells();
        let a57 = all[1];
        let vhe = all[3];
        let runs = vec![(a57, Some(parse(LOG))), (vhe, None)];
        let t = table(&runs);
        assert!(t.contains("read-4k x200"), "{t}");
        assert!(t.contains("31756.8 / 129.0 / 1 mmio"), "{t}");
        assert!(t.contains("132604.2 / 494.2 / 0"), "{t}");
        let json = add_to_json("{\n  \"runs\": []\n}\n", &runs);
        assert!(
            json.starts_with("{\n  \"runs\": [],\n  \"virtio_blk\": ["),
            "{json}"
        );
        assert!(json.contains(
            "{\"cell\": \"cortex-a57/nvhe gic2\", \"batches\": {\"read-4k\": {\"requests\": 200, \
             \"instr_per_req\": 31756.8, \"mb_s\": 129.0, \"req_s\": 31489, \"exits_per_req\": \
             {\"mmio\": 1.00}}"
        ));
        assert!(json.contains("{\"cell\": \"max/vhe gic2\", \"batches\": null}"));
        assert!(json.trim_end().ends_with("]\n}"));
    }
}
