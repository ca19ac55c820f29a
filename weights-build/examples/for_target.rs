//! Drives the build helper for a foreign target and checks linked images; used by
//! `bench/platforms.sh`.
//!
//! ```text
//! for_target model DIR              a graph with constants of odd sizes + its SafeTensors
//! for_target big DIR                a 2 GiB constant in a sparse SafeTensors (marked ends)
//! for_target sharded DIR GIB        GIB constants of 1 GiB in three sparse SafeTensors
//!                                   shards (Hugging Face index), marked windows, and two
//!                                   small constants; `samples.tsv` lists the marked windows
//! for_target build PKG GRAPH OUT    Builder for the target that CARGO_CFG_TARGET_* describe
//! for_target check IMAGE SYMBOL TSV [END_SYMBOL LINKED_LEN]
//!                                   read every constant back from a linked image, and
//!                                   find END_SYMBOL LINKED_LEN bytes after SYMBOL
//! ```
//!
//! `build` is what a build script does, with cargo's variables (`TARGET`,
//! `CARGO_CFG_TARGET_OS/_ARCH/_ENV/_ENDIAN/_POINTER_WIDTH`) set by the caller as cargo would
//! set them: the supported way to write another target's artifacts. Besides the artifacts it
//! writes, into OUT, `constants.tsv` and `constants.h` (name, offset, length and FNV-1a hash
//! of each constant's bytes as the run-time resolver reads them from the sidecar: an
//! independent reference) and prints `key=value` lines for the script.

use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::ExitCode;
use webnn_weights_build::{Builder, Embedding};
use webnn_weights_runtime::{parse_webnn, read_graph_file, resolve_external_weights, ConstInit};
use webnn_weights_tools::write_external_weights_safetensors;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Constants of odd sizes and several types (sizes 1, 3, 6, 12, 63, 65, 1000, 4097 bytes).
const MODEL: &str = r#"webnn_graph "odd" v1 {
  inputs { x: f32[1]; }
  consts {
    a_one: u8[1] @weights("one");
    b_three: i8[3] @weights("three");
    c_half: f16[3] @weights("half");
    d_float: f32[3] @weights("float");
    e_63: u8[63] @weights("b63");
    f_65: u8[65] @weights("b65");
    g_long: i64[125] @weights("long");
    h_4097: u8[4097] @weights("b4097");
  }
  nodes { y = relu(x); }
  outputs { y; }
}
"#;

fn model(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)?;
    let graph = parse_webnn(MODEL)?;
    let mut data: HashMap<String, Vec<u8>> = HashMap::new();
    // Byte lengths of the declarations above.
    let lengths = [
        ("one", 1),
        ("three", 3),
        ("half", 6),
        ("float", 12),
        ("b63", 63),
        ("b65", 65),
        ("long", 1000),
        ("b4097", 4097),
    ];
    for (i, (reference, len)) in lengths.into_iter().enumerate() {
        let bytes = (0..len)
            .map(|k: usize| (k * 31 + i * 17 + 1) as u8)
            .collect();
        data.insert(reference.to_string(), bytes);
    }
    let refs: HashMap<String, &[u8]> = data.iter().map(|(k, v)| (k.clone(), &v[..])).collect();
    fs::write(dir.join("odd.webnn"), MODEL)?;
    write_external_weights_safetensors(&graph, &refs, &dir.join("odd.safetensors"))?;
    Ok(())
}

/// One uint8 constant of exactly 2 GiB; the file is sparse except for 4 KiB marked at each
/// end, so writing it costs nothing and its ends are checked byte for byte.
fn big(dir: &Path) -> Result<()> {
    const ROWS: u64 = 2;
    const COLS: u64 = 1 << 30;
    fs::create_dir_all(dir)?;
    fs::write(
        dir.join("big.webnn"),
        format!(
            "webnn_graph \"big\" v1 {{\n  inputs {{ x: f32[1]; }}\n  consts {{\n    w: u8[{ROWS}, {COLS}] @weights(\"w\");\n  }}\n  nodes {{ y = relu(x); }}\n  outputs {{ y; }}\n}}\n"
        ),
    )?;
    let len = ROWS * COLS;
    let mut header = format!(
        "{{\"w\":{{\"dtype\":\"U8\",\"shape\":[{ROWS},{COLS}],\"data_offsets\":[0,{len}]}}}}"
    );
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut file = fs::File::create(dir.join("big.safetensors"))?;
    file.write_all(&(header.len() as u64).to_le_bytes())?;
    file.write_all(header.as_bytes())?;
    let start = 8 + header.len() as u64;
    let mark: Vec<u8> = (0..4096u32).map(|i| (i % 251 + 1) as u8).collect();
    file.write_all(&mark)?;
    file.seek(SeekFrom::Start(start + len - mark.len() as u64))?;
    file.write_all(&mark)?;
    file.set_len(start + len)?;
    Ok(())
}

