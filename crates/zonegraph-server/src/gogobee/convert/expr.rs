//! Taking a Go expression apart and quoting it: composite literals, struct fields, kind names.

use zonegraph_core::format::{LockKind, NodeKind};

use super::super::syntax::{Elem, Expr, ExprKind};
use super::{At, Errors};

/// An expression as a diagnostic quotes it.
pub(super) fn quoted(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Int(s) | ExprKind::Float(s) | ExprKind::Name(s) => s.clone(),
        ExprKind::Char(c) => format!("{c:?}"),
        ExprKind::Neg(inner) => format!("-{}", quoted(inner)),
        ExprKind::Call { fun, .. } => format!("{fun}(…)"),
        ExprKind::Composite { ty, .. } => format!("{}{{…}}", ty.as_deref().unwrap_or("")),
        ExprKind::Func { result, .. } => format!("func(…) {result} {{…}}"),
        ExprKind::Unread(s) => format!("`{s}`"),
    }
}

/// An expression inside a quotation: what was written, for one not read.
pub(super) fn shown(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Unread(s) => s.clone(),
        _ => quoted(e),
    }
}

/// ` (Name)` when `e` is a constant's name, for a message about its value.
pub(super) fn named(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(n) => format!(" ({n})"),
        _ => String::new(),
    }
}

/// gogobee's kind names, which are this format's.
pub(super) fn node_kind(name: &str) -> Option<NodeKind> {
    NodeKind::ALL.into_iter().find(|k| k.as_str() == name)
}

pub(super) fn lock_kind(name: &str) -> Option<LockKind> {
    LockKind::ALL.into_iter().find(|k| k.as_str() == name)
}

/// The fields of a struct literal, by name; a positional element or a repeated field is an
/// error (reported at `at`).
pub(super) fn fields<'e>(
    elems: &'e [Elem],
    what: &str,
    at: At,
    zone: Option<&str>,
    errors: &mut Errors,
) -> Option<Vec<(&'e str, &'e Expr)>> {
    let mut out: Vec<(&str, &Expr)> = Vec::new();
    for el in elems {
        match el.key.as_ref().map(|k| &k.kind) {
            Some(ExprKind::Name(k)) if !k.contains('.') => {
                if out.iter().any(|(seen, _)| seen == k) {
                    errors.push(
                        At {
                            pos: el.value.at,
                            ..at
                        },
                        zone,
                        format!("{what} sets {k} twice"),
                    );
                    return None;
                }
                out.push((k.as_str(), &el.value));
            }
            _ => {
                errors.push(
                    At { pos: el.value.at, ..at },
                    zone,
                    format!("{what} has an element without a field name; only `Field: value` elements are read"),
                );
                return None;
            }
        }
    }
    Some(out)
}

/// The elements of a composite literal of type `ty` (or of an elided type when `elided`).
pub(super) fn composite<'e>(e: &'e Expr, ty: &str, elided: bool) -> Option<&'e [Elem]> {
    match &e.kind {
        ExprKind::Composite { ty: t, elems }
            if t.as_deref() == Some(ty) || (elided && t.is_none()) =>
        {
            Some(elems)
        }
        _ => None,
    }
}
