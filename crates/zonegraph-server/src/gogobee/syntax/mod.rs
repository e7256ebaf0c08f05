//! The Go this importer reads: a file's top-level `const`, `var` and `func` declarations, the
//! statements of a function body, and expressions made of literals, names, calls and
//! composite literals (`T{…}`, `[]T{…}`, `map[K]V{…}`, `{…}` with the type elided), and
//! function literals (`func(a T, b U) R { … }`) with their statements.
//!
//! Everything else is skipped, never misread: an expression of any other form (an operator,
//! a function literal, a parenthesis) becomes [`ExprKind::Unread`] with its place and text,
//! and a statement of another form becomes [`Stmt::Other`]; the conversion reports one only
//! where it needs its value.

use super::lex::{Tok, Token};

/// A place in a file: 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// An expression of the forms above.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub at: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Str(String),
    Int(String),
    Float(String),
    Char(char),
    /// `-x`.
    Neg(Box<Expr>),
    /// An identifier, or a qualified one (`pkg.Name`).
    Name(String),
    /// `f(args…)` with `f` a name.
    Call {
        fun: String,
        args: Vec<Expr>,
    },
    /// `T{elems…}`; `ty` is the type as written without spaces (`[]ZoneNode`,
    /// `map[string]any`), `None` when elided inside another composite.
    Composite {
        ty: Option<String>,
        elems: Vec<Elem>,
    },
    /// `func(params) result { body }`; `params` are the parameter names in order, `None`
    /// when they are not all named (`func(int)`).
    Func {
        params: Option<Vec<String>>,
        result: String,
        body: Vec<Stmt>,
    },
    /// Something else, as written (shortened).
    Unread(String),
}

/// One element of a composite literal: `key: value` or `value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Elem {
    pub key: Option<Expr>,
    pub value: Expr,
}

/// A top-level `const` or `var` name with its type (as written) and value.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub name: String,
    pub ty: Option<String>,
    pub value: Option<Expr>,
    pub at: Pos,
}

/// A top-level function.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    /// A method (`func (g T) name…`).
    pub method: bool,
    /// It takes parameters (or type parameters).
    pub params: bool,
    /// Its result type as written without spaces (`ZoneGraph`, `(ZoneGraph,bool)`).
    pub result: String,
    pub body: Vec<Stmt>,
    /// Every name its body mentions, in order, with its place.
    pub names: Vec<(String, Pos)>,
    /// A digest of its body's tokens (FNV-1a over their text), which tells whether the body
    /// is one the importer knows; comments and layout do not change it.
    pub body_digest: u64,
    pub at: Pos,
}

/// One statement of a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `return x` (the first result only; more results make it `Other`).
    Return(Expr, Pos),
    /// `name := x`, or `var name [T] = x`.
    Define(String, Expr, Pos),
    /// `name[key] = x`.
    IndexAssign {
        name: String,
        key: Expr,
        value: Expr,
        at: Pos,
    },
    /// Anything else, as written (shortened).
    Other(String, Pos),
}

/// What one file declares at the top level, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    pub consts: Vec<Binding>,
    pub vars: Vec<Binding>,
    pub funcs: Vec<Func>,
}

/// How much of a skipped construct a diagnostic quotes.
const QUOTE_TOKENS: usize = 8;

/// The deepest nesting of brackets (`(`, `[`, `{`) a file may have: the parser recurses once
/// or a few times per level, so a file of nested braces could otherwise overflow its stack
/// (gogobee's zone files nest about six deep). Every other form it reads is a loop.
pub const MAX_NESTING: usize = 64;

