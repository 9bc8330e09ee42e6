//! cachepart's procedural macros. One so far: [`macro@kind`], which gives a
//! field-less enum everything that makes it a
//! [`cachepart_units::Kind`](../cachepart_units/trait.Kind.html) (strum's
//! six derives and kebab-case names), so that no enum repeats the derive
//! list. Use it through `cachepart_units::kind`; the docs and examples are
//! there.

use proc_macro::{Delimiter, Group, Spacing, Span, TokenStream, TokenTree};
use std::str::FromStr;

/// What `#[kind]` puts in front of the enum: strum's derives through
/// `cachepart_units`' re-export (the enum's crate needs no strum of its own
/// for them), and kebab-case names. Derives first, so that the enum's own
/// `#[strum(...)]` attributes come after the derive that introduces them.
const KIND_ATTRS: &str = r#"
#[derive(
    ::cachepart_units::strum::EnumString,
    ::cachepart_units::strum::IntoStaticStr,
    ::cachepart_units::strum::Display,
    ::cachepart_units::strum::VariantArray,
    ::cachepart_units::strum::VariantNames,
    ::cachepart_units::strum::EnumMessage,
)]
#[strum(crate = "::cachepart_units::strum", serialize_all = "kebab-case")]
"#;

/// Makes a field-less enum a kebab-case kind: adds strum's `EnumString`,
/// `IntoStaticStr`, `Display`, `VariantArray`, `VariantNames` and
/// `EnumMessage` derives and `#[strum(serialize_all = "kebab-case")]`.
/// The enum keeps its own attributes (other derives, serde, extra
/// `#[strum(...)]` keys such as `parse_err_ty`, and per-variant `message`,
/// `to_string` or `serialize`). Takes no arguments.
#[proc_macro_attribute]
pub fn kind(args: TokenStream, item: TokenStream) -> TokenStream {
    if let Some(first) = args.into_iter().next() {
        return compile_error("`#[kind]` takes no arguments", first.span());
    }
    let mut out = TokenStream::from_str(KIND_ATTRS).expect("the attribute list is valid Rust");
    out.extend(item);
    out
}

/// `compile_error!("message")` at `span`.
fn compile_error(message: &str, span: Span) -> TokenStream {
    let tokens: Vec<TokenTree> = vec![
        TokenTree::Punct(proc_macro::Punct::new(':', Spacing::Joint)),
        TokenTree::Punct(proc_macro::Punct::new(':', Spacing::Alone)),
        TokenTree::Ident(proc_macro::Ident::new("core", span)),
        TokenTree::Punct(proc_macro::Punct::new(':', Spacing::Joint)),
        TokenTree::Punct(proc_macro::Punct::new(':', Spacing::Alone)),
        TokenTree::Ident(proc_macro::Ident::new("compile_error", span)),
        TokenTree::Punct(proc_macro::Punct::new('!', Spacing::Alone)),
        TokenTree::Group(Group::new(
            Delimiter::Parenthesis,
            TokenStream::from(TokenTree::Literal(proc_macro::Literal::string(message))),
        )),
        TokenTree::Punct(proc_macro::Punct::new(';', Spacing::Alone)),
    ];
    tokens
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}
