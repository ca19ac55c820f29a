//! The WGWT blob tools' readers: arbitrary manifest JSON and blob bytes (after a byte
//! choosing the graph and a u16 manifest length) through the v1 manifest rules,
//! `inspect_blob`, `unpack_weights`, `inline_weights` and `to_safetensors`. Each either
//! fails cleanly or produces exactly the bytes the manifest addresses; an inlined graph
//! and a converted archive agree with each other.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use webnn_weights_fuzz::{blob_graphs, put, scratch, split3};
use webnn_weights_tools::weight_tools::{
    inline_weights, inspect_blob, to_safetensors, unpack_weights, BlobLayout, ManifestV1,
    NoProgress, TensorMeta, WGWT_HEADER_LEN,
};
use webnn_weights_runtime::manifest::Manifest;
use webnn_weights_runtime::{resolve_external_weights, ConstInit, GraphJson};

fn slice(blob: &[u8], offset: u64, length: u64) -> &[u8] {
    let start = usize::try_from(offset).expect("offset within the blob");
    &blob[start..start + usize::try_from(length).expect("length within the blob")]
}

fn inline_bytes(graph: &GraphJson) -> BTreeMap<String, Vec<u8>> {
    graph
        .consts
        .iter()
        .filter_map(|(name, decl)| match &decl.init {
            ConstInit::InlineBytes { bytes } => Some((name.clone(), bytes.to_vec())),
            _ => None,
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((selector, manifest_bytes, blob)) = split3(data) else {
        return;
    };
    let _ = TensorMeta::parse(manifest_bytes, "m.meta.json".as_ref());
    if let Some(head) = blob.first_chunk::<8>() {
        let _ = BlobLayout::classify(head);
    }
    let weights = put("model.weights", blob);
    let manifest_path = put("model.manifest.json", manifest_bytes);

    if let Ok(manifest) = Manifest::parse(manifest_bytes, &manifest_path) {
        if let Ok(v1) = ManifestV1::from_manifest(&manifest, &manifest_path) {
            let _ = v1.check_contiguous(WGWT_HEADER_LEN, &manifest_path);
            let json = v1.to_json().expect("v1 manifest serializes");
            let again = Manifest::parse(json.as_bytes(), &manifest_path).expect("reparses");
            let again = ManifestV1::from_manifest(&again, &manifest_path).expect("still v1");
            assert_eq!(again, v1);
        }
    }

    if let Ok(report) = inspect_blob(&weights, &manifest_path) {
        assert_eq!(report.file_len, blob.len() as u64);
        for t in &report.tensors {
            assert!(t
                .offset
                .checked_add(t.length)
                .is_some_and(|e| e <= report.file_len));
        }
    }

    let out = scratch().join("unpacked");
    let _ = std::fs::remove_dir_all(&out);
    if unpack_weights(&weights, &manifest_path, &out, &mut NoProgress).is_ok() {
        let manifest = Manifest::parse(manifest_bytes, &manifest_path).expect("unpack parsed it");
        for e in &manifest.tensors {
            let file = std::fs::read(out.join(format!("{}.bin", e.name))).expect("unpacked");
            // Each unpacked file holds exactly its range.
            assert_eq!(
                file,
                slice(blob, e.byte_offset, e.byte_length),
                "{}",
                e.name
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);

    let graphs = blob_graphs();
    let graph = &graphs[usize::from(selector) % graphs.len()];
    let graph_path = scratch().join("model.webnn");
    let Ok(inlined) = inline_weights(
        graph,
        &graph_path,
        &weights,
        &manifest_path,
        &mut NoProgress,
    ) else {
        return;
    };
    for (name, decl) in &inlined.consts {
        if let ConstInit::InlineBytes { bytes } = &decl.init {
            assert_eq!(Some(bytes.len() as u64), decl.byte_length(), "{name}");
        }
        assert!(
            !matches!(decl.init, ConstInit::Weights { .. }),
            "{name} left external"
        );
    }
    let conversion = to_safetensors(
        graph,
        &graph_path,
        Some(&weights),
        Some(&manifest_path),
        &mut NoProgress,
    )
    .expect("what inlines converts");
    let archive = scratch().join("converted.safetensors");
    conversion
        .write(&archive)
        .expect("converted archive writes");
    let mut back = conversion.graph.clone();
    resolve_external_weights(&mut back, &graph_path, Some(&archive), None)
        .expect("converted archive resolves");
    assert_eq!(inline_bytes(&back), inline_bytes(&inlined));
});
