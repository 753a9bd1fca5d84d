//! The benchmark kernels (`bench-guest/`: CRC-32, a sort, a matrix multiply, recursion
//! with indirect calls, a pointer chase over 64 MiB) through the translator under
//! `qemu-aarch64` and under `qemu-arm`: the same output, the whole program translated
//! (at most a handful of instructions interpreted), and, for the call-heavy kernel, its
//! returns and indirect calls staying in the code cache (the shadow return stack and the
//! target cache hit: far fewer entries into the code cache than calls).

mod common;

use common::kernels::{built, KERNELS};

#[test]
fn kernels_agree_with_qemu_arm_and_stay_translated() {
    let dir = built();
    for k in KERNELS {
        let elf = dir.join(k);
        let q = std::process::Command::new("timeout")
            .arg("60")
            .arg(common::qemu_arm())
            .arg(&elf)
            .output()
            .expect("qemu-arm");
        let t = common::a64::run(&elf, false);
        assert!(q.status.success(), "{k}: qemu-arm {:?}", q.status);
        assert!(
            t.status.success(),
            "{k}: translator {:?} {}",
            t.status,
            String::from_utf8_lossy(&t.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&t.stdout),
            String::from_utf8_lossy(&q.stdout),
            "{k}"
        );
        let st: std::collections::BTreeMap<String, u64> =
            common::a64::stats(&t.stderr).into_iter().collect();
        println!(
            "{k}: {} {:?}",
            String::from_utf8_lossy(&q.stdout).trim(),
            st
        );
        assert!(
            st["interpreted"] <= 8,
            "{k}: {} interpreted",
            st["interpreted"]
        );
        assert!(st["icount"] > 1_000_000, "{k}: too short");
        if k == "sysreg" {
            // 600000 sensitive instructions, run by calls from translated code: almost
            // none leave the code cache.
            assert!(
                st["entries"] < 1000 && st["system_calls"] < 100,
                "sysreg: {st:?}"
            );
        }
        if k == "fib" {
            // 242785 calls and 100000 indirect calls: all but a few hundred returns and
            // indirect branches must stay in the code cache.
            assert!(
                st["entries"] < 1000,
                "fib: {} code cache entries",
                st["entries"]
            );
        }
    }
}
