//! Go tokens: identifiers, literals, operators and the semicolons Go inserts at line ends,
//! each with its 1-based line and column (in characters). Comments are dropped.

/// One token's kind and text.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier or a keyword.
    Ident(String),
    /// An integer literal as written (`12`, `0x1F`, `1_000`).
    Int(String),
    /// A floating-point literal as written (`2.0`, `1e3`).
    Float(String),
    /// A string literal, interpreted (`"a\n"`) or raw (`` `a` ``), as its value.
    Str(String),
    /// A rune literal (`'x'`), as its value.
    Char(char),
    /// An operator or punctuation (`{`, `:=`, `...`).
    Op(&'static str),
    /// `;`, written or inserted at the end of a line.
    Semi,
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

/// Why the text is not Go tokens, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

/// Longest first, so `:=` wins over `:`.
const OPS: [&str; 47] = [
    "<<=", ">>=", "&^=", "...", "&&", "||", "<-", "++", "--", "==", "!=", "<=", ">=", ":=", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "&^", "+", "-", "*", "/", "%", "&", "|",
    "^", "<", ">", "=", "!", "(", ")", "[", "]", "{", "}", ",", ".", ":", "~",
];

/// Keywords after which a line end is not a semicolon (the Go spec inserts one after an
/// identifier and after `break`, `continue`, `fallthrough` and `return` only).
const KEYWORDS: [&str; 21] = [
    "case",
    "chan",
    "const",
    "default",
    "defer",
    "else",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "import",
    "interface",
    "map",
    "package",
    "range",
    "select",
    "struct",
    "switch",
    "type",
    "var",
];

/// Whether a line end after `t` is a semicolon.
fn ends_statement(t: &Tok) -> bool {
    match t {
        Tok::Ident(s) => !KEYWORDS.contains(&s.as_str()),
        Tok::Int(_) | Tok::Float(_) | Tok::Str(_) | Tok::Char(_) => true,
        Tok::Op(op) => matches!(*op, ")" | "]" | "}" | "++" | "--"),
        Tok::Semi => false,
    }
}

/// Splits Go source text into tokens, inserting the semicolons Go's grammar implies.
pub fn lex(text: &str) -> Result<Vec<Token>, LexError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<Token> = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let err = |line, col, message: &str| LexError {
        line,
        col,
        message: message.to_string(),
    };
    // A line end (or a comment holding one) closes a statement after some tokens.
    let newline = |out: &mut Vec<Token>, line, col| {
        if out.last().is_some_and(|t| ends_statement(&t.tok)) {
            out.push(Token {
                tok: Tok::Semi,
                line,
                col,
            });
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let (start_line, start_col) = (line, col);
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            newline(&mut out, line, col);
            i += 1;
            line += 1;
            col = 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
                col += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut had_newline = false;
            i += 2;
            col += 2;
            loop {
                match chars.get(i) {
                    None => return Err(err(start_line, start_col, "unterminated comment")),
                    Some('*') if chars.get(i + 1) == Some(&'/') => {
                        i += 2;
                        col += 2;
                        break;
                    }
                    Some('\n') => {
                        if !had_newline {
                            newline(&mut out, line, col);
                        }
                        had_newline = true;
                        i += 1;
                        line += 1;
                        col = 1;
                    }
                    Some(_) => {
                        i += 1;
                        col += 1;
                    }
                }
            }
            continue;
        }
        let tok = if c.is_alphabetic() || c == '_' {
            let mut s = String::new();
            while let Some(&d) = chars.get(i).filter(|d| d.is_alphanumeric() || **d == '_') {
                s.push(d);
                i += 1;
                col += 1;
            }
            Tok::Ident(s)
        } else if c.is_ascii_digit() || (c == '.' && next.is_some_and(|d| d.is_ascii_digit())) {
            let mut s = String::new();
            let hex = c == '0' && matches!(next, Some('x' | 'X'));
            while let Some(&d) = chars.get(i) {
                let exponent_sign = matches!(d, '+' | '-')
                    && s.ends_with(|e: char| {
                        if hex {
                            matches!(e, 'p' | 'P')
                        } else {
                            matches!(e, 'e' | 'E')
                        }
                    });
                if !(d.is_ascii_alphanumeric() || d == '_' || d == '.' || exponent_sign) {
                    break;
                }
                s.push(d);
                i += 1;
                col += 1;
            }
            let float = if hex {
                s.contains(['p', 'P'])
            } else {
                s.contains(['.', 'e', 'E'])
            };
            if float { Tok::Float(s) } else { Tok::Int(s) }
        } else if c == '"' {
            i += 1;
            col += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None | Some('\n') => {
                        return Err(err(start_line, start_col, "unterminated string"));
                    }
                    Some('"') => {
                        i += 1;
                        col += 1;
                        break;
                    }
                    Some('\\') => {
                        let (ch, used) = escape(&chars[i..], '"')
                            .ok_or_else(|| err(line, col, "unknown escape sequence in a string"))?;
                        s.extend(ch);
                        i += used;
                        col += used as u32;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                        col += 1;
                    }
                }
            }
            Tok::Str(s)
        } else if c == '`' {
            i += 1;
            col += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => return Err(err(start_line, start_col, "unterminated raw string")),
                    Some('`') => {
                        i += 1;
                        col += 1;
                        break;
                    }
                    Some('\n') => {
                        s.push('\n');
                        i += 1;
                        line += 1;
                        col = 1;
                    }
                    Some('\r') => {
                        i += 1;
                        col += 1;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                        col += 1;
                    }
                }
            }
            Tok::Str(s)
        } else if c == '\'' {
            let (ch, used) = match next {
                Some('\\') => escape(&chars[i + 1..], '\'')
                    .and_then(|(ch, used)| ch.map(|ch| (ch, used)))
                    .ok_or_else(|| err(line, col, "unknown escape sequence in a rune"))?,
                Some(ch) if ch != '\'' && ch != '\n' => (ch, 1),
                _ => return Err(err(line, col, "empty or unterminated rune literal")),
            };
            if chars.get(i + 1 + used) != Some(&'\'') {
                return Err(err(line, col, "unterminated rune literal"));
            }
            i += used + 2;
            col += used as u32 + 2;
            Tok::Char(ch)
        } else if let Some(op) = OPS.iter().find(|op| {
            op.chars()
                .enumerate()
                .all(|(k, o)| chars.get(i + k) == Some(&o))
        }) {
            let n = op.chars().count();
            i += n;
            col += n as u32;
            Tok::Op(op)
        } else if c == ';' {
            i += 1;
            col += 1;
            Tok::Semi
        } else {
            return Err(err(line, col, &format!("unexpected character {c:?}")));
        };
        out.push(Token {
            tok,
            line: start_line,
            col: start_col,
        });
    }
    newline(&mut out, line, col);
    Ok(out)
}