/// The byte at `k` of the marked window `w` of constant `i` of the sharded model (never 0).
fn mark_byte(i: usize, w: usize, k: usize) -> u8 {
    ((k * 31 + i * 17 + w * 7) % 251 + 1) as u8
}

/// `gib` GiB (to the MiB) in constants `w0`, `w1`, … of 1 GiB each (uint8 [1024, 1048576];
/// the last one smaller when `gib` is not whole) and two small ones
/// (`s_three`, 3 bytes; `s_odd`, 65 bytes) in three SafeTensors shards with a Hugging Face
/// index (`huge.safetensors.index.json`). The shards are sparse except for three marked
/// 4 KiB windows in each large constant (its start, middle and end) and the small
/// constants. `samples.tsv` lists every marked window (constant, offset in it, length,
/// FNV-1a of its bytes, computed from the formula that wrote them): the reference a check
/// compares with.
fn sharded(dir: &Path, gib: f64) -> Result<()> {
    const ROWS: u64 = 1024;
    const COLS: u64 = 1 << 20;
    const WINDOW: u64 = 4096;
    let mib = (gib * 1024.0).round() as u64;
    // Rows of 1 MiB per constant.
    let rows: Vec<u64> = (0..mib.div_ceil(ROWS))
        .map(|i| (mib - i * ROWS).min(ROWS))
        .collect();
    let gib = rows.len();
    fs::create_dir_all(dir)?;
    let mut consts = String::new();
    // (name, length, shard)
    let mut tensors: Vec<(String, u64, usize)> = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        let name = format!("w{i}");
        writeln!(consts, "    {name}: u8[{r}, {COLS}] @weights(\"{name}\");")?;
        tensors.push((name, r * COLS, i * 3 / gib.max(1)));
    }
    for (name, len) in [("s_three", 3u64), ("s_odd", 65)] {
        writeln!(consts, "    {name}: u8[{len}] @weights(\"{name}\");")?;
        tensors.push((name.to_string(), len, 2));
    }
    fs::write(
        dir.join("huge.webnn"),
        format!(
            "webnn_graph \"huge\" v1 {{\n  inputs {{ x: f32[1]; }}\n  consts {{\n{consts}  }}\n  nodes {{ y = relu(x); }}\n  outputs {{ y; }}\n}}\n"
        ),
    )?;
    let mut samples = String::new();
    let mut weight_map = serde_json::Map::new();
    let mut total = 0u64;
    for shard in 0..3 {
        let file_name = format!("huge-{:05}-of-00003.safetensors", shard + 1);
        let mine: Vec<(usize, &(String, u64, usize))> = tensors
            .iter()
            .enumerate()
            .filter(|(_, t)| t.2 == shard)
            .collect();
        let mut header = serde_json::Map::new();
        let mut at = 0u64;
        for (_, (name, len, _)) in &mine {
            let shape = if *len >= COLS {
                vec![len / COLS, COLS]
            } else {
                vec![*len]
            };
            header.insert(
                name.clone(),
                serde_json::json!({"dtype": "U8", "shape": shape, "data_offsets": [at, at + len]}),
            );
            weight_map.insert(name.clone(), file_name.clone().into());
            at += len;
        }
        total += at;
        let mut header = serde_json::Value::Object(header).to_string();
        while header.len() % 8 != 0 {
            header.push(' ');
        }
        let mut file = fs::File::create(dir.join(&file_name))?;
        file.write_all(&(header.len() as u64).to_le_bytes())?;
        file.write_all(header.as_bytes())?;
        let start = 8 + header.len() as u64;
        let mut at = start;
        for (i, (name, len, _)) in mine {
            let windows: Vec<u64> = if *len >= COLS {
                vec![0, len / 2, len - WINDOW]
            } else {
                vec![0]
            };
            for (w, off) in windows.into_iter().enumerate() {
                let n = WINDOW.min(*len) as usize;
                let bytes: Vec<u8> = (0..n).map(|k| mark_byte(i, w, k)).collect();
                file.seek(SeekFrom::Start(at + off))?;
                file.write_all(&bytes)?;
                writeln!(samples, "{name}\t{off}\t{n}\t{:016x}", fnv1a(&bytes))?;
            }
            at += len;
        }
        file.set_len(at)?;
    }
    let index = serde_json::json!({"metadata": {"total_size": total}, "weight_map": weight_map});
    fs::write(
        dir.join("huge.safetensors.index.json"),
        serde_json::to_string_pretty(&index)?,
    )?;
    fs::write(dir.join("samples.tsv"), samples)?;
    Ok(())
}

