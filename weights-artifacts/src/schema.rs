//! The fields of `index.json`: an [`Index`] as a JSON [`Value`] (keys in the order the
//! file has always had them), and back, with every key checked: its name, its type, no key
//! missing that the schema needs and no key it does not know.
//!
//! An optional field is `null` when absent, except the ones added after the first version
//! (`data.endSymbol`, `data.table`, `data.graph`, `runtime.lock`), which are left out.

use crate::json::Value;
use crate::{DataRange, Index, IndexData, IndexRuntime, Mode};

/// `index` as the value `index.json` holds.
pub(crate) fn to_value(index: &Index) -> Value {
    object(vec![
        ("format", string(&index.format)),
        ("version", number(u64::from(index.version))),
        ("graph", string(&index.graph)),
        ("mode", string(index.mode.as_str())),
        ("graphJson", opt_string(&index.graph_json)),
        ("data", index.data.as_ref().map_or(Value::Null, data_value)),
        ("table", opt_string(&index.table)),
        ("constantCount", number(index.constant_count)),
        (
            "runtime",
            index.runtime.as_ref().map_or(Value::Null, runtime_value),
        ),
        ("sidecar", opt_string(&index.sidecar)),
        ("manifest", opt_string(&index.manifest)),
    ])
}

fn data_value(data: &IndexData) -> Value {
    let mut fields = vec![
        ("file", string(&data.file)),
        ("symbol", opt_string(&data.symbol)),
    ];
    if let Some(end_symbol) = &data.end_symbol {
        fields.push(("endSymbol", string(end_symbol)));
    }
    fields.push(("length", number(data.length)));
    for (key, range) in [("table", data.table), ("graph", data.graph)] {
        if let Some(range) = range {
            let range = vec![
                ("offset", number(range.offset)),
                ("length", number(range.length)),
            ];
            fields.push((key, object(range)));
        }
    }
    object(fields)
}

fn runtime_value(runtime: &IndexRuntime) -> Value {
    let mut fields = vec![
        ("graphPath", string(&runtime.graph_path)),
        ("weights", opt_string(&runtime.weights)),
        ("manifest", opt_string(&runtime.manifest)),
    ];
    if let Some(lock) = &runtime.lock {
        fields.push(("lock", string(lock)));
    }
    object(fields)
}

fn object(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn string(s: &str) -> Value {
    Value::String(s.to_string())
}

fn opt_string(s: &Option<String>) -> Value {
    s.as_deref().map_or(Value::Null, string)
}

fn number(n: u64) -> Value {
    Value::Number(n.to_string())
}

/// The index `value` holds; the error names the key (as `data.length`) and says what was
/// expected there.
pub(crate) fn from_value(value: &Value) -> Result<Index, String> {
    let mut fields = Fields::of(String::new(), value)?;
    let version_value = fields.required("version")?;
    let version = version_value
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| fields.expected("version", "an unsigned 32-bit integer", version_value))?;
    let index = Index {
        format: fields.string("format")?,
        version,
        graph: fields.string("graph")?,
        mode: fields.mode()?,
        graph_json: fields.opt_string("graphJson")?,
        data: match fields.opt_object("data")? {
            Some(data) => Some(data_from(data)?),
            None => None,
        },
        table: fields.opt_string("table")?,
        constant_count: fields.u64("constantCount")?,
        runtime: match fields.opt_object("runtime")? {
            Some(runtime) => Some(runtime_from(runtime)?),
            None => None,
        },
        sidecar: fields.opt_string("sidecar")?,
        manifest: fields.opt_string("manifest")?,
    };
    fields.finish()?;
    Ok(index)
}

fn data_from(mut fields: Fields<'_>) -> Result<IndexData, String> {
    let data = IndexData {
        file: fields.string("file")?,
        symbol: fields.opt_string("symbol")?,
        end_symbol: fields.opt_string("endSymbol")?,
        length: fields.u64("length")?,
        table: fields.opt_range("table")?,
        graph: fields.opt_range("graph")?,
    };
    fields.finish()?;
    Ok(data)
}

fn runtime_from(mut fields: Fields<'_>) -> Result<IndexRuntime, String> {
    let runtime = IndexRuntime {
        graph_path: fields.string("graphPath")?,
        weights: fields.opt_string("weights")?,
        manifest: fields.opt_string("manifest")?,
        lock: fields.opt_string("lock")?,
    };
    fields.finish()?;
    Ok(runtime)
}

