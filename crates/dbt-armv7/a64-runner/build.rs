//! Links the runner with `link.x` (text above 4 GiB: the low 4 GiB are the guest's).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-arg=-T{dir}/link.x");
    println!("cargo:rerun-if-changed=link.x");
}
