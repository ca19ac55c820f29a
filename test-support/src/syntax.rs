//! Rust sources read as syntax trees (`syn`), for the tests that check the code's structure:
//! a file's code without its tests ([`code`]), a crate's module files found from its root
//! through its `mod` declarations ([`crate_files`]), the `unsafe` keywords of a file
//! ([`unsafe_keywords`]), the length of every function ([`functions`]) and the public
//! modules that hold no public item ([`empty_public_modules`]).
//!
//! Line numbers come from `proc-macro2`'s `span-locations`: 1-based, each file counted
//! from its own first line.

use crate::imports::ModPath;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};
use syn::visit_mut::{self, VisitMut};

/// Whether `attrs` hold `#[cfg(test)]`: the item is test code.
pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| match &attr.meta {
        syn::Meta::List(list) => list.path.is_ident("cfg") && list.tokens.to_string() == "test",
        _ => false,
    })
}

/// The attributes of an item (none for an item `syn` keeps as raw tokens).
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Takes every `#[cfg(test)]` item out: of the file, of inline modules, of impl and trait
/// blocks and of function bodies.
struct TestsOut;

impl VisitMut for TestsOut {
    fn visit_file_mut(&mut self, file: &mut syn::File) {
        file.items.retain(|item| !is_test(item_attrs(item)));
        visit_mut::visit_file_mut(self, file);
    }

    fn visit_item_mod_mut(&mut self, module: &mut syn::ItemMod) {
        if let Some((_, items)) = &mut module.content {
            items.retain(|item| !is_test(item_attrs(item)));
        }
        visit_mut::visit_item_mod_mut(self, module);
    }

    fn visit_item_impl_mut(&mut self, block: &mut syn::ItemImpl) {
        block.items.retain(|item| match item {
            syn::ImplItem::Const(i) => !is_test(&i.attrs),
            syn::ImplItem::Fn(i) => !is_test(&i.attrs),
            syn::ImplItem::Type(i) => !is_test(&i.attrs),
            syn::ImplItem::Macro(i) => !is_test(&i.attrs),
            _ => true,
        });
        visit_mut::visit_item_impl_mut(self, block);
    }

    fn visit_item_trait_mut(&mut self, block: &mut syn::ItemTrait) {
        block.items.retain(|item| match item {
            syn::TraitItem::Const(i) => !is_test(&i.attrs),
            syn::TraitItem::Fn(i) => !is_test(&i.attrs),
            syn::TraitItem::Type(i) => !is_test(&i.attrs),
            syn::TraitItem::Macro(i) => !is_test(&i.attrs),
            _ => true,
        });
        visit_mut::visit_item_trait_mut(self, block);
    }

    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        block.stmts.retain(|stmt| match stmt {
            syn::Stmt::Item(item) => !is_test(item_attrs(item)),
            _ => true,
        });
        visit_mut::visit_block_mut(self, block);
    }
}

/// The code of `text`, the source of `file`, as a syntax tree without its test code: every
/// item marked `#[cfg(test)]` (test modules, inline or declared with `mod x;`, test
/// functions, imports, impl blocks) is left out, wherever it is. Comments are not in the
/// tree (doc comments are, as `#[doc]` attributes). A source that does not parse fails,
/// naming the file, the line and column, and what is wrong there.
///
/// ```
/// use std::path::Path;
/// let text = "use a::b;\n#[cfg(test)]\nmod tests {\n    fn f() {}\n}\nfn g() {}\n";
/// let code = webnn_weights_test_support::syntax::code(Path::new("x.rs"), text);
/// assert_eq!(code.items.len(), 2);
/// ```
pub fn code(file: &Path, text: &str) -> syn::File {
    let mut tree = syn::parse_file(text).unwrap_or_else(|e| {
        let at = e.span().start();
        panic!(
            "{}:{}:{}: does not parse as a Rust file: {e}; the structure checks read every \
             file of the module tree: fix its syntax",
            file.display(),
            at.line,
            at.column + 1
        )
    });
    TestsOut.visit_file_mut(&mut tree);
    tree
}

/// The syntax tree of the file at `path` without its test code (see [`code`]); a file that
/// cannot be read fails, naming it.
pub fn read_code(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", path.display()));
    code(path, &text)
}

/// One file of a crate's module tree.
pub struct ModuleFile {
    /// Where the file is.
    pub path: PathBuf,
    /// Its module path from the crate root (empty for the root file).
    pub module: ModPath,
    /// Its code, test code left out (see [`code`]).
    pub code: syn::File,
}

