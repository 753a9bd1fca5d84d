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
const FDT_NOP: u32 = 4;
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

/// Removes the `FDT_NOP` tokens from `dtb`'s structure block in place (the tokens after
/// each one move down, `size_dt_struct` shrinks; the other blocks stay where they are), so
/// a tree from firmware that deletes nodes by overwriting them with NOPs (edk2, U-Boot)
/// can be handed to the `fdt` crate, which does not skip them everywhere. Returns how many
/// were removed, or `None` (and `dtb` untouched) when the header or the token stream up to
/// `FDT_END` is not sound; `is_walkable` still checks the result before `fdt` reads it.
pub fn strip_nops(dtb: &mut [u8]) -> Option<usize> {
    let word = |d: &[u8], i: usize| be32(d, 4 * i);
    if dtb.len() < HEADER_LEN || word(dtb, 0)? != FDT_MAGIC {
        return None;
    }
    let total = usize::try_from(word(dtb, 1)?).ok()?;
    let off = usize::try_from(word(dtb, 2)?).ok()?;
    let size = usize::try_from(word(dtb, 9)?).ok()?;
    if total > dtb.len() || off % TOKEN_ALIGN != 0 || off.checked_add(size)? > total {
        return None;
    }
    // Dry run: every token's extent inside the block, up to FDT_END.
    let token_len = |structs: &[u8], at: usize| -> Option<(u32, usize)> {
        let token = be32(structs, at)?;
        let len = match token {
            FDT_BEGIN_NODE => {
                let (_, n) = cstr(structs.get(at + TOKEN_ALIGN..)?)?;
                align(TOKEN_ALIGN + n)?
            }
            FDT_PROP => {
                let n = usize::try_from(be32(structs, at + 4)?).ok()?;
                align(3 * TOKEN_ALIGN + n)?
            }
            FDT_END_NODE | FDT_NOP | FDT_END => TOKEN_ALIGN,
            _ => return None,
        };
        (at + len <= structs.len()).then_some((token, len))
    };
    let structs = &dtb[off..off + size];
    let (mut at, mut nops) = (0, 0);
    loop {
        let (token, len) = token_len(structs, at)?;
        at += len;
        match token {
            FDT_END => break,
            FDT_NOP => nops += 1,
            _ => {}
        }
    }
    // Compact.
    let structs = &mut dtb[off..off + size];
    let (mut from, mut to) = (0, 0);
    loop {
        let (token, len) = token_len(structs, from)?;
        if token != FDT_NOP {
            structs.copy_within(from..from + len, to);
            to += len;
        }
        from += len;
        if token == FDT_END {
            break;
        }
    }
    let new_size = u32::try_from(to).ok()?;
    dtb[36..40].copy_from_slice(&new_size.to_be_bytes());
    Some(nops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nops_are_stripped_and_the_tree_reads_the_same() {
        let good = tiny();
        let struct_at = HEADER_LEN + RSV_ENTRY_LEN;
        // Insert NOPs before the child node and after it: shift the rest of the struct
        // block up by 8 bytes (the strings block moves too; fix its offset and the sizes).
        let mut b = good[..struct_at + 24].to_vec();
        b.extend_from_slice(&FDT_NOP.to_be_bytes());
        b.extend_from_slice(&good[struct_at + 24..struct_at + 36]);
        b.extend_from_slice(&FDT_NOP.to_be_bytes());
        b.extend_from_slice(&good[struct_at + 36..]);
        let w = |b: &[u8], i: usize| u32::from_be_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        let set = |b: &mut Vec<u8>, i: usize, v: u32| {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_be_bytes())
        };
        let (t, strings, ssize) = (w(&b, 1), w(&b, 3), w(&b, 9));
        set(&mut b, 1, t + 8);
        set(&mut b, 3, strings + 8);
        set(&mut b, 9, ssize + 8);
        assert!(!is_walkable(&b), "NOPs are refused by the check");
        assert_eq!(strip_nops(&mut b), Some(2));
        assert!(is_walkable(&b));
        let fdt = fdt::Fdt::new(&b).unwrap();
        let orig = fdt::Fdt::new(&good).unwrap();
        let names = |f: &fdt::Fdt<'_>| f.all_nodes().map(|n| n.name).collect::<Vec<_>>().join(",");
        assert_eq!(names(&fdt), names(&orig));
        // A second pass finds none; a broken stream is left alone.
        assert_eq!(strip_nops(&mut b), Some(0));
        let mut bad = good.clone();
        bad[struct_at + 24..struct_at + 28].copy_from_slice(&7u32.to_be_bytes());
        let copy = bad.clone();
        assert_eq!(strip_nops(&mut bad), None);
        assert_eq!(bad, copy);
    }

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
