#!/usr/bin/env bash
# SHA-256 speed of the pure-Rust crates a build script can hash weights locks with, side by side
# in one run: `sha2` (RustCrypto) and `hmac-sha256` (no dependencies), unoptimized (build
# scripts compile at opt-level 0 in release builds too) and optimized.
# Usage: bash bench/sha256-speed.sh [MiB] [WORK]   (defaults: 256, target/sha256-speed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mib=${1:-256}
work=${2:-$here/../target/sha256-speed}
mkdir -p "$work/src"
cat > "$work/Cargo.toml" <<'TOML'
[package]
name = "sha256-speed"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
sha2 = "0.10"
hmac-sha256 = "1.1"

[profile.dev]
debug = false
TOML
cat > "$work/src/main.rs" <<'RS'
use std::time::Instant;
fn main() {
    let mib: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let data: Vec<u8> = (0..mib << 20).map(|i| (i * 31 % 251) as u8).collect();
    let time = |f: &dyn Fn() -> [u8; 32]| {
        let start = Instant::now();
        let digest = f();
        (start.elapsed().as_secs_f64(), digest)
    };
    let (t_sha2, d_sha2) = time(&|| {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        for piece in data.chunks(1 << 20) {
            h.update(piece);
        }
        h.finalize().into()
    });
    let (t_hmac, d_hmac) = time(&|| {
        let mut h = hmac_sha256::Hash::new();
        for piece in data.chunks(1 << 20) {
            h.update(piece);
        }
        h.finalize()
    });
    assert_eq!(d_sha2, d_hmac, "the digests differ");
    let mbs = |t: f64| (mib << 20) as f64 / t / 1e6;
    println!(
        "{:>9} | sha2 {:7.1} MB/s ({:.2} s) | hmac-sha256 {:7.1} MB/s ({:.2} s) | hmac-sha256/sha2 time {:.2}x",
        std::env::args().nth(2).unwrap(),
        mbs(t_sha2), t_sha2, mbs(t_hmac), t_hmac, t_hmac / t_sha2
    );
}
RS
cd "$work"
cargo build -q 2>/dev/null || cargo build
cargo build -q --release
echo "SHA-256 of $mib MiB in 1 MiB pieces, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/target/debug/sha256-speed" "$mib" "opt-level 0"
"$work/target/release/sha256-speed" "$mib" "opt-level 3"