/// The root files of the crates of the package in `dir` (a workspace member's folder):
/// `src/lib.rs`, `src/main.rs`, and each program of `src/bin/` (`name.rs` or
/// `name/main.rs`), those that exist, in that order (the programs sorted).
pub fn crate_roots(dir: &Path) -> Vec<PathBuf> {
    let src = dir.join("src");
    let mut roots: Vec<PathBuf> = [src.join("lib.rs"), src.join("main.rs")]
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut programs: Vec<PathBuf> = entries
            .map(|e| e.expect("a readable entry").path())
            .filter_map(|p| {
                if p.is_dir() {
                    Some(p.join("main.rs")).filter(|m| m.is_file())
                } else {
                    Some(p).filter(|p| p.extension().is_some_and(|e| e == "rs"))
                }
            })
            .collect();
        programs.sort();
        roots.extend(programs);
    }
    roots
}

/// The files of the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`, a
/// `src/bin/` program): the root, then every file that a `mod name;` declaration reaches,
/// depth first (`name.rs` or `name/mod.rs` beside a root or `mod.rs` file, in the folder
/// named after any other file; `#[path = "…"]` relative to the declaring file's folder,
/// or inside an inline module to that module's folder).
/// Test modules (`#[cfg(test)]`) are not followed, and code that `include!` brings in is no
/// module file (the generated `weights-onnx/src/proto/onnx.rs`). A declared module whose
/// file is missing fails, naming the declaration.
pub fn crate_files(root: &Path) -> Vec<ModuleFile> {
    let mut out = Vec::new();
    let dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
    add_file(root.to_path_buf(), Vec::new(), dir, &mut out);
    out
}

/// Adds `path`, the file of `module` whose submodules' files are in `dir`, and the files it
/// declares.
fn add_file(path: PathBuf, module: ModPath, dir: PathBuf, out: &mut Vec<ModuleFile>) {
    let code = read_code(&path);
    let here = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut below = Vec::new();
    declared_files(&path, &code.items, &module, &dir, Some(&here), &mut below);
    out.push(ModuleFile { path, module, code });
    out.append(&mut below);
}

/// Follows the `mod` declarations among `items` (of `module`, declared in `file`, whose
/// submodules' files are in `dir`); `here` is the declaring file's folder at its top level
/// (for `#[path]`), `None` inside an inline module.
fn declared_files(
    file: &Path,
    items: &[syn::Item],
    module: &[String],
    dir: &Path,
    here: Option<&Path>,
    out: &mut Vec<ModuleFile>,
) {
    for item in items {
        let syn::Item::Mod(decl) = item else { continue };
        let name = decl.ident.to_string();
        let mut below = module.to_vec();
        below.push(name.clone());
        if let Some((_, inner)) = &decl.content {
            declared_files(file, inner, &below, &dir.join(&name), None, out);
            continue;
        }
        let explicit = decl.attrs.iter().find_map(|attr| match &attr.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        let (found, sub_dir) = match explicit {
            Some(rel) => {
                let at = here.unwrap_or(dir).join(rel);
                let sub = at.parent().unwrap_or(Path::new("")).join(&name);
                (Some(at), sub)
            }
            None => {
                let flat = dir.join(format!("{name}.rs"));
                let folder = dir.join(&name).join("mod.rs");
                let found = [flat, folder].into_iter().find(|p| p.is_file());
                (found, dir.join(&name))
            }
        };
        let Some(path) = found else {
            panic!(
                "{}:{}: `mod {name};` (module `{}`) has no file: neither {}.rs nor {}/mod.rs \
                 in {}; add the file or remove the declaration",
                file.display(),
                decl.ident.span().start().line,
                below.join("::"),
                name,
                name,
                dir.display()
            )
        };
        add_file(path, below, sub_dir, out);
    }
}

/// The number of `unsafe` keywords in `text`, the source of a Rust file, outside comments:
/// every `unsafe` token (blocks, `unsafe fn`, `unsafe impl`, `unsafe extern`,
/// `#[unsafe(…)]`, in macro input too) and every word `unsafe` in a string literal's value
/// (the macro writes the code it emits in strings); doc comments (`#[doc]` attributes) do
/// not count. The file is read as tokens, so any source that lexes counts, whole-file
/// syntax or not; one that does not lex (an unclosed delimiter or literal) is an error
/// naming the line and column.
///
/// ```
/// use webnn_weights_test_support::syntax::unsafe_keywords;
/// let text = "/// unsafe\nunsafe fn f() { unsafe { g() } } // unsafe\nconst S: &str = \"unsafe {\";";
/// assert_eq!(unsafe_keywords(text), Ok(3));
/// assert!(unsafe_keywords("fn f() {").is_err());
/// ```
pub fn unsafe_keywords(text: &str) -> Result<usize, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let tokens: TokenStream = text.parse().map_err(|e: proc_macro2::LexError| {
        let at = e.span().start();
        format!(
            "line {}, column {}: not Rust tokens ({e})",
            at.line,
            at.column + 1
        )
    })?;
    Ok(count_unsafe(tokens))
}

