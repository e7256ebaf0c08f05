//! gogobee's constants, by name, and the literal values they and other expressions stand for.

use std::collections::BTreeMap;

use zonegraph_core::format::{LockKind, NodeKind};

use super::super::postgame;
use super::super::syntax::{Binding, Expr, ExprKind};
use super::Parsed;
use super::expr::{lock_kind, named, node_kind, quoted};
use super::rooms::lock_data;

/// How many constants a name may lead through (`A = B`, `B = "x"`) before giving up.
const MAX_CONST_CHAIN: usize = 16;

/// The constants of every file, by name (the first declaration wins; Go allows one), and
/// inside a graph func its local literals (`r1 := "region"`), which shadow them.
#[derive(Clone)]
pub(super) struct Consts<'a> {
    by_name: BTreeMap<&'a str, (&'a str, &'a Binding)>,
    locals: BTreeMap<&'a str, &'a Expr>,
}

impl<'a> Consts<'a> {
    pub(super) fn new(parsed: &'a Parsed<'a>) -> Self {
        let mut by_name = BTreeMap::new();
        for (file, f) in &parsed.files {
            for c in &f.consts {
                by_name.entry(c.name.as_str()).or_insert((*file, c));
            }
        }
        Consts {
            by_name,
            locals: BTreeMap::new(),
        }
    }

    /// These constants with `locals` in scope.
    pub(super) fn with_locals(&self, locals: BTreeMap<&'a str, &'a Expr>) -> Self {
        Consts {
            by_name: self.by_name.clone(),
            locals,
        }
    }