fn build(pkg: &Path, graph: &str, out: &Path) -> Result<()> {
    let compiled = match Builder::new(graph)
        .package_dir(pkg)
        .out_dir(out)
        .emit_directives(false)
        .compile()
    {
        Ok(compiled) => compiled,
        Err(err) => {
            println!("error={}", err.to_string().replace('\n', " "));
            return Ok(());
        }
    };
    let index_text = fs::read_to_string(compiled.artifact_dir().join("index.json"))?;
    let index: serde_json::Value = serde_json::from_str(&index_text)?;
    let data = &index["data"];
    println!("target={}", compiled.target());
    println!("embedding={:?}", compiled.embedding());
    if compiled.embedding() == Embedding::StaticLib {
        let file = data["file"].as_str().ok_or("index has no data.file")?;
        println!("library={}", compiled.artifact_dir().join(file).display());
        println!("library_dir={}", compiled.artifact_dir().display());
        println!("link_name={}", data["symbol"].as_str().ok_or("no symbol")?);
        if let Some(end) = data["endSymbol"].as_str() {
            println!("end_link_name={end}");
        }
        // The bytes the symbol spans: the data, then the constant table and the graph JSON.
        let linked = webnn_weights_artifacts::Index::from_json(&index_text)?
            .data
            .ok_or("index has no data")?;
        println!("linked_len={}", linked.linked_len());
        let script = compiled.artifact_dir().join("webnn_weights.ld");
        if script.is_file() {
            println!("linker_script={}", script.display());
        }
    }
    println!("data_len={}", compiled.data_len());

    // The reference: the run-time resolver's bytes for each constant.
    let graph_path = compiled.graph_path();
    let mut resolved = read_graph_file(graph_path)?;
    let big = compiled.data_len() > 1 << 30;
    let mut tsv = String::new();
    let mut header = String::from("struct webnn_constant { const char *name; unsigned long long offset, length, fnv; };\nstatic const struct webnn_constant CONSTANTS[] = {\n");
    // A model with its own reference (`sharded`): the marked windows, checked in place.
    let samples = graph_path.with_file_name("samples.tsv");
    if samples.is_file() {
        let offsets: HashMap<&str, u64> = compiled
            .constants()
            .iter()
            .map(|c| (c.name.as_str(), c.offset))
            .collect();
        for line in fs::read_to_string(&samples)?.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let [name, off, len, fnv] = f[..] else {
                return Err(format!("{}: bad line {line:?}", samples.display()).into());
            };
            let at = offsets
                .get(name)
                .ok_or_else(|| format!("no constant {name}"))?
                + off.parse::<u64>()?;
            writeln!(tsv, "{name}@{off}\t{at}\t{len}\t{fnv}")?;
            writeln!(
                header,
                "  {{ \"{name}@{off}\", {at}ull, {len}ull, 0x{fnv}ull }},"
            )?;
        }
    } else if !big {
        resolve_external_weights(&mut resolved, graph_path, None, None)?;
    }
    for c in compiled.constants() {
        if samples.is_file() {
            break;
        }
        // A 2 GiB constant is not resolved into memory: its hash covers its first 4 KiB.
        let (length, fnv) = if big {
            let mut file = fs::File::open(compiled.sidecar().ok_or("no sidecar")?)?;
            let mut prefix = vec![0u8; 4096];
            let mut len_bytes = [0u8; 8];
            std::io::Read::read_exact(&mut file, &mut len_bytes)?;
            file.seek(SeekFrom::Start(8 + u64::from_le_bytes(len_bytes)))?;
            std::io::Read::read_exact(&mut file, &mut prefix)?;
            (4096, fnv1a(&prefix))
        } else {
            let ConstInit::InlineBytes { bytes } = &resolved.consts[&c.name].init else {
                return Err(format!("constant {} did not resolve", c.name).into());
            };
            if bytes.len() as u64 != c.length {
                return Err(format!("constant {}: length differs", c.name).into());
            }
            (c.length, fnv1a(&bytes[..]))
        };
        writeln!(tsv, "{}\t{}\t{}\t{:016x}", c.name, c.offset, length, fnv)?;
        writeln!(
            header,
            "  {{ \"{}\", {}ull, {}ull, 0x{:016x}ull }},",
            c.name, c.offset, length, fnv
        )?;
    }
    header.push_str("};\n#define CONSTANT_COUNT (sizeof CONSTANTS / sizeof CONSTANTS[0])\n");
    writeln!(header, "#define DATA_LEN {}ull", compiled.data_len())?;
    fs::write(out.join("constants.tsv"), tsv)?;
    fs::write(out.join("constants.h"), header)?;
    Ok(())
}