/// The `unsafe` keywords of `tokens` (see [`unsafe_keywords`]).
fn count_unsafe(tokens: TokenStream) -> usize {
    let mut count = 0;
    let mut after_hash = false;
    for token in tokens {
        let attribute = after_hash;
        after_hash = false;
        match token {
            TokenTree::Ident(ident) => count += usize::from(ident == "unsafe"),
            TokenTree::Punct(p) => {
                after_hash = p.as_char() == '#' || (attribute && p.as_char() == '!')
            }
            TokenTree::Literal(lit) => {
                if let syn::Lit::Str(s) = syn::Lit::new(lit) {
                    count += s
                        .value()
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .filter(|word| *word == "unsafe")
                        .count();
                }
            }
            TokenTree::Group(group) => {
                let doc = attribute
                    && group.delimiter() == Delimiter::Bracket
                    && matches!(group.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i == "doc");
                if !doc {
                    count += count_unsafe(group.stream());
                }
            }
        }
    }
    count
}

/// A function with a body, and its length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its name within the file: the inline modules, impl (its type's name) or trait, and
    /// functions it is in, then its own name, joined by `::` (`Plan::resolve`,
    /// `convert::step`).
    pub name: String,
    /// The line of its `fn` keyword.
    pub line: usize,
    /// Its length in lines, from the line of `fn` to the line of its closing brace, both
    /// included (attributes and doc comments above `fn` not counted).
    pub lines: usize,
}

/// Collects the functions of a syntax tree, with the names of what they are in.
#[derive(Default)]
struct Functions {
    scope: Vec<String>,
    found: Vec<Function>,
}

impl Functions {
    /// Records a function `sig` whose body is `block`, then looks inside it.
    fn record(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let name = sig.ident.to_string();
        let line = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().start().line;
        let mut full = self.scope.clone();
        full.push(name.clone());
        self.found.push(Function {
            name: full.join("::"),
            line,
            lines: end + 1 - line,
        });
        self.scope.push(name);
        self.visit_block(block);
        self.scope.pop();
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.record(&f.sig, &f.block);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.record(&f.sig, &f.block);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.record(&f.sig, block);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.scope.push(m.ident.to_string());
        visit::visit_item_mod(self, m);
        self.scope.pop();
    }

    fn visit_item_impl(&mut self, block: &'ast syn::ItemImpl) {
        let name = match &*block.self_ty {
            syn::Type::Path(p) => p
                .path
                .segments
                .last()
                .map_or("impl".to_string(), |s| s.ident.to_string()),
            _ => "impl".to_string(),
        };
        self.scope.push(name);
        visit::visit_item_impl(self, block);
        self.scope.pop();
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.scope.push(t.ident.to_string());
        visit::visit_item_trait(self, t);
        self.scope.pop();
    }
}

/// Every function with a body in `code` (a tree from [`code`], tests already out): free
/// functions, methods, default methods of traits, functions nested in functions or blocks,
/// in the order of the source. Functions written inside macro input (`macro_rules!`
/// bodies, `quote!`) are tokens, not functions, and are not seen.
///
/// ```
/// use std::path::Path;
/// use webnn_weights_test_support::syntax::{code, functions};
/// let text = "struct S;\nimpl S {\n    fn f() {\n        fn g() {}\n    }\n}\n";
/// let found = functions(&code(Path::new("x.rs"), text));
/// assert_eq!(found[0].name, "S::f");
/// assert_eq!((found[0].line, found[0].lines), (3, 3));
/// assert_eq!(found[1].name, "S::f::g");
/// ```
pub fn functions(code: &syn::File) -> Vec<Function> {
    let mut walk = Functions::default();
    walk.visit_file(code);
    walk.found
}

