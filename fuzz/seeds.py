#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/): a few valid,
typical inputs per target, in each target's input layout. Run from anywhere; the host DTBs
come from qemu-system-aarch64 (-M virt,dumpdtb=...) when it is installed."""
import os, struct, subprocess, shutil, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

u8 = lambda v: struct.pack("<B", v)
u16 = lambda v: struct.pack("<H", v)
u32 = lambda v: struct.pack("<I", v)
u64 = lambda v: struct.pack("<Q", v)
IL = 1 << 25
def esr(ec, iss): return (ec << 26) | IL | iss

# ESRs of the classes a guest causes: data abort (ISV=1 word store to x1, ISV=0), sysreg
# read, HVC #0, WFI, instruction abort, SMC, AArch32 CP15 MCR.
ESRS = {
    "dabt_isv": (esr(0x24, (1 << 24) | (2 << 22) | (1 << 16) | (1 << 6) | 0x7), 0x0900_0010, 0x0900_0000 >> 8),
    "dabt_noisv": (esr(0x24, (1 << 6) | 0x7), 0x0900_0010, 0x0900_0000 >> 8),
    "sysreg": (esr(0x18, (3 << 20) | (0 << 14) | (1 << 10) | (2 << 5) | (0 << 1) | 1 | (0 << 17)), 0, 0),
    "hvc": (esr(0x16, 0), 0, 0),
    "wfi": (esr(0x01, 0), 0, 0),
    "iabt": (esr(0x20, 0x7), 0x1000_0000, 0x1000_0000 >> 8),
    "smc": (esr(0x17, 0), 0, 0),
    "cp15": (esr(0x03, (0xe << 20) | (1 << 10) | 1), 0, 0),
}
for name, (e, far, hpfar) in ESRS.items():
    put("esr_decode", name, u64(e) + u64(far) + u64(hpfar))

# A64 loads/stores: LDR w0,[x1]; STR x2,[x3,#8]; LDP x0,x1,[x2]; STP w4,w5,[sp,#-16]!;
# LDRB w0,[x1],#1; STR q0,[x1]; LDXR x0,[x1]; LDADD w0,w1,[x2]; DC ZVA x0; LDRSH x0,[x1,x2,lsl #1];
# LD1 {v0.16b},[x0].
INSNS = [0xb9400020, 0xf9000462, 0xa9400440, 0x29bf17e4, 0x38401420, 0x3d800020,
         0xc85f7c20, 0xb8200041, 0xd50b7420, 0x78e27820, 0x4c407000]
for i, w in enumerate(INSNS):
    put("mmio_decode", f"insn{i}", u32(w) + u64(0) + b"\x00" * 31 + u64(0x0900_0000) + b"\x01" + u64(0x0900_0000))

# exit_dispatch: pstate (0: pick EL1h), sctlr off, registers small, code at PC = the
# instruction words above, flags, then exits (kind byte 3 = sync, ESR, FAR, HPFAR).
def exit_seed(exits, code=INSNS):
    head = b"\x00\x00" + b"\x00" + b"".join(b"\x00" + u8(i) for i in range(31))
    code_bytes = b"".join(u32(w) for w in code)[:64].ljust(64, b"\x00")
    flags = b"\x01\x00\x00\x00\x00"
    body = b"".join(b"\x03" + u64(e) + u64(far) + b"\x00" + u64(hpfar) for e, far, hpfar in exits)
    return head + code_bytes + flags + body
for name, ex in ESRS.items():
    put("exit_dispatch", name, exit_seed([ex]))
put("exit_dispatch", "all", exit_seed(list(ESRS.values())))
put("exit_dispatch", "irq", exit_seed([]) + b"\x00" + u64(0) + u64(0) + b"\x00" + u64(0))

# vgic_regs: GICv3, 2 vCPUs, 32 SPIs; enable the distributor, enable and raise an SPI, flush.
def gic_op(op, vcpu, width, value, extra=b""):
    return u8(op) + u8(vcpu) + u8(width) + b"\x01" + u64(value) + extra
for v3 in (0, 1):
    s = u8(v3) + u8(1) + u8(1)
    s += gic_op(2, 0, 2, 0x3, u16(0x0000))          # GICD_CTLR
    s += gic_op(2, 0, 2, 0xffffffff, u16(0x0104))   # GICD_ISENABLER1
    s += gic_op(0, 0, 2, 0, u16(0x0004))            # GICD_TYPER
    s += gic_op(7, 0, 2, 0, u8(1) + u8(1))          # SPI 33 high
    s += gic_op(9, 0, 2, 0, b"\x01")                # flush, ack, EOI, sync
    s += gic_op(4, 1, 2, 0, u32(0x0008))            # GICR_TYPER of vCPU 0
    s += gic_op(6, 0, 2, 0x1_0000_0001)             # ICC_SGI1R
    put("vgic_regs", f"v{3 if v3 else 2}", s)

# virtqueue: per device: features (all), a descriptor chain at queue 0 (two descriptors:
# a 16-byte readable header, a 512-byte writable buffer), avail ring idx 1, notify.
def desc(addr, ln, flags, nxt): return u64(addr) + u32(ln) + u16(flags) + u16(nxt)
BASE = 0x4000_0000
for dev in range(4):
    s = u8(dev) + u64(0xffff_ffff_ffff_ffff)
    def mem(at, data):
        out = b""
        for k in range(0, len(data), 16):
            out += b"\x00" + u16(at + k) + data[k:k + 16].ljust(16, b"\x00")
        return out
    s += mem(0, desc(BASE + 0x2000, 16, 1, 1) + desc(BASE + 0x2100, 512, 2, 0))
    s += mem(0x200, u16(0) + u16(1) + u16(0) + u16(0) * 5)
    s += mem(0x2000, u32(0) + u32(0) + u64(0))  # block: VIRTIO_BLK_T_IN, sector 0
    s += b"\x04\x00" + b"\x07" + u8(0) + u16(16) + u16(0) + b"\x01"
    put("virtqueue", f"dev{dev}", s)

# smccc: VMs' vCPUs 1..3 off; PSCI_VERSION, FEATURES, CPU_ON(1), AFFINITY_INFO(1),
# SMCCC_VERSION, ARCH_FEATURES(WORKAROUND_1), CPU_OFF, SYSTEM_OFF; a vendor call.
def call(fid, args):
    return u64(fid) + b"".join((b"\x01" + u64(a)) for a in (args + [0] * 6)[:6])
calls = [(0x8400_0000, []), (0x8400_000a, [0xc400_0003]), (0xc400_0003, [1, 0x4000_0000, 7]),
         (0xc400_0004, [1, 0]), (0x8000_0000, []), (0x8000_0001, [0x8000_8000]),
         (0x8400_0002, []), (0x8400_0008, []), (0xc600_0000, [1, 2])]
put("smccc", "psci", b"\x00\x00\x00" + b"".join(call(f, a) for f, a in calls))

# vmpkg: one VM, then one with a MAC and a disk (the package writer's layout).
def pkg(vms):
    n = len(vms)
    has_ext = any(v.get("mac") for v in vms)
    has_disk = any(v.get("disk") for v in vms)
    flags = (1 if has_ext else 0) | (2 if has_disk else 0)
    off = 24 + 64 * n + (16 * n if has_ext else 0) + (16 * n if has_disk else 0)
    payload = b""
    descs, exts, disks = b"", b"", b""
    def place(data):
        nonlocal payload
        at = off + len(payload)
        payload += data
        return at, len(data)
    for v in vms:
        no, nl = place(v["name"].encode())
        ko, kl = place(v["kernel"])
        co, cl = place(v["cmdline"].encode())
        descs += u32(no) + u32(nl) + u64(v["mem"]) + u32(v["vcpus"]) + u32(v.get("flags", 0))
        descs += u64(ko) + u64(kl) + u64(0) + u64(0) + u32(co) + u32(cl)
        if has_ext:
            mac = v.get("mac")
            exts += (mac + b"\x01" if mac else b"\x00" * 7) + b"\x00" * 9
        if has_disk:
            d = v.get("disk")
            if d:
                do, dl = place(d)
                disks += u64(do) + u64(dl)
            else:
                disks += u64(0) + u64(0)
    body = descs + exts + disks + payload
    total = 24 + len(body)
    return b"HVPKG\x00\x00\x01" + u64(total) + u32(n) + u32(flags) + body
k = b"\x00\x00\x00\x14" * 4
put("vmpkg", "one", pkg([{"name": "hello", "kernel": k, "cmdline": "reset", "mem": 128 << 20, "vcpus": 1}]))
put("vmpkg", "two", pkg([{"name": "a", "kernel": k, "cmdline": "", "mem": 64 << 20, "vcpus": 2, "flags": 1},
                         {"name": "b", "kernel": k, "cmdline": "x", "mem": 64 << 20, "vcpus": 1,
                          "mac": b"\x52\x54\x00\x12\x34\x57", "disk": b"DISK" * 128}]))

# vm_config: the repository's configuration and scenario files.
for d, prefix in (("configs", "config-"), ("tests/scenarios", "scenario-")):
    for f in sorted(os.listdir(os.path.join(ROOT, d)))[:8]:
        if f.endswith(".toml"):
            shutil.copy(os.path.join(ROOT, d, f), os.path.join(HERE, "corpus", "vm_config", prefix + f)) \
                if os.path.isdir(os.path.join(HERE, "corpus", "vm_config")) else (
                os.makedirs(os.path.join(HERE, "corpus", "vm_config")),
                shutil.copy(os.path.join(ROOT, d, f), os.path.join(HERE, "corpus", "vm_config", prefix + f)))

# dbt: A32 (MOV, ADD, LDR, STR, B, BL, MCR p15, SVC, LDM, BX lr) and T32 (MOVS, ADDS, IT,
# BL, LDR.W, CBZ) instruction streams.
A32 = [0xe3a00001, 0xe0811002, 0xe5910004, 0xe5821008, 0xeafffffe, 0xebfffffe,
       0xee010f10, 0xef000000, 0xe8bd8010, 0xe12fff1e]
T32 = b"".join(u16(h) for h in [0x2001, 0x1889, 0xbf08, 0x3001, 0xf000, 0xf800, 0xf8d1, 0x0004, 0xb108, 0x4770])
put("dbt_decode", "a32", b"".join(u32(w) for w in A32))
put("dbt_decode", "t32", T32)
put("dbt_translate", "a32", b"\x00\x00\x00" + b"".join(u32(w) for w in A32))
put("dbt_translate", "t32", b"\x01\x00\x00" + T32)
put("dbt_translate", "a32_priv", b"\x00\x01\x00" + b"".join(u32(w) for w in A32))

# host_dtb: QEMU virt's device trees (GICv2 and GICv3, 1 and 2 CPUs, with virtio slots).
qemu = shutil.which("qemu-system-aarch64")
if qemu:
    with tempfile.TemporaryDirectory() as tmp:
        for gic, smp in ((2, 1), (3, 2)):
            out = os.path.join(tmp, "d.dtb")
            subprocess.run([qemu, "-M", f"virt,virtualization=on,gic-version={gic},dumpdtb={out}",
                            "-cpu", "cortex-a57", "-smp", str(smp), "-m", "384M", "-nographic", "-nic", "none"],
                           check=True, capture_output=True)
            blob = open(out, "rb").read()
            # QEMU's blob is 1 MiB with free space at the end: cut it after the strings
            # block (header: off_dt_struct 8, off_dt_strings 12, size_dt_strings 32,
            # size_dt_struct 36) and say so in totalsize.
            h = struct.unpack(">10I", blob[:40])
            end = max(h[2] + h[9], h[3] + h[8])
            blob = blob[:4] + struct.pack(">I", end) + blob[8:end]
            put("host_dtb", f"virt-gic{gic}-smp{smp}", blob)
