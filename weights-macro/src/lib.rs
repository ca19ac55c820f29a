//! `include_webnn_graph!`: embeds the artifacts that `webnn-weights-build` prepared.
//!
//! Use it through `webnn_weights_runtime::include_webnn_graph!`.

use proc_macro::TokenStream;

/// Embeds a graph prepared by `webnn-weights-build` as a `'static` `EmbeddedGraph`.
#[proc_macro]
pub fn include_webnn_graph(input: TokenStream) -> TokenStream {
    let lit = match syn::parse::<syn::LitStr>(input) {
        Ok(lit) => lit,
        Err(err) => return err.to_compile_error().into(),
    };
    syn::Error::new(lit.span(), "include_webnn_graph! is not available yet")
        .to_compile_error()
        .into()
}