/// Whether `vis` is `pub`, unrestricted.
fn public(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

/// Whether `item` is a `pub` item other than a module: fn, struct, enum, union, const,
/// static, trait, trait alias, type alias, `use`, or a `pub` item of an `extern` block.
fn public_item(item: &syn::Item) -> bool {
    use syn::Item::*;
    match item {
        Const(i) => public(&i.vis),
        Enum(i) => public(&i.vis),
        Fn(i) => public(&i.vis),
        Static(i) => public(&i.vis),
        Struct(i) => public(&i.vis),
        Trait(i) => public(&i.vis),
        TraitAlias(i) => public(&i.vis),
        Type(i) => public(&i.vis),
        Union(i) => public(&i.vis),
        Use(i) => public(&i.vis),
        ForeignMod(block) => block.items.iter().any(|item| match item {
            syn::ForeignItem::Fn(i) => public(&i.vis),
            syn::ForeignItem::Static(i) => public(&i.vis),
            syn::ForeignItem::Type(i) => public(&i.vis),
            _ => false,
        }),
        _ => false,
    }
}

/// The modules of a crate: module path -> the file that holds it and its items (inline
/// modules under the path of the file they are in).
type Modules<'a> = BTreeMap<ModPath, (&'a Path, &'a [syn::Item])>;

/// Adds the inline modules among `items` (of `module`, in `file`) to `out`, at any depth.
fn inline_modules<'a>(
    file: &'a Path,
    items: &'a [syn::Item],
    module: &[String],
    out: &mut Modules<'a>,
) {
    for item in items {
        if let syn::Item::Mod(syn::ItemMod {
            ident,
            content: Some((_, inner)),
            ..
        }) = item
        {
            let mut below = module.to_vec();
            below.push(ident.to_string());
            inline_modules(file, inner, &below, out);
            out.insert(below, (file, inner));
        }
    }
}

/// The modules that `items` (of `module`) make public: their `pub mod`s, and the modules
/// their `pub use`s re-export (through `crate::`, `super::`, `self::` or a module declared
/// beside; a glob `pub use a::*` re-exports the public modules of `a`).
fn made_public(items: &[syn::Item], module: &[String], modules: &Modules) -> Vec<ModPath> {
    let mut out = Vec::new();
    let child = |name: &syn::Ident| {
        let mut below = module.to_vec();
        below.push(name.to_string());
        below
    };
    for item in items {
        match item {
            syn::Item::Mod(m) if public(&m.vis) => out.push(child(&m.ident)),
            syn::Item::Use(u) if public(&u.vis) && u.leading_colon.is_none() => {
                for (mut path, _) in crate::imports::use_tree(&u.tree) {
                    let glob = path.last().is_some_and(|s| s == "*");
                    if glob {
                        path.pop();
                    }
                    let target = match path.first().map(String::as_str) {
                        Some("crate") => path[1..].to_vec(),
                        Some("super") => {
                            let up = path.iter().take_while(|s| *s == "super").count();
                            let Some(keep) = module.len().checked_sub(up) else {
                                continue;
                            };
                            module[..keep].iter().chain(&path[up..]).cloned().collect()
                        }
                        _ => module.iter().chain(&path).cloned().collect(),
                    };
                    if !modules.contains_key(&target) {
                        continue;
                    }
                    if glob {
                        let (_, inner) = modules[&target];
                        out.extend(inner.iter().filter_map(|item| match item {
                            syn::Item::Mod(m) if public(&m.vis) => {
                                let mut below = target.clone();
                                below.push(m.ident.to_string());
                                Some(below)
                            }
                            _ => None,
                        }));
                    } else {
                        out.push(target);
                    }
                }
            }
            _ => {}
        }
    }
    out.retain(|m| modules.contains_key(m));
    out
}

/// The items of the files that `items` (in `file`) bring in with `include!("…")`, parsed
/// (tests left out); a file that cannot be read or parsed fails, naming it.
fn included(file: &Path, items: &[syn::Item]) -> Vec<syn::File> {
    items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("include") => {
                m.mac.parse_body::<syn::LitStr>().ok()
            }
            _ => None,
        })
        .map(|rel| read_code(&file.parent().unwrap_or(Path::new("")).join(rel.value())))
        .collect()
}

/// Whether `module` holds a public item: one of its own, one of a file it `include!`s, or
/// one of a `pub mod` of it that holds one.
fn holds_public_item(module: &[String], modules: &Modules) -> bool {
    let Some((file, items)) = modules.get(module) else {
        return false;
    };
    items.iter().any(public_item)
        || included(file, items)
            .iter()
            .any(|code| code.items.iter().any(public_item))
        || items.iter().any(|item| match item {
            syn::Item::Mod(m) if public(&m.vis) => {
                let mut below = module.to_vec();
                below.push(m.ident.to_string());
                holds_public_item(&below, modules)
            }
            _ => false,
        })
}