/// The members of one object of the index, each taken at most once; `finish` rejects the
/// ones nobody took.
struct Fields<'a> {
    /// The keys' path from the top (`""`, `"data."`, `"data.table."`).
    prefix: String,
    entries: &'a [(String, Value)],
    taken: Vec<bool>,
}

impl<'a> Fields<'a> {
    /// The members of `value`, which must be an object (`prefix` names it in errors).
    fn of(prefix: String, value: &'a Value) -> Result<Fields<'a>, String> {
        let Value::Object(entries) = value else {
            let what = match prefix.strip_suffix('.') {
                Some(name) => format!("`{name}`"),
                None => "the index".to_string(),
            };
            return Err(format!(
                "{what}: expected an object, found {}",
                value.compact()
            ));
        };
        Ok(Fields {
            prefix,
            entries,
            taken: vec![false; entries.len()],
        })
    }

    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn expected(&self, key: &str, what: &str, found: &Value) -> String {
        format!(
            "`{}`: expected {what}, found {}",
            self.name(key),
            found.compact()
        )
    }

    /// The value of `key`, if the object has it (`null` included).
    fn take(&mut self, key: &str) -> Option<&'a Value> {
        let entries = self.entries;
        let i = entries.iter().position(|(k, _)| k == key)?;
        self.taken[i] = true;
        Some(&entries[i].1)
    }

