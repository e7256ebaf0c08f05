//! Tests of the module above.

use super::*;
use crate::gogobee::lex::lex;

fn file(src: &str) -> File {
    parse_file(&lex(src).expect("lexes"))
}

fn expr(src: &str) -> ExprKind {
    let f = file(&format!("var x = {src}\n"));
    f.vars[0].value.clone().expect("a value").kind
}

#[test]
fn top_level_declarations() {
    let f = file(
        r#"package p

import (
	"fmt"
)

type K string

const (
	A K = "a" // one
	B, C = 1, -2
	D
)
const E = 2.5

var R = map[K][]int{A: {1, 2}}

func (g K) m() K { return g }
func zoneX() ZoneDefinition {
	return ZoneDefinition{ID: A}
}
func p(a int) (int, bool) { if a > 0 { return a, true }; return 0, false }
"#,
    );
    let consts: Vec<(&str, Option<&str>)> = f
        .consts
        .iter()
        .map(|c| (c.name.as_str(), c.ty.as_deref()))
        .collect();
    assert_eq!(
        consts,
        vec![
            ("A", Some("K")),
            ("B", None),
            ("C", None),
            ("D", None),
            ("E", None)
        ]
    );
    assert_eq!(f.consts[0].at, Pos { line: 10, col: 2 });
    assert!(f.consts[3].value.is_none());
    assert_eq!(
        f.consts[2].value.as_ref().map(|v| &v.kind),
        Some(&ExprKind::Neg(Box::new(Expr {
            kind: ExprKind::Int("2".into()),
            at: Pos { line: 11, col: 13 }
        })))
    );
    assert_eq!(f.vars[0].name, "R");
    let funcs: Vec<(&str, bool, bool, &str)> = f
        .funcs
        .iter()
        .map(|g| (g.name.as_str(), g.method, g.params, g.result.as_str()))
        .collect();
    assert_eq!(
        funcs,
        vec![
            ("m", true, false, "K"),
            ("zoneX", false, false, "ZoneDefinition"),
            ("p", false, true, "(int,bool)"),
        ]
    );
    assert!(matches!(f.funcs[1].body[..], [Stmt::Return(..)]));
    assert!(matches!(
        f.funcs[2].body[..],
        [Stmt::Other(..), Stmt::Other(..)]
    ));
}

#[test]
fn expressions_of_the_read_forms() {
    assert_eq!(expr("\"s\""), ExprKind::Str("s".into()));
    assert_eq!(expr("fmt.X"), ExprKind::Name("fmt.X".into()));
    let ExprKind::Composite { ty, elems } = expr("[]T{{A: 1}, {B: map[string]any{\"dc\": 2}}}")
    else {
        panic!("a composite")
    };
    assert_eq!(ty.as_deref(), Some("[]T"));
    assert_eq!(elems.len(), 2);
    let ExprKind::Composite {
        ty: None,
        elems: inner,
    } = &elems[1].value.kind
    else {
        panic!("an elided composite")
    };
    let ExprKind::Composite { ty, .. } = &inner[0].value.kind else {
        panic!("a map")
    };
    assert_eq!(ty.as_deref(), Some("map[string]any"));
    assert!(matches!(
        expr("F(Z, \"a\")"),
        ExprKind::Call { fun, args } if fun == "F" && args.len() == 2
    ));
}

#[test]
fn other_forms_are_unread_with_their_text() {
    assert_eq!(expr("1 + 2"), ExprKind::Unread("1 + 2".into()));
    // A function literal called where it is written.
    assert_eq!(
        expr("func(a int) T { return T{a} }(2)"),
        ExprKind::Unread("func ( a int ) T { return …".into())
    );
    // An unread value inside a composite does not spoil its neighbours.
    let ExprKind::Composite { elems, .. } = expr("T{A: x * 2, B: 3}") else {
        panic!("a composite")
    };
    assert_eq!(elems[0].value.kind, ExprKind::Unread("x * 2".into()));
    assert_eq!(elems[1].value.kind, ExprKind::Int("3".into()));
}

#[test]
fn function_literals_with_their_parameters_and_body() {
    let ExprKind::Func {
        params,
        result,
        body,
    } = expr("func(s string, dc, n int, hint string) pgLock {\n\treturn pgLock{hint: hint}\n}")
    else {
        panic!("a function literal")
    };
    assert_eq!(
        params,
        Some(vec!["s".into(), "dc".into(), "n".into(), "hint".into()])
    );
    assert_eq!(result, "pgLock");
    assert!(matches!(
        &body[..],
        [Stmt::Return(Expr { kind: ExprKind::Composite { ty: Some(t), .. }, .. }, _)] if t == "pgLock"
    ));
    assert!(matches!(
        expr("func(int, string) (T, bool) { return T{}, true }"),
        ExprKind::Func { params: None, result, .. } if result == "(T,bool)"
    ));
    assert!(matches!(
        expr("func() {}"),
        ExprKind::Func { params: Some(p), body, .. } if p.is_empty() && body.is_empty()
    ));
}

#[test]
fn a_body_digest_ignores_comments_and_layout() {
    let a = file("func f() int {\n\treturn g(1, 2) // why\n}\n");
    let b = file("func f() int {\n\treturn g(1,\n\t\t2)\n}\n");
    let c = file("func f() int {\n\treturn g(1, 3)\n}\n");
    assert_eq!(a.funcs[0].body_digest, b.funcs[0].body_digest);
    assert_ne!(a.funcs[0].body_digest, c.funcs[0].body_digest);
}

#[test]
fn statements_of_the_read_forms() {
    let f = file(
        "func g() ZoneGraph {\n\tn := []N{}\n\tvar e = []E{}\n\tm[K] = []R{}\n\tn = append(n, x)\n\treturn B(Z, n, e)\n\tfor i := 0; i < 2; i++ {\n\t\tx++\n\t}\n\tif a { b() } else if c { d() } else { e() }\n}\n",
    );
    let body = &f.funcs[0].body;
    assert!(matches!(&body[0], Stmt::Define(n, _, _) if n == "n"));
    assert!(matches!(&body[1], Stmt::Define(n, _, _) if n == "e"));
    assert!(matches!(&body[2], Stmt::IndexAssign { name, .. } if name == "m"));
    assert_eq!(
        body[3],
        Stmt::Other("n = append ( n , x )".into(), Pos { line: 5, col: 2 })
    );
    assert!(matches!(&body[4], Stmt::Return(..)));
    assert_eq!(
        body[5],
        Stmt::Other("for i := 0 ; i < 2 …".into(), Pos { line: 7, col: 2 })
    );
    assert!(matches!(&body[6], Stmt::Other(t, _) if t.starts_with("if a {")));
    assert_eq!(body.len(), 7);
    assert!(f.funcs[0].names.iter().any(|(n, _)| n == "Z"));
}

#[test]
fn malformed_input_never_panics() {
    for src in [
        "func",
        "func (",
        "func f(",
        "const (",
        "var x = ",
        "var x = []",
        "var x = T{",
        "var x = T{a:",
        "var x = F(",
        "var x = -",
        "func f() T { return",
        "}}}",
        "x[",
        "func f() { m[ }",
        "var x = func(",
        "var x = func(a int",
        "var x = func(a int) T {",
        "var x = func(a int) T { return",
        "var x = func(a, int) T",
    ] {
        let _ = file(src);
    }
}