/// A linked image's sections (name, address, bytes, alignment) and the address of the symbol
/// looked for, if its symbol or export table names it.
type Image<'a> = (
    Vec<(String, u64, &'a [u8], u64)>,
    Option<(u64, &'static str)>,
);

fn image<'a>(bytes: &'a [u8], symbol: &str) -> Result<Image<'a>> {
    match object::File::parse(bytes) {
        Ok(file) => {
            let mut sections = Vec::new();
            for s in file.sections() {
                sections.push((s.name()?.to_string(), s.address(), s.data()?, s.align()));
            }
            let found = match file.symbols().find(|s| s.name() == Ok(symbol)) {
                Some(s) => Some((s.address(), "symbol table")),
                // A PE export table this reader rejects leaves the `.webnn` section.
                None => file
                    .exports()
                    .unwrap_or_default()
                    .iter()
                    .find(|e| e.name() == symbol.as_bytes())
                    .map(|e| (e.address(), "export table")),
            };
            Ok((sections, found))
        }
        // object 0.37 rejects a segment without sections (every linked Mach-O's
        // __LINKEDIT): read the load commands directly.
        Err(err) if bytes.starts_with(&object::macho::MH_MAGIC_64.to_le_bytes()) => {
            use object::macho::MachHeader64;
            use object::read::macho::{MachHeader, Nlist, Section, Segment};
            let header = MachHeader64::<object::Endianness>::parse(bytes, 0)?;
            let endian = header.endian()?;
            let mut commands = header.load_commands(endian, bytes, 0)?;
            let (mut sections, mut found) = (Vec::new(), None);
            while let Some(command) = commands.next()? {
                if let Some((segment, section_data)) = command.segment_64()? {
                    if segment.nsects(endian) == 0 {
                        continue;
                    }
                    for s in segment.sections(endian, section_data)? {
                        let name = String::from_utf8_lossy(s.name()).into_owned();
                        let data = s.data(endian, bytes).unwrap_or(&[]);
                        sections.push((name, s.addr(endian), data, 1u64 << s.align(endian)));
                    }
                } else if let Some(symtab) = command.symtab()? {
                    let table =
                        symtab.symbols::<MachHeader64<object::Endianness>, _>(endian, bytes)?;
                    for nlist in table.iter() {
                        if nlist.name(endian, table.strings()) == Ok(symbol.as_bytes()) {
                            found = Some((nlist.n_value(endian), "symbol table (load commands)"));
                        }
                    }
                }
            }
            if sections.is_empty() {
                return Err(err.into());
            }
            Ok((sections, found))
        }
        Err(err) => Err(err.into()),
    }
}