    fn required(&mut self, key: &str) -> Result<&'a Value, String> {
        self.take(key)
            .ok_or_else(|| format!("missing key `{}`", self.name(key)))
    }

    /// The value of `key` unless it is absent or `null`.
    fn optional(&mut self, key: &str) -> Option<&'a Value> {
        self.take(key).filter(|value| **value != Value::Null)
    }

    fn string(&mut self, key: &str) -> Result<String, String> {
        let value = self.required(key)?;
        self.as_string(key, value)
    }

    fn opt_string(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.optional(key) {
            Some(value) => self.as_string(key, value).map(Some),
            None => Ok(None),
        }
    }

    fn as_string(&self, key: &str, value: &Value) -> Result<String, String> {
        match value.as_str() {
            Some(s) => Ok(s.to_string()),
            None => Err(self.expected(key, "a string", value)),
        }
    }

    fn u64(&mut self, key: &str) -> Result<u64, String> {
        let value = self.required(key)?;
        value
            .as_u64()
            .ok_or_else(|| self.expected(key, "an unsigned 64-bit integer", value))
    }

    fn mode(&mut self) -> Result<Mode, String> {
        let value = self.required("mode")?;
        value.as_str().and_then(Mode::from_name).ok_or_else(|| {
            self.expected(
                "mode",
                "\"static-lib\", \"include-bytes\" or \"runtime\"",
                value,
            )
        })
    }

    fn opt_object(&mut self, key: &str) -> Result<Option<Fields<'a>>, String> {
        match self.optional(key) {
            Some(value) => Fields::of(format!("{}.", self.name(key)), value).map(Some),
            None => Ok(None),
        }
    }

    fn opt_range(&mut self, key: &str) -> Result<Option<DataRange>, String> {
        let Some(mut fields) = self.opt_object(key)? else {
            return Ok(None);
        };
        let range = DataRange {
            offset: fields.u64("offset")?,
            length: fields.u64("length")?,
        };
        fields.finish()?;
        Ok(Some(range))
    }

    /// Every member was taken: the first one that was not is an unknown key.
    fn finish(self) -> Result<(), String> {
        match self.taken.iter().position(|taken| !taken) {
            Some(i) => Err(format!("unknown key `{}`", self.name(&self.entries[i].0))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{IndexError, TABLE_FILE};

    // What the serde_json writer of earlier versions wrote for these indexes, byte for
    // byte: the hand-written writer must keep them (the build script's stamp is their hash).
    const LINKED: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "models/model.webnn",
  "mode": "static-lib",
  "graphJson": null,
  "data": {
    "file": "libwebnn_weights_model_0123456789abcdef.a",
    "symbol": "webnn_weights_data_00",
    "endSymbol": "webnn_weights_data_00_end",
    "length": 128,
    "table": {
      "offset": 128,
      "length": 100
    },
    "graph": {
      "offset": 256,
      "length": 30
    }
  },
  "table": null,
  "constantCount": 2,
  "runtime": null,
  "sidecar": "C:\\w\\m\"x\u0001é\n\t/",
  "manifest": null
}
"#;

    const RUNTIME: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "m.webnn",
  "mode": "runtime",
  "graphJson": "graph.json",
  "data": null,
  "table": null,
  "constantCount": 0,
  "runtime": {
    "graphPath": "/pkg/m.webnn",
    "weights": "/w",
    "manifest": null,
    "lock": "/l"
  },
  "sidecar": null,
  "manifest": "man"
}
"#;

    const RUNTIME_BARE: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "",
  "mode": "runtime",
  "graphJson": "graph.json",
  "data": null,
  "table": null,
  "constantCount": 0,
  "runtime": {
    "graphPath": "/g",
    "weights": null,
    "manifest": null
  },
  "sidecar": null,
  "manifest": null
}
"#;

    const INCLUDE_BYTES: &str = r#"{
  "format": "webnn-weights-artifacts",
  "version": 5,
  "graph": "",
  "mode": "include-bytes",
  "graphJson": "graph.json",
  "data": {
    "file": "data.bin",
    "symbol": null,
    "length": 64
  },
  "table": "constants.bin",
  "constantCount": 1,
  "runtime": null,
  "sidecar": null,
  "manifest": null
}
"#;

    fn samples() -> [(Index, &'static str); 4] {
        let linked = Index {
            sidecar: Some("C:\\w\\m\"x\u{1}\u{7f}é\n\t/".into()),
            ..crate::tests::sample()
        };
        let runtime = Index {
            graph: "m.webnn".into(),
            runtime: Some(IndexRuntime {
                graph_path: "/pkg/m.webnn".into(),
                weights: Some("/w".into()),
                manifest: None,
                lock: Some("/l".into()),
            }),
            manifest: Some("man".into()),
            ..Index::new(Mode::Runtime)
        };
        let runtime_bare = Index {
            runtime: Some(IndexRuntime {
                graph_path: "/g".into(),
                weights: None,
                manifest: None,
                lock: None,
            }),
            ..Index::new(Mode::Runtime)
        };
        let include_bytes = Index {
            data: Some(IndexData {
                file: "data.bin".into(),
                length: 64,
                ..IndexData::default()
            }),
            table: Some(TABLE_FILE.into()),
            constant_count: 1,
            ..Index::new(Mode::IncludeBytes)
        };
        [
            (linked, LINKED),
            (runtime, RUNTIME),
            (runtime_bare, RUNTIME_BARE),
            (include_bytes, INCLUDE_BYTES),
        ]
    }

    #[test]
    fn writes_the_earlier_bytes_and_reads_them_back() {
        for (index, text) in samples() {
            assert_eq!(String::from_utf8(index.to_json()).unwrap(), text);
            assert_eq!(Index::from_json(text).unwrap(), index);
            // Compact and in another order: the same index.
            let Ok(Value::Object(mut entries)) = crate::json::parse(text) else {
                panic!("an index is an object")
            };
            entries.reverse();
            let compact = Value::Object(entries).compact();
            assert_eq!(Index::from_json(&compact).unwrap(), index, "{compact}");
        }
        // `null` for a field the writer leaves out: the same index.
        let with_nulls = RUNTIME_BARE.replace(
            "\"manifest\": null\n  },",
            "\"manifest\": null,\n    \"lock\": null\n  },",
        );
        assert_ne!(with_nulls, RUNTIME_BARE);
        assert_eq!(Index::from_json(&with_nulls).unwrap(), samples()[2].0);
    }

    fn schema_error(text: &str) -> String {
        match Index::from_json(text) {
            Err(IndexError::Schema(message)) => message,
            other => panic!("{other:?} for {text}"),
        }
    }

    #[test]
    fn every_schema_error_names_the_key() {
        let modes = "\"static-lib\", \"include-bytes\" or \"runtime\"";
        let cases = [
            (
                LINKED.replace("  \"graph\": \"models/model.webnn\",\n", ""),
                "missing key `graph`".to_string(),
            ),
            (
                LINKED.replace("\"models/model.webnn\"", "1"),
                "`graph`: expected a string, found 1".into(),
            ),
            (
                LINKED.replace("\"static-lib\"", "\"teleport\""),
                format!("`mode`: expected {modes}, found \"teleport\""),
            ),
            (
                LINKED.replace("\"static-lib\"", "null"),
                format!("`mode`: expected {modes}, found null"),
            ),
            (
                LINKED.replace("\"graphJson\": null", "\"graphJson\": false"),
                "`graphJson`: expected a string, found false".into(),
            ),
            (
                LINKED.replace("\"constantCount\": 2", "\"constantCount\": -2"),
                "`constantCount`: expected an unsigned 64-bit integer, found -2".into(),
            ),
            (
                LINKED.replace("\"constantCount\": 2", "\"constantCount\": 2.5"),
                "`constantCount`: expected an unsigned 64-bit integer, found 2.5".into(),
            ),
            (
                LINKED.replace("  \"constantCount\": 2,\n", ""),
                "missing key `constantCount`".into(),
            ),
            (
                LINKED.replace("\"manifest\": null", "\"manifest\": null, \"extra\": {}"),
                "unknown key `extra`".into(),
            ),
            (
                RUNTIME.replace("\"data\": null", "\"data\": []"),
                "`data`: expected an object, found []".into(),
            ),
            (
                LINKED.replace("\"length\": 128", "\"length\": \"128\""),
                "`data.length`: expected an unsigned 64-bit integer, found \"128\"".into(),
            ),
            (
                LINKED.replace("\"symbol\": \"webnn_weights_data_00\"", "\"symbol\": [1]"),
                "`data.symbol`: expected a string, found [1]".into(),
            ),
            (
                LINKED.replace(
                    "\"offset\": 128,\n      \"length\": 100\n",
                    "\"offset\": 128\n",
                ),
                "missing key `data.table.length`".into(),
            ),
            (
                LINKED.replace("\"length\": 30\n", "\"length\": 30, \"size\": 30\n"),
                "unknown key `data.graph.size`".into(),
            ),
            (
                LINKED.replace("\"table\": {", "\"table\": 7, \"x\": {"),
                "`data.table`: expected an object, found 7".into(),
            ),
            (
                LINKED.replace("\"endSymbol\"", "\"end_symbol\""),
                "unknown key `data.end_symbol`".into(),
            ),
            (
                RUNTIME.replace("\"graphPath\": \"/pkg/m.webnn\",\n", ""),
                "missing key `runtime.graphPath`".into(),
            ),
            (
                RUNTIME.replace("\"lock\": \"/l\"", "\"lock\": 3"),
                "`runtime.lock`: expected a string, found 3".into(),
            ),
        ];
        for (text, message) in cases {
            assert_eq!(schema_error(&text), message, "{text}");
        }
        // Not reachable through `Index::from_json`, which checks format and version first.
        assert_eq!(
            from_value(&Value::Null).unwrap_err(),
            "the index: expected an object, found null"
        );
        let too_big = LINKED.replace("\"version\": 5", "\"version\": 4294967296");
        assert_eq!(
            from_value(&crate::json::parse(&too_big).unwrap()).unwrap_err(),
            "`version`: expected an unsigned 32-bit integer, found 4294967296"
        );
    }

    #[test]
    fn malformed_json_format_and_version() {
        for text in ["", "{", "{\"format\": }", "[1] [2]", "{\"a\": 01}"] {
            assert!(
                matches!(Index::from_json(text), Err(IndexError::Json(_))),
                "{text:?}"
            );
        }
        let repeated = LINKED.replace(
            "\"graph\": \"models/model.webnn\"",
            "\"graph\": \"a\", \"graph\": \"b\"",
        );
        assert_eq!(
            Index::from_json(&repeated).unwrap_err().to_string(),
            "is not valid JSON (key \"graph\" is repeated, found '\"' at line 4 column 17)"
        );
        assert_eq!(Index::from_json("[1]").unwrap_err(), IndexError::NotAnIndex);
        assert_eq!(
            Index::from_json("{\"format\": 1}").unwrap_err(),
            IndexError::NotAnIndex
        );
        for version in ["4.0", "\"4\"", "[4]", "-4"] {
            let text = LINKED.replace("\"version\": 5", &format!("\"version\": {version}"));
            assert_eq!(
                Index::from_json(&text).unwrap_err(),
                IndexError::Version {
                    found: version.into()
                }
            );
        }
    }
}