/// Where a bracket opens the level past [`MAX_NESTING`], if one does.
pub fn too_deep(tokens: &[Token]) -> Option<Pos> {
    let mut depth = 0usize;
    for t in tokens {
        match t.tok {
            Tok::Op("(" | "[" | "{") => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(Pos {
                        line: t.line,
                        col: t.col,
                    });
                }
            }
            Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Reads the top-level declarations of a lexed file.
pub fn parse_file(tokens: &[Token]) -> File {
    let mut p = Parser { t: tokens, i: 0 };
    let mut file = File::default();
    while let Some(tok) = p.peek() {
        match tok {
            Tok::Ident(kw) if kw == "const" || kw == "var" => {
                let is_const = kw == "const";
                p.i += 1;
                let specs = if p.eat_op("(") {
                    let mut specs = Vec::new();
                    while p.peek().is_some() && !p.eat_op(")") {
                        if p.eat_semi() {
                            continue;
                        }
                        specs.extend(p.value_spec());
                    }
                    specs
                } else {
                    p.value_spec()
                };
                if is_const {
                    file.consts.extend(specs);
                } else {
                    file.vars.extend(specs);
                }
            }
            Tok::Ident(kw) if kw == "func" => {
                if let Some(f) = p.func() {
                    file.funcs.push(f);
                }
            }
            _ => p.skip_to_semi(),
        }
    }
    file
}

struct Parser<'a> {
    t: &'a [Token],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.t.get(self.i + k).map(|t| &t.tok)
    }

    fn pos(&self) -> Pos {
        let t = self.t.get(self.i).or(self.t.last());
        t.map_or(Pos { line: 1, col: 1 }, |t| Pos {
            line: t.line,
            col: t.col,
        })
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let yes = self.is_op(op);
        if yes {
            self.i += 1;
        }
        yes
    }

    fn eat_semi(&mut self) -> bool {
        let yes = self.peek() == Some(&Tok::Semi);
        if yes {
            self.i += 1;
        }
        yes
    }

    fn ident(&mut self) -> Option<String> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.i += 1;
                Some(s)
            }
            _ => None,
        }
    }

    /// Skips one balanced group starting at an opening bracket (or one token).
    fn skip_group(&mut self) {
        let mut depth = 0usize;
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Op("(" | "[" | "{") => depth += 1,
                Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.i += 1;
            if depth == 0 {
                break;
            }
        }
    }

    /// Skips to just past the next semicolon outside brackets.
    fn skip_to_semi(&mut self) {
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Semi => {
                    self.i += 1;
                    return;
                }
                Tok::Op("(" | "[" | "{") => self.skip_group(),
                _ => self.i += 1,
            }
        }
    }

    /// Skips one statement: to the next semicolon outside brackets, or for `if`, `for`,
    /// `switch` and `select`, whose headers may hold semicolons, past the block (and its
    /// `else`s).
    fn skip_stmt(&mut self) {
        let compound = matches!(
            self.peek(),
            Some(Tok::Ident(kw)) if matches!(kw.as_str(), "if" | "for" | "switch" | "select")
        );
        if !compound {
            self.skip_to_semi();
            return;
        }
        loop {
            while let Some(tok) = self.peek() {
                match tok {
                    Tok::Op("{") => break,
                    Tok::Op("(" | "[") => self.skip_group(),
                    _ => self.i += 1,
                }
            }
            self.skip_group();
            if !matches!(self.peek(), Some(Tok::Ident(kw)) if kw == "else") {
                break;
            }
        }
        self.eat_semi();
    }

    /// Skips to the end of an expression: the next `,` `;` or closing bracket outside
    /// brackets (not consumed).
    fn skip_expr(&mut self) {
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Semi | Tok::Op("," | ")" | "]" | "}") => return,
                Tok::Op("(" | "[" | "{") => self.skip_group(),
                _ => self.i += 1,
            }
        }
    }

    /// The tokens from `start` to here, as Go-ish text, shortened.
    fn quote(&self, start: usize) -> String {
        let end = self.i.max(start + 1).min(self.t.len());
        let toks = &self.t[start.min(end)..end];
        let mut s = toks
            .iter()
            .take(QUOTE_TOKENS)
            .map(|t| text(&t.tok))
            .collect::<Vec<_>>()
            .join(" ");
        if toks.len() > QUOTE_TOKENS {
            s.push_str(" …");
        }
        s
    }

    /// `a, b T = x, y` up to the end of the spec.
    fn value_spec(&mut self) -> Vec<Binding> {
        let mut names = Vec::new();
        while let Some(name) = self.ident() {
            names.push((name, self.t[self.i - 1].line, self.t[self.i - 1].col));
            if !self.eat_op(",") {
                break;
            }
        }
        let ty_start = self.i;
        while self.peek().is_some() && !self.is_op("=") && self.peek() != Some(&Tok::Semi) {
            if matches!(self.peek(), Some(Tok::Op("(" | "[" | "{"))) {
                self.skip_group();
            } else {
                self.i += 1;
            }
        }
        let ty = (self.i > ty_start).then(|| type_text(&self.t[ty_start..self.i]));
        let mut values = Vec::new();
        if self.eat_op("=") {
            loop {
                values.push(self.expr());
                if !self.eat_op(",") {
                    break;
                }
            }
        }
        self.skip_to_semi();
        names
            .into_iter()
            .enumerate()
            .map(|(k, (name, line, col))| Binding {
                name,
                ty: ty.clone(),
                value: values.get(k).cloned(),
                at: Pos { line, col },
            })
            .collect()
    }

    fn func(&mut self) -> Option<Func> {
        let at = self.pos();
        self.i += 1; // func
        let method = self.is_op("(");
        if method {
            self.skip_group();
        }
        let Some(name) = self.ident() else {
            self.skip_to_semi();
            return None;
        };
        let mut params = false;
        if self.is_op("[") {
            params = true;
            self.skip_group();
        }
        if self.is_op("(") {
            params |= !matches!(self.peek_at(1), Some(Tok::Op(")")));
            self.skip_group();
        }
        let result_start = self.i;
        while self.peek().is_some() && !self.is_op("{") && self.peek() != Some(&Tok::Semi) {
            if self.is_op("(") {
                self.skip_group();
            } else {
                self.i += 1;
            }
        }
        let result = type_text(&self.t[result_start..self.i]);
        if !self.is_op("{") {
            self.skip_to_semi(); // a declaration without a body
            return None;
        }
        let body_start = self.i + 1;
        self.skip_group();
        let body_end = self.i.saturating_sub(1).max(body_start);
        let body_toks = &self.t[body_start..body_end];
        let names = body_toks
            .iter()
            .filter_map(|t| match &t.tok {
                Tok::Ident(s) => Some((
                    s.clone(),
                    Pos {
                        line: t.line,
                        col: t.col,
                    },
                )),
                _ => None,
            })
            .collect();
        let body = statements(body_toks);
        self.eat_semi();
        Some(Func {
            name,
            method,
            params,
            result,
            body,
            names,
            body_digest: digest(body_toks),
            at,
        })
    }

    fn stmt(&mut self) -> Stmt {
        let start = self.i;
        let at = self.pos();
        let other = |p: &mut Parser| {
            p.i = start;
            p.skip_stmt();
            let mut end = p.i;
            if end > start && p.t.get(end - 1).is_some_and(|t| t.tok == Tok::Semi) {
                end -= 1;
            }
            let q = Parser { t: p.t, i: end };
            Stmt::Other(q.quote(start), at)
        };
        let stmt = match (self.peek(), self.peek_at(1)) {
            (Some(Tok::Ident(kw)), _) if kw == "return" => {
                self.i += 1;
                let e = self.expr();
                Stmt::Return(e, at)
            }
            (Some(Tok::Ident(kw)), Some(Tok::Ident(_))) if kw == "var" => {
                self.i += 1;
                let name = self.ident().unwrap_or_default();
                while self.peek().is_some() && !self.is_op("=") && self.peek() != Some(&Tok::Semi) {
                    self.i += 1;
                }
                if !self.eat_op("=") {
                    return other(self);
                }
                Stmt::Define(name, self.expr(), at)
            }
            (Some(Tok::Ident(_)), Some(Tok::Op(":="))) => {
                let name = self.ident().unwrap_or_default();
                self.i += 1;
                Stmt::Define(name, self.expr(), at)
            }
            (Some(Tok::Ident(_)), Some(Tok::Op("["))) => {
                let name = self.ident().unwrap_or_default();
                self.i += 1;
                let key = self.expr();
                if !self.eat_op("]") || !self.eat_op("=") {
                    return other(self);
                }
                let value = self.expr();
                Stmt::IndexAssign {
                    name,
                    key,
                    value,
                    at,
                }
            }
            _ => return other(self),
        };
        // A statement is one of the forms only when it ends here.
        if self.peek().is_some() && !self.eat_semi() {
            return other(self);
        }
        stmt
    }

    /// One expression; never fails: a form it does not read is `Unread`.
    fn expr(&mut self) -> Expr {
        let start = self.i;
        let at = self.pos();
        let unread = |p: &mut Parser| {
            p.i = start;
            p.skip_expr();
            Expr {
                kind: ExprKind::Unread(p.quote(start)),
                at,
            }
        };
        let Some(e) = self.operand() else {
            return unread(self);
        };
        // A binary operator or anything else after the operand: not a form read here.
        match self.peek() {
            None | Some(Tok::Semi | Tok::Op("," | ")" | "]" | "}" | ":")) => e,
            _ => unread(self),
        }
    }

    fn operand(&mut self) -> Option<Expr> {
        let at = self.pos();
        let kind = match self.peek()?.clone() {
            Tok::Str(s) => {
                self.i += 1;
                ExprKind::Str(s)
            }
            Tok::Int(s) => {
                self.i += 1;
                ExprKind::Int(s)
            }
            Tok::Float(s) => {
                self.i += 1;
                ExprKind::Float(s)
            }
            Tok::Char(c) => {
                self.i += 1;
                ExprKind::Char(c)
            }
            Tok::Op("-") => {
                // Only a number follows (`- -1` is not read): no recursion on a run of `-`.
                self.i += 1;
                let inner = Expr {
                    at: self.pos(),
                    kind: match self.peek()?.clone() {
                        Tok::Int(s) => ExprKind::Int(s),
                        Tok::Float(s) => ExprKind::Float(s),
                        _ => return None,
                    },
                };
                self.i += 1;
                ExprKind::Neg(Box::new(inner))
            }
            Tok::Op("{") => self.composite(None)?,
            Tok::Op("[") => {
                let ty = self.type_expr()?;
                if !self.is_op("{") {
                    return None;
                }
                self.composite(Some(ty))?
            }
            Tok::Ident(kw) if kw == "map" => {
                let ty = self.type_expr()?;
                if !self.is_op("{") {
                    return None;
                }
                self.composite(Some(ty))?
            }
            Tok::Ident(kw) if kw == "func" => {
                self.i += 1;
                if !self.is_op("(") {
                    return None;
                }
                let params = self.param_names()?;
                let result_start = self.i;
                while self.peek().is_some() && !self.is_op("{") && self.peek() != Some(&Tok::Semi) {
                    if matches!(self.peek(), Some(Tok::Op("(" | "["))) {
                        self.skip_group();
                    } else {
                        self.i += 1;
                    }
                }
                if !self.is_op("{") {
                    return None;
                }
                let result = type_text(&self.t[result_start..self.i]);
                let body_start = self.i + 1;
                self.skip_group();
                if !matches!(self.t.get(self.i.checked_sub(1)?), Some(t) if t.tok == Tok::Op("}")) {
                    return None; // the body is not closed
                }
                let body = statements(&self.t[body_start..self.i - 1]);
                ExprKind::Func {
                    params,
                    result,
                    body,
                }
            }
            Tok::Ident(mut name) => {
                self.i += 1;
                if self.is_op(".") {
                    self.i += 1;
                    name = format!("{name}.{}", self.ident()?);
                }
                if self.is_op("{") {
                    self.composite(Some(name))?
                } else if self.eat_op("(") {
                    let mut args = Vec::new();
                    while !self.eat_op(")") {
                        self.peek()?;
                        args.push(self.expr());
                        if !self.eat_op(",") && !self.is_op(")") {
                            return None;
                        }
                    }
                    ExprKind::Call { fun: name, args }
                } else {
                    ExprKind::Name(name)
                }
            }
            _ => return None,
        };
        Some(Expr { kind, at })
    }

    /// The parameter list at `(`: the names, or `Some(None)` when the parameters are not
    /// named (Go names all of them or none: `a, b int` is two named, `int, string` none).
    #[allow(clippy::option_option)] // None: not a parameter list; Some(None): unnamed ones
    fn param_names(&mut self) -> Option<Option<Vec<String>>> {
        let start = self.i;
        self.skip_group();
        if !matches!(self.t.get(self.i.checked_sub(1)?), Some(t) if t.tok == Tok::Op(")")) {
            return None;
        }
        let inner = &self.t[start + 1..self.i - 1];
        let mut parts: Vec<Vec<&Tok>> = vec![Vec::new()];
        let mut depth = 0usize;
        for t in inner {
            match &t.tok {
                Tok::Op("(" | "[" | "{") => depth += 1,
                Tok::Op(")" | "]" | "}") => depth = depth.saturating_sub(1),
                Tok::Op(",") if depth == 0 => {
                    parts.push(Vec::new());
                    continue;
                }
                _ => {}
            }
            if let Some(last) = parts.last_mut() {
                last.push(&t.tok);
            }
        }
        if inner.is_empty() {
            return Some(Some(Vec::new()));
        }
        if parts.iter().all(|p| p.len() <= 1) {
            return Some(None);
        }
        let names = parts.iter().map(|p| match p.first() {
            Some(Tok::Ident(n)) => Some(n.clone()),
            _ => None,
        });
        Some(names.collect())
    }

    /// `{elems…}` at `{`, of type `ty`.
    fn composite(&mut self, ty: Option<String>) -> Option<ExprKind> {
        if !self.eat_op("{") {
            return None;
        }
        let mut elems = Vec::new();
        while !self.eat_op("}") {
            self.peek()?;
            let first = self.expr();
            let elem = if self.eat_op(":") {
                Elem {
                    key: Some(first),
                    value: self.expr(),
                }
            } else {
                Elem {
                    key: None,
                    value: first,
                }
            };
            elems.push(elem);
            if !self.eat_op(",") && !self.is_op("}") {
                return None;
            }
        }
        Some(ExprKind::Composite { ty, elems })
    }

    /// A type at `[` or `map`: `[]T`, `[N]T`, `map[K]V`, `pkg.T`, `*T`, as text.
    fn type_expr(&mut self) -> Option<String> {
        let start = self.i;
        // Prefixes (`[]`, `[N]`, `*`, `map[K]`) in a loop, then the element type's name.
        loop {
            match self.peek()? {
                Tok::Op("[") => self.skip_group(),
                Tok::Op("*") => self.i += 1,
                Tok::Ident(kw) if kw == "map" => {
                    self.i += 1;
                    if !self.is_op("[") {
                        return None;
                    }
                    self.skip_group();
                }
                Tok::Ident(_) => {
                    self.i += 1;
                    if self.eat_op(".") {
                        self.ident()?;
                    }
                    break;
                }
                _ => return None,
            }
        }
        Some(type_text(&self.t[start..self.i]))
    }
}

/// The statements of a function body (the tokens inside its braces).
fn statements(tokens: &[Token]) -> Vec<Stmt> {
    let mut p = Parser { t: tokens, i: 0 };
    let mut out = Vec::new();
    while p.peek().is_some() {
        if p.eat_semi() {
            continue;
        }
        out.push(p.stmt());
    }
    out
}

/// FNV-1a over the tokens' text, each followed by a separator.
fn digest(tokens: &[Token]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in tokens {
        for b in text(&t.tok).bytes().chain([0x1f]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Tokens written without spaces, as Go types are compared here (`map[string]any`).
fn type_text(tokens: &[Token]) -> String {
    tokens.iter().map(|t| text(&t.tok)).collect()
}

fn text(t: &Tok) -> String {
    match t {
        Tok::Ident(s) | Tok::Int(s) | Tok::Float(s) => s.clone(),
        Tok::Str(s) => format!("{s:?}"),
        Tok::Char(c) => format!("{c:?}"),
        Tok::Op(o) => (*o).to_string(),
        Tok::Semi => ";".into(),
    }
}

#[cfg(test)]
mod tests;
