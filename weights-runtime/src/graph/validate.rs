//! Structural checks of a [`GraphJson`], reporting every problem at once.

use crate::graph::{ConstDecl, ConstInit, GraphJson, Node, GRAPH_JSON_FORMAT};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fmt;

/// Operand names to what they are; foldhash, as the names are many and short.
type NameMap<'g, V> = HashMap<&'g str, V, foldhash::fast::RandomState>;

/// Every problem [`GraphJson::validate`] found, in graph order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    problems: Vec<String>,
}

impl ValidationError {
    /// The problems, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for ValidationError {
    /// One problem per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str(problem)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationError {}

#[derive(Clone, Copy)]
enum Definition {
    Input,
    Const,
    Node(usize),
}

impl fmt::Display for Definition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Definition::Input => f.write_str("an input"),
            Definition::Const => f.write_str("a constant"),
            Definition::Node(i) => write!(f, "an output of node {i}"),
        }
    }
}

impl GraphJson {
    /// Checks the structure of the graph: `format` is `"webnn-graph-json"`, `version` is 1 or 2,
    /// names are unique across inputs, constants and node outputs, every node input is
    /// defined before the node (an input, a constant or an output of an earlier node), every
    /// graph output names a defined operand, multi-output nodes have their first output as
    /// `id`, inline bytes have exactly the declared length (packed rule for 4-bit types) and
    /// scalar values are numbers. (Constant shapes are static by construction.)
    ///
    /// Every problem is reported, not only the first.
    ///
    /// ```
    /// let g = webnn_weights_runtime::parse_webnn(
    ///     "webnn_graph \"g\" v2 { consts { m: u4[3] @bytes([1]); } nodes { y = relu(x); } outputs { y; z; } }",
    /// ).unwrap();
    /// let err = g.validate().unwrap_err();
    /// assert_eq!(err.problems().len(), 3);
    /// assert_eq!(err.problems()[0], "constant `m` (uint4[3]) has 1 inline bytes, expected 2");
    /// ```
    pub fn validate(&self) -> Result<(), ValidationError> {
        let mut check = Checker::new(self);
        check.format_and_version();
        check.inputs_and_consts();
        for (index, node) in self.nodes.iter().enumerate() {
            check.node(index, node);
        }
        check.outputs();
        if check.problems.is_empty() {
            Ok(())
        } else {
            Err(ValidationError {
                problems: check.problems,
            })
        }
    }
}

/// The state of one [`GraphJson::validate`] run: the names defined so far and the problems
/// found so far, in graph order.
struct Checker<'g> {
    graph: &'g GraphJson,
    defined: NameMap<'g, Definition>,
    /// Where every node output is produced, to tell "defined later" from "never defined";
    /// built only when an input is undefined.
    producers: Option<NameMap<'g, usize>>,
    /// How many undefined names were given a "did you mean" search so far.
    suggested: usize,
    problems: Vec<String>,
}

/// How many undefined names get a "did you mean" search ([`Checker::did_you_mean`]).
const SUGGESTED: usize = 20;