/// A linked Mach-O file's offsets: every segment inside the file, every section inside its
/// segment where the segment maps it, `__LINKEDIT` ending the file, and every range it holds
/// (symbol and string tables, indirect symbols, dyld information, `linkedit_data` commands)
/// inside it. The 32-bit offsets of a file past 4 GiB point elsewhere (`ld64.lld` wrote
/// such a file for 6 GiB without an error).
fn check_macho_offsets(bytes: &[u8]) -> Result<()> {
    use object::macho::MachHeader64;
    use object::read::macho::{LoadCommandVariant, MachHeader, Section, Segment};
    let header = MachHeader64::<object::Endianness>::parse(bytes, 0)?;
    let endian = header.endian()?;
    let len = bytes.len() as u64;
    let within = |what: &str, off: u64, size: u64, (start, end): (u64, u64)| -> Result<()> {
        if size > 0 && (off < start || off.checked_add(size).is_none_or(|e| e > end)) {
            return Err(format!("{what}: bytes {off} + {size} outside {start}..{end}").into());
        }
        Ok(())
    };
    // Segments first: `__LINKEDIT`'s file range bounds what the other commands point at.
    let mut linkedit = None;
    let mut ranges = 0;
    let mut commands = header.load_commands(endian, bytes, 0)?;
    while let Some(command) = commands.next()? {
        if let LoadCommandVariant::Segment64(segment, section_data) = command.variant()? {
            let name = String::from_utf8_lossy(segment.name()).into_owned();
            let (fileoff, filesize) = segment.file_range(endian);
            within(&name, fileoff, filesize, (0, len))?;
            if name == "__LINKEDIT" {
                linkedit = Some((fileoff, fileoff + filesize));
            }
            let vmaddr = segment.vmaddr.get(endian);
            // (The reader rejects an empty section list: __LINKEDIT's.)
            let sections = match segment.nsects(endian) {
                0 => &[][..],
                _ => segment
                    .sections(endian, section_data)
                    .map_err(|e| format!("{name}: {e}"))?,
            };
            for s in sections {
                let sname = String::from_utf8_lossy(s.name()).into_owned();
                if s.flags(endian) & object::macho::SECTION_TYPE == object::macho::S_ZEROFILL {
                    continue;
                }
                let offset = u64::from(s.offset(endian));
                let seg = (fileoff, fileoff + filesize);
                within(&format!("{name},{sname}"), offset, s.size(endian), seg)?;
                let mapped = fileoff + (s.addr(endian) - vmaddr);
                if offset != mapped {
                    return Err(format!(
                        "{name},{sname}: file offset {offset}, its segment maps it from {mapped}"
                    )
                    .into());
                }
                ranges += 1;
            }
        }
    }
    let le = linkedit.ok_or("no __LINKEDIT segment")?;
    if le.1 != len {
        return Err(format!("__LINKEDIT ends at {}, the file at {len}", le.1).into());
    }
    let mut commands = header.load_commands(endian, bytes, 0)?;
    while let Some(command) = commands.next()? {
        let mut checked: Vec<(&str, u32, u64)> = Vec::new();
        match command.variant()? {
            LoadCommandVariant::Symtab(c) => {
                let nsyms = u64::from(c.nsyms.get(endian)) * 16;
                checked.push(("symbols", c.symoff.get(endian), nsyms));
                checked.push((
                    "strings",
                    c.stroff.get(endian),
                    c.strsize.get(endian).into(),
                ));
            }
            LoadCommandVariant::Dysymtab(c) => {
                let n = u64::from(c.nindirectsyms.get(endian)) * 4;
                checked.push(("indirect symbols", c.indirectsymoff.get(endian), n));
            }
            LoadCommandVariant::DyldInfo(c) => {
                for (what, off, size) in [
                    ("rebase", c.rebase_off, c.rebase_size),
                    ("bind", c.bind_off, c.bind_size),
                    ("weak bind", c.weak_bind_off, c.weak_bind_size),
                    ("lazy bind", c.lazy_bind_off, c.lazy_bind_size),
                    ("export", c.export_off, c.export_size),
                ] {
                    checked.push((what, off.get(endian), size.get(endian).into()));
                }
            }
            LoadCommandVariant::LinkeditData(c) => {
                checked.push((
                    "linkedit data",
                    c.dataoff.get(endian),
                    c.datasize.get(endian).into(),
                ));
            }
            _ => {}
        }
        for (what, off, size) in checked {
            within(what, off.into(), size, le)?;
            ranges += 1;
        }
    }
    println!(
        "  Mach-O offsets: {ranges} ranges where they belong (sections in their segments, \
         tables in __LINKEDIT, which ends the {len}-byte file)"
    );
    Ok(())
}