/// One escape sequence at `s[0] == '\\'`: its character (`None` for a byte that is no
/// character on its own, which this reader drops) and how many chars it took.
fn escape(s: &[char], quote: char) -> Option<(Option<char>, usize)> {
    let simple = |c| Some((Some(c), 2));
    match s.get(1)? {
        'a' => simple('\u{7}'),
        'b' => simple('\u{8}'),
        'f' => simple('\u{c}'),
        'n' => simple('\n'),
        'r' => simple('\r'),
        't' => simple('\t'),
        'v' => simple('\u{b}'),
        '\\' => simple('\\'),
        c if *c == quote => simple(*c),
        'x' => hex(s, 2).map(|v| (char::from_u32(v).filter(|_| v < 0x80), 4)),
        'u' => hex(s, 4).map(|v| (char::from_u32(v), 6)),
        'U' => hex(s, 8).map(|v| (char::from_u32(v), 10)),
        '0'..='7' => {
            let digits: String = s.get(1..4)?.iter().collect();
            let v = u32::from_str_radix(&digits, 8).ok()?;
            Some((char::from_u32(v).filter(|_| v < 0x80), 4))
        }
        _ => None,
    }
}

fn hex(s: &[char], n: usize) -> Option<u32> {
    let digits: String = s.get(2..2 + n)?.iter().collect();
    u32::from_str_radix(&digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        lex(text)
            .expect("lexes")
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    fn ident(s: &str) -> Tok {
        Tok::Ident(s.into())
    }

    #[test]
    fn semicolons_are_inserted_where_go_inserts_them() {
        assert_eq!(
            toks("x := []int{\n\t1,\n}\nreturn x // done\n"),
            vec![
                ident("x"),
                Tok::Op(":="),
                Tok::Op("["),
                Tok::Op("]"),
                ident("int"),
                Tok::Op("{"),
                Tok::Int("1".into()),
                Tok::Op(","),
                Tok::Op("}"),
                Tok::Semi,
                ident("return"),
                ident("x"),
                Tok::Semi,
            ]
        );
        // No semicolon after an operator or a keyword that cannot end a statement.
        assert_eq!(
            toks("func f(\n)"),
            vec![
                ident("func"),
                ident("f"),
                Tok::Op("("),
                Tok::Op(")"),
                Tok::Semi
            ]
        );
    }

    #[test]
    fn literals_and_comments() {
        assert_eq!(
            toks(r#""a\"b\n\u00e9" `raw\n` 'x' '\'' 0x1F 1_000 2.5 1e-3 .5 /* c */"#),
            vec![
                Tok::Str("a\"b\né".into()),
                Tok::Str("raw\\n".into()),
                Tok::Char('x'),
                Tok::Char('\''),
                Tok::Int("0x1F".into()),
                Tok::Int("1_000".into()),
                Tok::Float("2.5".into()),
                Tok::Float("1e-3".into()),
                Tok::Float(".5".into()),
                Tok::Semi,
            ]
        );
        // A block comment over a line end ends the statement like the line end would.
        assert_eq!(
            toks("a /*\n*/ b"),
            vec![ident("a"), Tok::Semi, ident("b"), Tok::Semi]
        );
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let t = lex("é := 1\n\t`a\nb` x").expect("lexes");
        let at: Vec<(u32, u32)> = t.iter().map(|t| (t.line, t.col)).collect();
        assert_eq!(
            at,
            vec![(1, 1), (1, 3), (1, 6), (1, 7), (2, 2), (3, 4), (3, 5)]
        );
    }

    #[test]
    fn broken_text_is_an_error_with_its_place() {
        let e = lex("x := \"abc\ny").expect_err("unterminated");
        assert_eq!(
            (e.line, e.col, e.message.as_str()),
            (1, 6, "unterminated string")
        );
        let e = lex("a\n  # b").expect_err("bad char");
        assert_eq!((e.line, e.col), (2, 3));
        assert!(lex("/* open").is_err());
        assert!(lex("'ab'").is_err());
        assert!(lex(r#""\q""#).is_err());
    }
}