/// The modules of a library crate that are public and hold no public item, sorted by module
/// path, each with the file that holds it. Public are the modules reached from the crate
/// root through `pub mod` at every level (`pub(crate)` and narrower are not public) or
/// re-exported by a `pub use` of a public module. A public item is a `pub` fn, struct,
/// enum, union, const, static, trait, type alias or `use`, a `pub` item of an `extern`
/// block, in the module or in a file it `include!`s, or a public submodule that holds one.
/// `files` is the crate's module tree, as [`crate_files`] reads it from `src/lib.rs`.
pub fn empty_public_modules(files: &[ModuleFile]) -> Vec<(PathBuf, ModPath)> {
    let mut modules: Modules = BTreeMap::new();
    for f in files {
        inline_modules(&f.path, &f.code.items, &f.module, &mut modules);
        modules.insert(f.module.clone(), (&f.path, &f.code.items));
    }
    let mut public_modules = BTreeSet::new();
    let mut queue = vec![Vec::new()];
    while let Some(module) = queue.pop() {
        let (_, items) = modules[&module];
        for found in made_public(items, &module, &modules) {
            if public_modules.insert(found.clone()) {
                queue.push(found);
            }
        }
    }
    public_modules
        .into_iter()
        .filter(|m| !m.is_empty() && !holds_public_item(m, &modules))
        .map(|m| (modules[&m].0.to_path_buf(), m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planted(text: &str) -> syn::File {
        code(Path::new("planted.rs"), text)
    }

    /// A function `f` of `lines` lines, `fn` line and closing brace included.
    fn long_fn(lines: usize) -> String {
        let mut text = String::from("fn f() {\n");
        for i in 0..lines - 2 {
            text.push_str(&format!("    let _x{i} = {i};\n"));
        }
        text.push_str("}\n");
        text
    }

    #[test]
    fn a_function_is_measured_from_fn_to_its_closing_brace() {
        for lines in [80, 81] {
            let text = format!("/// doc\n#[inline]\n{}", long_fn(lines));
            let found = functions(&planted(&text));
            assert_eq!(
                found,
                [Function {
                    name: "f".into(),
                    line: 3,
                    lines
                }]
            );
        }
        let text = "mod m {\n    trait T {\n        fn d(&self) {\n        }\n        fn n(&self);\n    }\n}\n\
                    #[cfg(test)]\nfn t() {}\nfn outer() {\n    let _ = || {\n        fn inner() {}\n    };\n}\n";
        let names: Vec<(String, usize)> = functions(&planted(text))
            .into_iter()
            .map(|f| (f.name, f.lines))
            .collect();
        assert_eq!(
            names,
            [
                ("m::T::d".to_string(), 2),
                ("outer".to_string(), 5),
                ("outer::inner".to_string(), 1)
            ]
        );
    }

    #[test]
    fn test_code_is_left_out_wherever_it_is() {
        let text = "#[cfg(test)]\nmod tests;\nmod a {\n    #[cfg(test)]\n    fn t() {}\n}\n\
                    impl S {\n    #[cfg(test)]\n    fn t() {}\n    fn f() {\n        #[cfg(test)]\n        fn t() {}\n    }\n}\n\
                    #[cfg(not(test))]\nfn kept() {}\n";
        let names: Vec<String> = functions(&planted(text))
            .into_iter()
            .map(|f| f.name)
            .collect();
        assert_eq!(names, ["S::f", "kept"]);
    }

    #[test]
    fn unsafe_is_counted_in_code_and_strings_not_in_comments() {
        let count = |text: &str| unsafe_keywords(text).unwrap();
        assert_eq!(
            count("// unsafe { }\n/* unsafe /* unsafe */ */ fn f() {}"),
            0
        );
        assert_eq!(
            count("unsafe impl A for B {}\nunsafe fn f() { unsafe { g() } }\n#[unsafe(no_mangle)]"),
            4
        );
        assert_eq!(count("let s = \"http://x\"; unsafe { f() }"), 1);
        assert_eq!(count("let c = '/'; let d = '\"'; unsafe { f() }"), 1);
        assert_eq!(count("fn not_unsafe_code() {} // unsafe"), 0);
        assert_eq!(count("quote!(\"unsafe extern \\\"C\\\" {{\")"), 1);
        assert_eq!(count("m! { unsafe { x } }\nlet s = \"a\\nunsafe\";"), 2);
        assert_eq!(
            count("//! unsafe\n/** unsafe */\n#[doc = \"unsafe\"]\nfn f() {}"),
            0
        );
        let err = unsafe_keywords("fn f() {\n    let s = \"x;\n}\n").unwrap_err();
        assert!(err.starts_with("line 2"), "{err}");
    }

    #[test]
    fn a_public_module_without_a_public_item_is_found() {
        let root = "pub mod a {\n    pub(crate) fn f() {}\n    pub struct S;\n}\n\
                    pub mod empty {\n    pub(crate) fn f() {}\n    fn g() {}\n}\n\
                    pub mod outer {\n    pub mod inner {\n        pub(crate) const C: u8 = 0;\n    }\n}\n\
                    pub mod reexport {\n    pub use crate::a::S;\n}\n\
                    pub(crate) mod hidden {\n    fn f() {}\n}\n\
                    pub mod deep {\n    pub mod leaf {\n        pub fn f() {}\n    }\n}\n";
        let files = [ModuleFile {
            path: PathBuf::from("lib.rs"),
            module: Vec::new(),
            code: planted(root),
        }];
        let found: Vec<String> = empty_public_modules(&files)
            .into_iter()
            .map(|(_, m)| m.join("::"))
            .collect();
        assert_eq!(found, ["empty", "outer", "outer::inner"]);
        // A private module is public through a re-export, and what it holds is checked.
        let root = "mod private {\n    pub mod shown {\n        pub(crate) fn f() {}\n    }\n    pub mod full {\n        pub fn f() {}\n    }\n}\n\
                    pub use private::{full, shown};\nmod quiet {\n    pub mod hidden {}\n}\n";
        let files = [ModuleFile {
            path: PathBuf::from("lib.rs"),
            module: Vec::new(),
            code: planted(root),
        }];
        let found: Vec<String> = empty_public_modules(&files)
            .into_iter()
            .map(|(_, m)| m.join("::"))
            .collect();
        assert_eq!(found, ["private::shown"]);
    }

    #[test]
    fn the_items_of_an_included_file_count() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        std::fs::create_dir_all(src.join("generated")).unwrap();
        std::fs::write(src.join("lib.rs"), "pub mod generated;\n").unwrap();
        std::fs::write(src.join("generated/mod.rs"), "include!(\"made.rs\");\n").unwrap();
        let empty = |made: &str| {
            std::fs::write(src.join("generated/made.rs"), made).unwrap();
            empty_public_modules(&crate_files(&src.join("lib.rs")))
                .into_iter()
                .map(|(_, m)| m.join("::"))
                .collect::<Vec<_>>()
        };
        assert!(empty("pub struct Made;\n").is_empty());
        assert_eq!(empty("pub(crate) struct Made;\n"), ["generated"]);
    }

    #[test]
    fn a_crate_s_files_are_found_through_its_mod_declarations() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        let write = |rel: &str, text: &str| {
            let path = src.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "lib.rs",
            "pub mod a;\nmod b;\n#[cfg(test)]\nmod tests;\nmod c { mod d; }\n",
        );
        write("a.rs", "mod x;\n");
        write("a/x.rs", "pub fn f() {}\n");
        write("b/mod.rs", "include!(\"gen.rs\");\n");
        write("b/gen.rs", "this is not rust");
        write("tests.rs", "this is not rust either");
        write("c/d.rs", "");
        let files = crate_files(&src.join("lib.rs"));
        let found: Vec<(String, String)> = files
            .iter()
            .map(|f| {
                let rel = f
                    .path
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (rel, f.module.join("::"))
            })
            .collect();
        let expected = [
            ("lib.rs", ""),
            ("a.rs", "a"),
            ("a/x.rs", "a::x"),
            ("b/mod.rs", "b"),
            ("c/d.rs", "c::d"),
        ];
        assert_eq!(found, expected.map(|(p, m)| (p.to_string(), m.to_string())));
        write("lib.rs", "mod missing;\n");
        let missing = std::panic::catch_unwind(|| crate_files(&src.join("lib.rs")).len());
        let message = *missing.unwrap_err().downcast::<String>().unwrap();
        assert!(
            message.contains("`mod missing;` (module `missing`) has no file"),
            "{message}"
        );
    }
}