/// Finds `symbol` (or, in a PE image without symbols or exports, the `.webnn` section our
/// object alone contributes) and checks every constant's alignment and bytes, and, given
/// `end` (the end symbol and the linked length), that the end symbol is that many bytes
/// after `symbol`.
fn check(path: &Path, symbol: &str, tsv: &Path, end: Option<(&str, u64)>) -> Result<bool> {
    let bytes = fs::read(path)?;
    if bytes.starts_with(&object::macho::MH_MAGIC_64.to_le_bytes()) {
        check_macho_offsets(&bytes)?;
    }
    let (sections, found) = image(&bytes, symbol)?;
    let (address, how) = match found {
        Some(found) => found,
        None => sections
            .iter()
            .find(|s| s.0 == ".webnn")
            .map(|s| (s.1, ".webnn section"))
            .ok_or_else(|| format!("{}: no symbol {symbol}, no .webnn", path.display()))?,
    };
    let (name, start, data, align) = sections
        .iter()
        .find(|s| s.1 <= address && address < s.1 + (s.2.len() as u64).max(1))
        .ok_or("no section holds the symbol")?;
    let base = (address - start) as usize;
    let mut ok = address % 64 == 0;
    println!(
        "  {}: {symbol} at {address:#x} ({how}), section {name} align {align}, address % 64 = {}",
        path.display(),
        address % 64
    );
    // Where the reader found no table naming the data symbol (an x86-64 PE export table it
    // rejects), none names the end symbol either: running the program checked it.
    let end = end.filter(|(end_symbol, _)| {
        let readable = how != ".webnn section";
        if !readable {
            println!("    {end_symbol}: no symbol or export table this reader accepts");
        }
        readable
    });
    if let Some((end_symbol, linked_len)) = end {
        let (_, found) = image(&bytes, end_symbol)?;
        let (end_at, how) =
            found.ok_or_else(|| format!("{}: no symbol {end_symbol}", path.display()))?;
        let good = end_at == address + linked_len;
        ok &= good;
        println!(
            "    {end_symbol} at {end_at:#x} ({how}): {}",
            if good {
                format!("right after the {linked_len} linked bytes")
            } else {
                format!(
                    "MISMATCH: the {linked_len} linked bytes end at {:#x}",
                    address + linked_len
                )
            }
        );
    }
    for line in fs::read_to_string(tsv)?.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (offset, length): (usize, usize) = (f[1].parse()?, f[2].parse()?);
        let expected = u64::from_str_radix(f[3], 16)?;
        let at = base + offset;
        let found = data.get(at..at + length).map(fnv1a);
        let good = found == Some(expected) && (address + offset as u64) % 64 == 0;
        ok &= good;
        println!(
            "    {:<8} offset {offset:>5} length {length:>5}: {}",
            f[0],
            if good {
                "bytes equal, 64-byte aligned"
            } else {
                "MISMATCH"
            }
        );
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["model", dir] => model(Path::new(dir)).map(|_| true),
        ["big", dir] => big(Path::new(dir)).map(|_| true),
        ["sharded", dir, gib] => gib
            .parse()
            .map_err(|e| format!("GIB: {e}").into())
            .and_then(|gib| sharded(Path::new(dir), gib))
            .map(|_| true),
        ["build", pkg, graph, out] => build(Path::new(pkg), graph, Path::new(out)).map(|_| true),
        ["check", image, symbol, tsv] => check(Path::new(image), symbol, Path::new(tsv), None),
        ["check", image, symbol, tsv, end, len] => len
            .parse()
            .map_err(|e| format!("LINKED_LEN: {e}").into())
            .and_then(|len| check(Path::new(image), symbol, Path::new(tsv), Some((end, len)))),
        _ => Err(
            "usage: for_target model DIR | big DIR | sharded DIR GIB | build PKG GRAPH OUT | check IMAGE SYMBOL TSV [END_SYMBOL LINKED_LEN]"
                .into(),
        ),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("for_target: {err}");
            ExitCode::FAILURE
        }
    }
}