impl<'g> Checker<'g> {
    fn new(graph: &'g GraphJson) -> Checker<'g> {
        Checker {
            graph,
            defined: HashMap::with_capacity_and_hasher(
                graph.inputs.len() + graph.consts.len() + graph.nodes.len(),
                foldhash::fast::RandomState::default(),
            ),
            producers: None,
            suggested: 0,
            problems: Vec::new(),
        }
    }

    fn format_and_version(&mut self) {
        let graph = self.graph;
        if graph.format != GRAPH_JSON_FORMAT {
            self.problems.push(format!(
                "format is {:?}, expected {GRAPH_JSON_FORMAT:?}",
                graph.format
            ));
        }
        if graph.version != 1 && graph.version != 2 {
            self.problems
                .push(format!("version is {}, expected 1 or 2", graph.version));
        }
    }

    /// Defines the inputs, then the constants (a constant named like an input is a problem),
    /// checking each constant's initializer.
    fn inputs_and_consts(&mut self) {
        let graph = self.graph;
        for name in graph.inputs.keys() {
            self.defined.insert(name, Definition::Input);
        }
        for (name, decl) in &graph.consts {
            if graph.inputs.contains_key(name) {
                self.problems
                    .push(format!("constant `{name}` has the same name as an input"));
            } else {
                self.defined.insert(name, Definition::Const);
            }
            if let Some(problem) = const_init_problem(name, decl) {
                self.problems.push(problem);
            }
        }
    }

    /// Node `index`: its inputs defined before it, its `outputs` list well formed, then its
    /// outputs defined (each name once).
    fn node(&mut self, index: usize, node: &'g Node) {
        let what = || format!("node {index} (`{}` = {})", node.id, node.op);
        for input in &node.inputs {
            if !self.defined.contains_key(input.as_str()) {
                self.undefined_input(index, &what(), input);
            }
        }
        if let Some(outputs) = &node.outputs {
            match outputs.first() {
                None => self
                    .problems
                    .push(format!("{}: `outputs` is an empty list", what())),
                Some(first) if *first != node.id => self.problems.push(format!(
                    "{}: id `{}` is not its first output `{first}`",
                    what(),
                    node.id
                )),
                Some(_) => {}
            }
        }
        for name in node.produced() {
            match self.defined.entry(name.as_str()) {
                Entry::Occupied(first) => {
                    self.problems.push(format!(
                        "{}: output `{name}` is already {}",
                        what(),
                        first.get()
                    ));
                }
                Entry::Vacant(slot) => {
                    slot.insert(Definition::Node(index));
                }
            }
        }
    }

    /// Reports `input` of node `index` (described as `what`): used before the node that
    /// defines it, or never defined.
    fn undefined_input(&mut self, index: usize, what: &str, input: &str) {
        let graph = self.graph;
        let producers = self.producers.get_or_insert_with(|| {
            let mut map: NameMap<'_, usize> = HashMap::default();
            for (index, node) in graph.nodes.iter().enumerate() {
                for name in node.produced() {
                    map.entry(name).or_insert(index);
                }
            }
            map
        });
        match producers.get(input) {
            Some(&later) if later >= index => self.problems.push(format!(
                "{what}: input `{input}` is used before it is defined (by node {later})"
            )),
            _ => {
                let hint = self.did_you_mean(input);
                self.problems
                    .push(format!("{what}: input `{input}` is not defined{hint}"));
            }
        }
    }

    /// Every graph output names a defined operand.
    fn outputs(&mut self) {
        for (binding, operand) in &self.graph.outputs {
            if !self.defined.contains_key(operand.as_str()) {
                let hint = self.did_you_mean(operand);
                self.problems.push(format!(
                    "output `{binding}` names operand `{operand}`, which is not defined{hint}"
                ));
            }
        }
    }

    /// `; did you mean `NAME`?` when a name defined so far (an input, a constant, an output
    /// of an earlier node) is close to the undefined `name` (the resolver's nearest-name
    /// rule, `graph::near`), else nothing. Only for the first [`SUGGESTED`] undefined names,
    /// as each one measures every defined name; without the feature `load` (no strsim),
    /// never.
    fn did_you_mean(&mut self, name: &str) -> String {
        if self.suggested == SUGGESTED {
            return String::new();
        }
        self.suggested += 1;
        #[cfg(feature = "load")]
        if let Some(near) = super::near::suggestion(self.defined.keys().copied(), name) {
            return format!("; did you mean `{near}`?");
        }
        let _ = name;
        String::new()
    }
}

/// What is wrong with the initializer of constant `name`: inline bytes of another length
/// than its type and shape take, or a scalar that is no number.
fn const_init_problem(name: &str, decl: &ConstDecl) -> Option<String> {
    // Described only when there is a problem to report.
    let what = || {
        let shape = decl
            .shape
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        format!("constant `{name}` ({}[{shape}])", decl.data_type)
    };
    match &decl.init {
        ConstInit::InlineBytes { bytes } => match decl.byte_length() {
            Some(expected) if expected == bytes.len() as u64 => None,
            Some(expected) => Some(format!(
                "{} has {} inline bytes, expected {expected}",
                what(),
                bytes.len()
            )),
            None => Some(format!("{} has a byte length that overflows u64", what())),
        },
        ConstInit::Scalar { value } if !value.is_number() => Some(format!(
            "{} has scalar value {value}, expected a number",
            what()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{ConstDecl, Node, OperandDesc};
    use crate::DataType;

    fn node(id: &str, op: &str, inputs: &[&str], outputs: Option<&[&str]>) -> Node {
        Node {
            id: id.into(),
            op: op.into(),
            inputs: inputs.iter().map(|&s| s.into()).collect(),
            options: Default::default(),
            outputs: outputs.map(|o| o.iter().map(|&s| s.into()).collect()),
        }
    }

    #[test]
    fn valid_graph_passes() {
        let g = crate::parse_webnn(
            "webnn_graph \"g\" v2 { inputs { x: f32[2]; } consts { w: i4[3] @bytes([1, 2]); s: f32[] @scalar(1); }
             nodes { [a, b] = split(x, w); y = add(a, b, s); } outputs { y; x; } }",
        )
        .unwrap();
        assert_eq!(g.validate(), Ok(()));
    }

    #[test]
    fn reports_every_problem() {
        let mut g = GraphJson::new(Some("g".into()));
        g.format = "other".into();
        g.version = 7;
        let desc = OperandDesc {
            data_type: DataType::Float32,
            shape: vec![],
        };
        g.inputs.insert("x".into(), desc);
        g.consts.insert(
            "x".into(),
            ConstDecl {
                data_type: DataType::Float32,
                shape: vec![],
                init: ConstInit::Weights { r#ref: "x".into() },
            },
        );
        g.consts.insert(
            "s".into(),
            ConstDecl {
                data_type: DataType::Float32,
                shape: vec![],
                init: ConstInit::Scalar {
                    value: serde_json::json!("1"),
                },
            },
        );
        g.consts.insert(
            "big".into(),
            ConstDecl {
                data_type: DataType::Float32,
                shape: vec![u32::MAX, u32::MAX, u32::MAX],
                init: ConstInit::InlineBytes {
                    bytes: vec![].into(),
                },
            },
        );
        g.nodes.push(node("a", "relu", &["later"], None));
        g.nodes.push(node("later", "relu", &["x", "nowhere"], None));
        g.nodes.push(node("p", "split", &["x"], Some(&["q", "x"])));
        g.nodes.push(node("e", "split", &["x"], Some(&[])));
        g.outputs.insert("out".into(), "missing".into());
        let err = g.validate().unwrap_err();
        let expected = [
            "format is \"other\", expected \"webnn-graph-json\"",
            "version is 7, expected 1 or 2",
            "constant `big` (float32[4294967295, 4294967295, 4294967295]) has a byte length that overflows u64",
            "constant `s` (float32[]) has scalar value \"1\", expected a number",
            "constant `x` has the same name as an input",
            "node 0 (`a` = relu): input `later` is used before it is defined (by node 1)",
            "node 1 (`later` = relu): input `nowhere` is not defined",
            "node 2 (`p` = split): id `p` is not its first output `q`",
            "node 2 (`p` = split): output `x` is already an input",
            "node 3 (`e` = split): `outputs` is an empty list",
            "output `out` names operand `missing`, which is not defined",
        ];
        assert_eq!(err.problems(), expected);
        assert_eq!(err.to_string(), expected.join("\n"));
    }

    /// An undefined operand close to a defined one (an input, a constant, an output of an
    /// earlier node) is offered as what was meant; a later node's output is not.
    #[cfg(feature = "load")]
    #[test]
    fn undefined_operands_suggest_the_nearest_defined_name() {
        let g = crate::parse_webnn(
            "webnn_graph \"g\" v1 { inputs { x: f32[2, 3]; } consts { fc1_weight: f32[3, 4] @weights(\"fc1\"); }
             nodes { h = matmul(x, fc1_wieght); y = relu(hiden); z = relu(y); hidden = relu(x); } outputs { hiden; undefined_x; } }",
        )
        .unwrap();
        let err = g.validate().unwrap_err();
        assert_eq!(
            err.problems(),
            [
                "node 0 (`h` = matmul): input `fc1_wieght` is not defined; did you mean `fc1_weight`?",
                "node 1 (`y` = relu): input `hiden` is not defined",
                "output `hiden` names operand `hiden`, which is not defined; did you mean `hidden`?",
                "output `undefined_x` names operand `undefined_x`, which is not defined",
            ]
        );
    }

    #[test]
    fn duplicate_node_outputs_and_self_reference() {
        let mut g = GraphJson::new(None);
        g.nodes.push(node("a", "relu", &["a"], None));
        g.nodes.push(node("a", "relu", &[], None));
        let err = g.validate().unwrap_err();
        assert_eq!(
            err.problems(),
            [
                "node 0 (`a` = relu): input `a` is used before it is defined (by node 0)",
                "node 1 (`a` = relu): output `a` is already an output of node 0",
            ]
        );
    }
}
