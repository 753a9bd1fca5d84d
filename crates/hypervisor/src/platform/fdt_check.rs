//! A structural check of a flattened device tree before the `fdt` crate reads it: that
//! crate trusts the structure block (it asserts on unexpected tokens, `expect`s NUL
//! terminators, UTF-8 names and 4-byte `#address-cells`/`#size-cells`), so a corrupt or
//! hand-made host device tree made the hypervisor panic. Whatever passes here the crate
//! walks without panicking; anything else is [`super::PlatformError::BadDtb`].
//!
//! Layout (Devicetree Specification v0.4, chapter 5): a header of big-endian words, the
//! memory reservation block, the structure block (tokens, 4-byte aligned) and the strings
//! block (NUL-terminated property names).

/// `magic` of the header.
const FDT_MAGIC: u32 = 0xd00d_feed;
/// Bytes of the header's ten words.
const HEADER_LEN: usize = 40;
/// Structure block tokens.
const FDT_BEGIN_NODE: u32 = 1;
const FDT_END_NODE: u32 = 2;
const FDT_PROP: u32 = 3;
const FDT_END: u32 = 9;
/// Bytes of one memory reservation entry (address and size, 64 bits each).
const RSV_ENTRY_LEN: usize = 16;
/// Alignment of tokens.
const TOKEN_ALIGN: usize = 4;
/// Deepest node nesting accepted (the crate recurses per level).
const MAX_DEPTH: usize = 64;

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let w = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
}

/// The NUL-terminated UTF-8 string at the start of `b`, and its length with the NUL.
fn cstr(b: &[u8]) -> Option<(&str, usize)> {
    let n = b.iter().position(|&c| c == 0)?;
    Some((core::str::from_utf8(&b[..n]).ok()?, n + 1))
}

fn align(n: usize) -> Option<usize> {
    Some(n.checked_add(TOKEN_ALIGN - 1)? & !(TOKEN_ALIGN - 1))
}

/// A block of `dtb` from its header fields, inside `total` bytes.
fn block(dtb: &[u8], off: u32, size: u32, total: usize) -> Option<&[u8]> {
    let start = usize::try_from(off).ok()?;
    let end = start.checked_add(usize::try_from(size).ok()?)?;
    (end <= total).then(|| dtb.get(start..end))?
}

/// True when the `fdt` crate can walk `dtb` without panicking: a sound header, a
/// terminated memory reservation block, and a structure block of exactly one root node
/// whose nodes have NUL-terminated UTF-8 names, properties (before any child node) with
/// names in the strings block and values inside the block, 4-byte `#address-cells` and
/// `#size-cells`, and no `FDT_NOP` (the crate does not skip them everywhere).
pub fn is_walkable(dtb: &[u8]) -> bool {
    walk(dtb).is_some()
}

fn walk(dtb: &[u8]) -> Option<()> {
    let word = |i: usize| be32(dtb, 4 * i);
    if dtb.len() < HEADER_LEN || word(0)? != FDT_MAGIC {
        return None;
    }
    let total = usize::try_from(word(1)?).ok()?;
    if total > dtb.len() || total < HEADER_LEN {
        return None;
    }
    let structs = block(dtb, word(2)?, word(9)?, total)?;
    let strings = block(dtb, word(3)?, word(8)?, total)?;
    if usize::try_from(word(2)?).ok()? % TOKEN_ALIGN != 0 {
        return None;
    }
    // Memory reservations: 16-byte entries up to an all-zero one.
    let mut rsv = usize::try_from(word(4)?).ok()?;
    loop {
        let entry = dtb.get(rsv..rsv.checked_add(RSV_ENTRY_LEN)?)?;
        if rsv + RSV_ENTRY_LEN > total {
            return None;
        }
        if entry.iter().all(|&b| b == 0) {
            break;
        }
        rsv += RSV_ENTRY_LEN;
    }
    walk_structs(structs, strings)
}