    /// Whether `e` is a literal (or names one): what a local may be bound to.
    pub(super) fn is_literal(&self, e: &Expr) -> bool {
        self.literal(e).is_ok_and(|l| {
            matches!(
                &l.kind,
                ExprKind::Str(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Neg(_)
            ) || matches!(&l.kind, ExprKind::Name(n) if n == "true" || n == "false")
        })
    }

    /// The literal a name stands for, following constants; errors say why not.
    fn literal<'e>(&'e self, e: &'e Expr) -> Result<&'e Expr, String> {
        let mut e = e;
        for _ in 0..MAX_CONST_CHAIN {
            let ExprKind::Name(name) = &e.kind else {
                return Ok(e);
            };
            if matches!(name.as_str(), "true" | "false" | "nil") {
                return Ok(e);
            }
            if let Some(local) = self.locals.get(name.as_str()) {
                e = local;
                continue;
            }
            let Some((file, c)) = self.by_name.get(name.as_str()) else {
                return Err(format!(
                    "{name} is not a constant declared in the sources read"
                ));
            };
            if matches!(&c.value, Some(Expr { kind: ExprKind::Name(v), .. }) if v == "iota") {
                return Err(format!(
                    "constant {name} ({file}:{}) is set by iota, which the importer does not count",
                    c.at.line
                ));
            }
            let Some(v) = &c.value else {
                return Err(format!(
                    "constant {name} ({file}:{}) has no value the importer reads (iota or an \
                     implied repetition)",
                    c.at.line
                ));
            };
            e = v;
        }
        Err("a chain of constants too long to follow".into())
    }

    /// Whether `name` is a constant declared with type `ZoneID`.
    pub(super) fn is_zone_id(&self, name: &str) -> bool {
        self.by_name
            .get(name)
            .is_some_and(|(_, c)| c.ty.as_deref() == Some("ZoneID"))
    }

    pub(super) fn string(&self, e: &Expr) -> Result<String, String> {
        match &self.literal(e)?.kind {
            ExprKind::Str(s) => Ok(s.clone()),
            // A conversion such as `ZoneID("x")`.
            ExprKind::Call { fun, args }
                if args.len() == 1
                    && matches!(
                        fun.as_str(),
                        "ZoneID" | "ZoneNodeKind" | "ZoneEdgeLockKind" | "string"
                    ) =>
            {
                self.string(&args[0])
            }
            _ => Err(format!("{} is not a string", quoted(e))),
        }
    }

    pub(super) fn int(&self, e: &Expr) -> Result<i64, String> {
        let lit = self.literal(e)?;
        if let ExprKind::Call { fun, args } = &lit.kind
            && args.len() == 1
            && matches!(fun.as_str(), "ZoneTier" | "int")
        {
            return self.int(&args[0]);
        }
        let (neg, inner) = match &lit.kind {
            ExprKind::Neg(inner) => (true, self.literal(inner)?),
            _ => (false, lit),
        };
        let ExprKind::Int(text) = &inner.kind else {
            return Err(format!("{} is not an integer", quoted(e)));
        };
        let v = parse_int(text).ok_or_else(|| format!("{text} is not an integer"))?;
        Ok(if neg { -v } else { v })
    }

    pub(super) fn float(&self, e: &Expr) -> Result<f64, String> {
        let lit = self.literal(e)?;
        let (neg, inner) = match &lit.kind {
            ExprKind::Neg(inner) => (true, self.literal(inner)?),
            _ => (false, lit),
        };
        let v = match &inner.kind {
            ExprKind::Float(text) => text
                .replace('_', "")
                .parse::<f64>()
                .map_err(|_| format!("{text} is not a decimal number"))?,
            ExprKind::Int(text) => {
                parse_int(text).ok_or_else(|| format!("{text} is not an integer"))? as f64
            }
            _ => return Err(format!("{} is not a number", quoted(e))),
        };
        Ok(if neg { -v } else { v })
    }

    pub(super) fn bool(&self, e: &Expr) -> Result<bool, String> {
        match &self.literal(e)?.kind {
            ExprKind::Name(n) if n == "true" => Ok(true),
            ExprKind::Name(n) if n == "false" => Ok(false),
            _ => Err(format!("{} is not true or false", quoted(e))),
        }
    }

    /// A lock's data value as JSON.
    pub(super) fn json(&self, e: &Expr) -> Result<serde_json::Value, String> {
        let lit = self.literal(e)?;
        Ok(match &lit.kind {
            ExprKind::Str(s) => s.clone().into(),
            ExprKind::Name(n) if n == "true" || n == "false" => (n == "true").into(),
            ExprKind::Int(_) => self.int(e)?.into(),
            ExprKind::Neg(inner) if matches!(inner.kind, ExprKind::Int(_)) => self.int(e)?.into(),
            ExprKind::Float(_) | ExprKind::Neg(_) => serde_json::Number::from_f64(self.float(e)?)
                .map(serde_json::Value::Number)
                .ok_or_else(|| format!("{} is not a finite number", quoted(e)))?,
            _ => return Err(format!("{} is not a string, number or bool", quoted(e))),
        })
    }
}

impl postgame::Values for Consts<'_> {
    fn string(&self, e: &Expr) -> Result<String, String> {
        Consts::string(self, e)
    }

    fn float(&self, e: &Expr) -> Result<f64, String> {
        Consts::float(self, e)
    }

    fn node_kind(&self, e: &Expr) -> Result<Option<NodeKind>, String> {
        let s = Consts::string(self, e)?;
        if s.is_empty() {
            return Ok(None);
        }
        node_kind(&s)
            .map(Some)
            .ok_or_else(|| format!("room kind {s:?}{} is not one of zonegraph's", named(e)))
    }

    fn lock_kind(&self, e: &Expr) -> Result<Option<LockKind>, String> {
        let s = Consts::string(self, e)?;
        if s.is_empty() {
            return Ok(None);
        }
        lock_kind(&s)
            .map(Some)
            .ok_or_else(|| format!("lock kind {s:?}{} is not one of zonegraph's", named(e)))
    }

    fn lock_data(&self, e: &Expr) -> Result<BTreeMap<String, serde_json::Value>, String> {
        lock_data(e, self)
    }
}

/// Go's integer literal syntaxes (`12`, `0x1F`, `0o17`, `017`, `0b101`, `1_000`).
pub(super) fn parse_int(text: &str) -> Option<i64> {
    let t = text.replace('_', "");
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else {
        lower.parse().ok()
    }
}
