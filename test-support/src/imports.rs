//! What a crate's sources import from the crate itself, read from their syntax trees: the
//! paths each file names through `crate::` and `super::`, the names a root file imports
//! and the modules it declares. The structure tests build on it: the runtime's layers
//! ([`crate::layers::assert_layered`]) and the import circles of every crate
//! ([`crate::layers::import_cycle`]).
//!
//! The trees are read without their test code (see [`crate::syntax::code`]).

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use syn::parse::Parser;
use syn::visit::{self, Visit};

/// A module path from the crate root (`["resolve", "plan"]`; empty for the root).
pub type ModPath = Vec<String>;

/// A path that a file names, resolved against the file's module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// A path from the crate root (`crate::a::b`, or `super::b` in module `a::c`).
    Path(ModPath),
    /// A `super::` chain that climbs past the crate root (`super::super::x` in module `a`):
    /// the path as written, up to the first name.
    PastRoot(String),
}

/// The paths of a use tree, each with the name it binds: `a::b` binds `b`,
/// `a::{self, b::c as d}` binds `a` and `d`, a glob `a::*` is the path `a::*` binding `*`.
/// A `self` segment adds nothing to the path.
///
/// ```
/// use webnn_weights_test_support::imports::use_tree;
/// let tree: syn::UseTree = syn::parse_str("a::{self, b::c as d}").unwrap();
/// let names: Vec<_> = use_tree(&tree).into_iter().map(|(path, name)| (path.join("::"), name)).collect();
/// assert_eq!(names, [("a".to_string(), "a".to_string()), ("a::b::c".to_string(), "d".to_string())]);
/// ```
pub fn use_tree(tree: &syn::UseTree) -> Vec<(ModPath, String)> {
    fn walk(tree: &syn::UseTree, prefix: &mut ModPath, out: &mut Vec<(ModPath, String)>) {
        let segment = |ident: &syn::Ident| (ident != "self").then(|| ident.to_string());
        match tree {
            syn::UseTree::Path(p) => {
                let pushed = segment(&p.ident).map(|s| prefix.push(s)).is_some();
                walk(&p.tree, prefix, out);
                if pushed {
                    prefix.pop();
                }
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.extend(segment(&n.ident));
                let name = path.last().cloned().unwrap_or_default();
                out.push((path, name));
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.extend(segment(&r.ident));
                out.push((path, r.rename.to_string()));
            }
            syn::UseTree::Glob(_) => {
                let mut path = prefix.clone();
                path.push("*".to_string());
                out.push((path, "*".to_string()));
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    walk(tree, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// `path` (its segments as written), if it starts with `crate` or `super`, resolved from the
/// crate root against `module`; `None` for other paths.
fn resolve(path: &[String], module: &[String]) -> Option<Named> {
    match path.first()?.as_str() {
        "crate" => Some(Named::Path(path[1..].to_vec())),
        "super" => {
            let up = path.iter().take_while(|s| *s == "super").count();
            Some(match module.len().checked_sub(up) {
                Some(keep) => {
                    Named::Path(module[..keep].iter().chain(&path[up..]).cloned().collect())
                }
                None => Named::PastRoot(path[..(up + 1).min(path.len())].join("::")),
            })
        }
        _ => None,
    }
}

/// Collects the `crate::` and `super::` paths of a tree.
struct Paths<'m> {
    module: &'m [String],
    found: Vec<Named>,
}

impl Paths<'_> {
    fn add(&mut self, path: &[String]) {
        self.found.extend(resolve(path, self.module));
    }

    /// The paths written in macro input (`format!("{}", crate::x::y())`): each `crate` or
    /// `super` token (not after `::` or `$`) and the `:: name` steps after it; a braced
    /// group after `::` is read as a use tree (`crate::{a, b::c}`).
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let colons = |at: usize| {
            matches!((tokens.get(at), tokens.get(at + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':')
        };
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.macro_tokens(g.stream()),
                TokenTree::Ident(first) if *first == "crate" || *first == "super" => {
                    let inside = i >= 1
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$' || p.as_char() == ':');
                    if !inside && colons(i + 1) {
                        let mut path = vec![first.to_string()];
                        let mut j = i + 1;
                        while colons(j) {
                            match tokens.get(j + 2) {
                                Some(TokenTree::Ident(next)) => path.push(next.to_string()),
                                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                                    let group = syn::punctuated::Punctuated::<
                                        syn::UseTree,
                                        syn::Token![,],
                                    >::parse_terminated;
                                    for tree in group.parse2(g.stream()).into_iter().flatten() {
                                        for (below, _) in use_tree(&tree) {
                                            let whole: Vec<String> =
                                                path.iter().cloned().chain(below).collect();
                                            self.add(&whole);
                                        }
                                    }
                                    path.clear();
                                    j += 3;
                                    break;
                                }
                                _ => break,
                            }
                            j += 3;
                        }
                        if !path.is_empty() {
                            self.add(&path);
                        }
                        i = j;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.add(&segments);
        }
        visit::visit_path(self, path);
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_none() {
            for (path, _) in use_tree(&item.tree) {
                self.add(&path);
            }
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        self.macro_tokens(mac.tokens.clone());
    }
}

/// Every path that `code` (the tree of module `module`, tests already out) names through
/// `crate::` or `super::`, resolved from the crate root, in the order of the source: in
/// `use` items, expressions, types, patterns, visibilities (`pub(in crate::a)`) and macro
/// input. A `super::` chain longer than the module is deep is [`Named::PastRoot`], never
/// skipped; `$crate::` (a macro's own crate) is not the file's.
///
/// ```
/// use std::path::Path;
/// use webnn_weights_test_support::imports::{named_paths, Named};
/// use webnn_weights_test_support::syntax::code;
/// let module = vec!["resolve".to_string(), "plan".to_string()];
/// let text = "use super::model::A;\nfn f() { super::super::super::x(); }";
/// let named = named_paths(&code(Path::new("plan.rs"), text), &module);
/// assert_eq!(named[0], Named::Path(vec!["resolve".into(), "model".into(), "A".into()]));
/// assert_eq!(named[1], Named::PastRoot("super::super::super::x".into()));
/// ```
pub fn named_paths(code: &syn::File, module: &[String]) -> Vec<Named> {
    let mut walk = Paths {
        module,
        found: Vec::new(),
    };
    walk.visit_file(code);
    walk.found
}

/// The modules that `code` (a root file: `lib.rs`, `main.rs` or a `mod.rs`; tests already
/// out) declares at its top level, with `mod name;` or `mod name { … }`, whatever their
/// visibility.
pub fn declared_modules(code: &syn::File) -> BTreeSet<String> {
    code.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The names that the top-level `use` items of `code` (the root file of module `module`,
/// tests already out) bind, each with the path from the crate root it comes from, or `None`
/// for a path outside the crate (`std::…`, another crate): `pub use`, `pub(crate) use` and
/// a private `use` alike (a child module reaches its parent's private imports through
/// `super::`). Paths into the crate are those through `crate::`, `super::` or a module the
/// file declares (`mod a;` then `use a::X;` or `use self::a::X;`).
///
/// ```
/// use std::path::Path;
/// use webnn_weights_test_support::imports::exports;
/// use webnn_weights_test_support::syntax::code;
/// let root = "mod plan;\npub use plan::{Plan, make as plan_it};\nuse std::path::Path;\n";
/// let names = exports(&code(Path::new("mod.rs"), root), &["resolve".to_string()]);
/// assert_eq!(names["Plan"].as_deref().unwrap(), ["resolve", "plan", "Plan"]);
/// assert_eq!(names["plan_it"].as_deref().unwrap(), ["resolve", "plan", "make"]);
/// assert_eq!(names["Path"], None);
/// ```
pub fn exports(code: &syn::File, module: &[String]) -> BTreeMap<String, Option<ModPath>> {
    let local = declared_modules(code);
    let mut out = BTreeMap::new();
    for item in &code.items {
        let syn::Item::Use(item) = item else { continue };
        for (path, name) in use_tree(&item.tree) {
            let Some(first) = path.first() else { continue };
            let from = if item.leading_colon.is_some() {
                None
            } else if first == "crate" || first == "super" {
                match resolve(&path, module) {
                    Some(Named::Path(p)) => Some(p),
                    _ => continue,
                }
            } else if local.contains(first) {
                Some(module.iter().cloned().chain(path).collect())
            } else {
                None
            };
            out.insert(name, from);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str, module: &[&str]) -> Vec<String> {
        let module: ModPath = module.iter().map(|s| s.to_string()).collect();
        let code = crate::syntax::code(std::path::Path::new("planted.rs"), text);
        named_paths(&code, &module)
            .into_iter()
            .map(|n| match n {
                Named::Path(p) => p.join("::"),
                Named::PastRoot(written) => format!("past: {written}"),
            })
            .collect()
    }

    #[test]
    fn paths_in_macro_input_are_named_and_macro_crates_are_not() {
        let text = "fn f() {\n    println!(\"{}\", crate::a::b());\n    m!($crate::x);\n    \
                    g!(crate::{c, d::e as f});\n    h!(super::super::y);\n    \
                    let s = \"crate::in_a_string\";\n}\n";
        assert_eq!(
            named(text, &["top"]),
            ["a::b", "c", "d::e", "past: super::super::y"]
        );
    }

    #[test]
    fn paths_in_types_visibilities_and_use_trees_are_named() {
        let text =
            "use {crate::a::A, super::b::*};\npub(in crate::c) fn f(x: crate::d::D) -> super::E { \
                    g() }\nuse ::crate_name::x;\n";
        assert_eq!(
            named(text, &["m", "n"]),
            ["a::A", "m::b::*", "c", "d::D", "m::E"]
        );
    }
}