fn walk_structs(structs: &[u8], strings: &[u8]) -> Option<()> {
    let mut at = 0;
    // Open nodes; per level, whether a child node started (no property may follow).
    let mut has_child = [false; MAX_DEPTH];
    let mut depth = 0;
    let mut roots = 0;
    loop {
        let token = be32(structs, at)?;
        at += TOKEN_ALIGN;
        match token {
            FDT_BEGIN_NODE => {
                if depth == 0 {
                    roots += 1;
                    if roots > 1 {
                        return None;
                    }
                } else {
                    has_child[depth - 1] = true;
                }
                if depth == MAX_DEPTH {
                    return None;
                }
                has_child[depth] = false;
                depth += 1;
                let (_, len) = cstr(structs.get(at..)?)?;
                at = align(at + len)?;
            }
            FDT_END_NODE => {
                depth = depth.checked_sub(1)?;
            }
            FDT_PROP => {
                if depth == 0 || has_child[depth - 1] {
                    return None;
                }
                let len = usize::try_from(be32(structs, at)?).ok()?;
                let name_off = usize::try_from(be32(structs, at + 4)?).ok()?;
                at += 2 * TOKEN_ALIGN;
                let value = structs.get(at..at.checked_add(len)?)?;
                let (name, _) = cstr(strings.get(name_off..)?)?;
                if (name == "#address-cells" || name == "#size-cells") && value.len() != 4 {
                    return None;
                }
                at = align(at + len)?;
            }
            FDT_END => return (depth == 0 && roots == 1).then_some(()),
            _ => return None,
        }
        if at > structs.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root node with one property and one empty child, as `fdt` expects it.
    fn tiny() -> Vec<u8> {
        let strings = b"#address-cells\0";
        let mut st = Vec::new();
        let mut w = |v: u32| st.extend_from_slice(&v.to_be_bytes());
        w(FDT_BEGIN_NODE);
        w(0); // "" padded
        w(FDT_PROP);
        w(4);
        w(0);
        w(2);
        w(FDT_BEGIN_NODE);
        st.extend_from_slice(b"cpus\0\0\0\0");
        let mut w = |v: u32| st.extend_from_slice(&v.to_be_bytes());
        w(FDT_END_NODE);
        w(FDT_END_NODE);
        w(FDT_END);
        let rsv = HEADER_LEN;
        let off_struct = rsv + RSV_ENTRY_LEN;
        let off_strings = off_struct + st.len();
        let total = off_strings + strings.len();
        let header = [
            FDT_MAGIC,
            total as u32,
            off_struct as u32,
            off_strings as u32,
            rsv as u32,
            17,
            16,
            0,
            strings.len() as u32,
            st.len() as u32,
        ];
        let mut out: Vec<u8> = header.iter().flat_map(|w| w.to_be_bytes()).collect();
        out.extend_from_slice(&[0; RSV_ENTRY_LEN]);
        out.extend_from_slice(&st);
        out.extend_from_slice(strings);
        out
    }

    #[test]
    fn accepts_a_sound_tree() {
        assert!(is_walkable(&tiny()));
        assert!(fdt::Fdt::new(&tiny()).is_ok());
    }

    #[test]
    fn refuses_broken_structure() {
        let good = tiny();
        let struct_at = HEADER_LEN + RSV_ENTRY_LEN;
        let mut cases: Vec<Vec<u8>> = Vec::new();
        // An END_NODE where the child's BEGIN_NODE was (the crash the fuzzer found first).
        let mut b = good.clone();
        b[struct_at + 24..struct_at + 28].copy_from_slice(&FDT_END_NODE.to_be_bytes());
        cases.push(b);
        // A NOP token.
        let mut b = good.clone();
        b[struct_at + 24..struct_at + 28].copy_from_slice(&4u32.to_be_bytes());
        cases.push(b);
        // #address-cells of 2 bytes.
        let mut b = good.clone();
        b[struct_at + 12..struct_at + 16].copy_from_slice(&2u32.to_be_bytes());
        cases.push(b);
        // A property name offset past the strings block.
        let mut b = good.clone();
        b[struct_at + 16..struct_at + 20].copy_from_slice(&100u32.to_be_bytes());
        cases.push(b);
        // Truncated.
        cases.push(good[..good.len() - 4].to_vec());
        for (i, c) in cases.iter().enumerate() {
            assert!(!is_walkable(c), "case {i}");
        }
    }
}
