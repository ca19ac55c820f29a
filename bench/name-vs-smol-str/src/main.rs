//! `Name` against `SmolStr` (and `String`, the floor without a small-string type) in what the
//! runtime does with names: make them from the `&str` and `String` a JSON or text parser
//! hands over, clone them (a graph's operands are named by the node that makes them and by
//! every node that reads them), look them up in a `HashMap` by `&str` and sort them in a
//! `BTreeMap`. Names from a real graph's shapes: short generated ones (`n12345`) and long
//! checkpoint paths (`encoder.layers.11.attention.self.query.weight`).
//!
//! Prints one line per operation: nanoseconds per name for each type (the best of 7 rounds,
//! the types taking turns) and `Name`'s ratio to `SmolStr` and to `String`.

use smol_str::SmolStr;
use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::hint::black_box;
use std::time::Instant;
use webnn_weights_runtime::Name;

const COUNT: usize = 200_000;
const ROUNDS: usize = 7;

fn names() -> Vec<String> {
    (0..COUNT)
        .map(|i| match i % 3 {
            0 => format!("n{i}"),
            1 => format!("layer{}.conv{}", i % 97, i % 7),
            _ => format!("encoder.layers.{}.attention.self.query.weight", i % 1000),
        })
        .collect()
}

/// The time of one run of `f`, in nanoseconds per name.
fn time(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_nanos() as f64 / COUNT as f64
}

trait Key: Clone + Hash + Ord + Borrow<str> + for<'a> From<&'a str> + From<String> {}
impl<T: Clone + Hash + Ord + Borrow<str> + for<'a> From<&'a str> + From<String>> Key for T {}

/// Nanoseconds per name for each operation on `K`, one run each.
fn measure<K: Key>(texts: &[String]) -> [f64; 5] {
    let keys: Vec<K> = texts.iter().map(|t| K::from(t.as_str())).collect();
    let from_str = time(|| {
        let made: Vec<K> = texts
            .iter()
            .map(|t| K::from(black_box(t.as_str())))
            .collect();
        black_box(made);
    });
    let from_string = time(|| {
        let made: Vec<K> = texts
            .iter()
            .map(|t| K::from(black_box(t.clone())))
            .collect();
        black_box(made);
    });
    let clone = time(|| {
        let copies: Vec<K> = keys.iter().map(|k| black_box(k).clone()).collect();
        black_box(copies);
    });
    let map: HashMap<K, usize> = keys.iter().cloned().zip(0..).collect();
    let lookup = time(|| {
        let mut sum = 0usize;
        for t in texts {
            sum += map[black_box(t.as_str())];
        }
        black_box(sum);
    });
    let sorted = time(|| {
        let tree: BTreeMap<K, usize> = keys.iter().cloned().zip(0..).collect();
        black_box(tree);
    });
    [from_str, from_string, clone, lookup, sorted]
}

fn main() {
    let texts = names();
    // The three types take turns, round after round, so that a busy machine slows each
    // alike; each keeps its best round.
    let best = |a: [f64; 5], b: [f64; 5]| std::array::from_fn(|i| a[i].min(b[i]));
    let (mut ours, mut theirs, mut floor) =
        ([f64::INFINITY; 5], [f64::INFINITY; 5], [f64::INFINITY; 5]);
    for _ in 0..ROUNDS {
        ours = best(ours, measure::<Name>(&texts));
        theirs = best(theirs, measure::<SmolStr>(&texts));
        floor = best(floor, measure::<String>(&texts));
    }
    println!(
        "{COUNT} names (a third each: n<i>, layer<j>.conv<k>, encoder.layers.<j>.attention.self.query.weight), best of {ROUNDS}, ns per name"
    );
    println!(
        "{:<28} {:>8} {:>8} {:>8} {:>14} {:>14}",
        "operation", "Name", "SmolStr", "String", "Name/SmolStr", "Name/String"
    );
    let labels = [
        "from &str",
        "from String",
        "clone",
        "HashMap lookup by &str",
        "BTreeMap of all names",
    ];
    for (i, label) in labels.iter().enumerate() {
        println!(
            "{label:<28} {:>8.1} {:>8.1} {:>8.1} {:>13.2}x {:>13.2}x",
            ours[i],
            theirs[i],
            floor[i],
            ours[i] / theirs[i],
            ours[i] / floor[i]
        );
    }
    println!(
        "size_of: Name {} bytes, SmolStr {} bytes, String {} bytes",
        std::mem::size_of::<Name>(),
        std::mem::size_of::<SmolStr>(),
        std::mem::size_of::<String>()
    );
}
