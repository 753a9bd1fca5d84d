//! Decodes instruction words given on the command line and prints the classification:
//! `cargo run -p dbt-armv7 --example decode -- a32 e0900001` or `-- t32 f240 1234`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let thumb = args.first().map(|s| s == "t32").unwrap_or(false);
    let words: Vec<u32> = args
        .iter()
        .skip(1)
        .map(|h| u32::from_str_radix(h, 16).expect("hex word"))
        .collect();
    let mut k = 0;
    while k < words.len() {
        let i = if thumb {
            let hw1 = words[k] as u16;
            let hw2 = words.get(k + 1).copied().unwrap_or(0) as u16;
            dbt_armv7::decode_thumb(hw1, hw2)
        } else {
            dbt_armv7::decode_a32(words[k])
        };
        k += if thumb && i.len == 4 { 2 } else { 1 };
        println!(
            "{:08x} {:?} unpred={} {:?}\n    {:?}",
            i.raw,
            i.class,
            i.unpredictable,
            i.op,
            i.info()
        );
    }
}
