//! gogobee's Tier-6 ("postgame") zone graphs, which gogobee builds with a helper,
//! `buildPostgameZoneGraph(pgZoneSpec{…})`: the spec literal read into a [`Spec`], and
//! [`build`], the helper ported, which makes the same rooms and passages gogobee's makes.
//!
//! The shape (one for all five zones, so each zone's longest route is 46 rooms):
//!
//! - region 0: `entry`, `p1`…`p12`, `fork1`, in a line;
//! - region 1: from `fork1` a free spur `f1a1…3` (weight 1) and a spur `f1b1…3` (weight 2)
//!   whose first passage carries `fork1.lock`, both to `r2gate`; then `r2b1`…`r2b6`, `fork2`;
//! - region 2: the same from `fork2` (`f2a…`, `f2b…`) to `r3gate`; `r3b1`…`r3b6`, `fork3`;
//! - region 3: from `fork3` three spurs to `merge`, `cap11…13` free (weight 1), `cap21…23`
//!   behind `lockA` (weight 2), `cap31…33` behind `lockB` (weight 3); then `ap1`…`ap5`, `boss`.
//!
//! Ids are `<zone>.<suffix>`; rooms lie on row 2 at columns 0…45, spurs on rows 1–3. `p7`
//! is a trap and `r2b6`, `r3b6` elites before the spec's `overrides` (by suffix) retype a
//! room or set its loot bias; an override of a suffix the graph lacks changes nothing, as in
//! gogobee. A room is the entry or the boss when its final kind says so. A lock whose kind
//! is empty is no lock (its data and hint are dropped), as gogobee's helper reads it.
//!
//! Reading is strict where gogobee's compiler is lenient: every label array must be given in
//! full and every label field set (a missing one would be an empty label); locks and
//! overrides may be left out, their zero values meaning "unlocked" and "none".

use std::collections::BTreeMap;

use zonegraph_core::format::{EdgeFile, LockKind, NodeFile, NodeKind};

use super::syntax::{Elem, Expr, ExprKind, Pos};

/// The helper a graph func returns the call of.
pub const BUILDER: &str = "buildPostgameZoneGraph";

/// The Go helpers [`build`] ports, each with the digest of the body it was ported from
/// ([`super::syntax::Func::body_digest`]): a source defining one with another body has
/// changed it, and its graphs are not read.
pub const PORTED: [(&str, u64); 2] = [
    ("buildPostgameZoneGraph", 0x9386_14f1_f978_3cfd),
    ("buildPostgameGraphFrom", 0xc26f_bb44_d6b8_c567),
];

/// How the values of a spec are read (the constants of the sources read), given by the
/// caller; an error says why not.
pub trait Values {
    fn string(&self, e: &Expr) -> Result<String, String>;
    fn float(&self, e: &Expr) -> Result<f64, String>;
    /// A room kind; `None` for the empty string (Go's zero value).
    fn node_kind(&self, e: &Expr) -> Result<Option<NodeKind>, String>;
    /// A lock kind; `None` for the empty string.
    fn lock_kind(&self, e: &Expr) -> Result<Option<LockKind>, String>;
    /// `map[string]any{…}` or `nil`.
    fn lock_data(&self, e: &Expr) -> Result<BTreeMap<String, serde_json::Value>, String>;
}

/// A `pgLock`: the lock on a spur's first passage. `kind: None` is gogobee's zero value,
/// an unlocked passage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lock {
    pub kind: Option<LockKind>,
    pub data: BTreeMap<String, serde_json::Value>,
    pub hint: String,
}

/// A `pgNodeOverride`: `kind: None` keeps the room's kind, a zero `bias` its loot bias.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Override {
    pub kind: Option<NodeKind>,
    pub bias: f64,
}

/// A `pgFork`: a free spur and a locked one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fork {
    pub label: String,
    pub free: [String; 3],
    pub locked: [String; 3],
    pub lock: Lock,
}

/// A `pgCapstone`: the last fork, a free spur and two locked ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Capstone {
    pub label: String,
    pub free: [String; 3],
    pub a: [String; 3],
    pub lock_a: Lock,
    pub b: [String; 3],
    pub lock_b: Lock,
}

/// A `pgZoneSpec`, read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spec {
    pub zone_id: String,
    pub regions: [String; 4],
    pub entry: String,
    pub preamble: [String; 12],
    pub fork1: Fork,
    pub r2gate: String,
    pub r2build: [String; 6],
    pub fork2: Fork,
    pub r3gate: String,
    pub r3build: [String; 6],
    pub capstone: Capstone,
    pub merge: String,
    pub approach: [String; 5],
    pub boss: String,
    pub overrides: BTreeMap<String, Override>,
}

/// A spec literal, read: its zone when that much was read, the spec when all of it was,
/// and every error, at its place.
#[derive(Debug)]
pub struct Read {
    pub zone: Option<String>,
    pub spec: Option<Spec>,
    pub errors: Vec<(Pos, String)>,
}

/// Reads `e`, a `pgZoneSpec{…}` literal (calls already expanded).
pub fn read(e: &Expr, v: &impl Values) -> Read {
    let mut r = Reader {
        v,
        errors: Vec::new(),
    };
    let mut spec = Spec::default();
    let mut zone = None;
    if let Some(fields) = r.fields(e, "pgZoneSpec", false) {
        let mut seen = Vec::new();
        for (k, val) in fields {
            seen.push(k);
            match k {
                "zoneID" => {
                    zone = r.string(val, k);
                    spec.zone_id = zone.clone().unwrap_or_default();
                }
                "regions" => r.labels(val, k, &mut spec.regions),
                "entry" => r.label(val, k, &mut spec.entry),
                "preamble" => r.labels(val, k, &mut spec.preamble),
                "fork1" => r.fork(val, k, &mut spec.fork1),
                "r2gate" => r.label(val, k, &mut spec.r2gate),
                "r2build" => r.labels(val, k, &mut spec.r2build),
                "fork2" => r.fork(val, k, &mut spec.fork2),
                "r3gate" => r.label(val, k, &mut spec.r3gate),
                "r3build" => r.labels(val, k, &mut spec.r3build),
                "capstone" => r.capstone(val, k, &mut spec.capstone),
                "merge" => r.label(val, k, &mut spec.merge),
                "approach" => r.labels(val, k, &mut spec.approach),
                "boss" => r.label(val, k, &mut spec.boss),
                "overrides" => r.overrides(val, &mut spec.overrides),
                other => r.err(
                    val.at,
                    format!("pgZoneSpec has no field {other} the importer reads"),
                ),
            }
        }
        r.required(
            e.at,
            "pgZoneSpec",
            &seen,
            &[
                "zoneID", "regions", "entry", "preamble", "fork1", "r2gate", "r2build", "fork2",
                "r3gate", "r3build", "capstone", "merge", "approach", "boss",
            ],
        );
    }
    let ok = r.errors.is_empty();
    Read {
        zone,
        spec: ok.then_some(spec),
        errors: r.errors,
    }
}

struct Reader<'v, V> {
    v: &'v V,
    errors: Vec<(Pos, String)>,
}

impl<V: Values> Reader<'_, V> {
    fn err(&mut self, at: Pos, msg: String) {
        self.errors.push((at, msg));
    }

    /// The `field: value` elements of a `ty{…}` literal (`{…}` too when `elided`).
    fn fields<'e>(
        &mut self,
        e: &'e Expr,
        ty: &str,
        elided: bool,
    ) -> Option<Vec<(&'e str, &'e Expr)>> {
        let elems = match &e.kind {
            ExprKind::Composite { ty: t, elems }
                if t.as_deref() == Some(ty) || (elided && t.is_none()) =>
            {
                elems
            }
            _ => {
                self.err(e.at, format!("{} is not a {ty}{{…}} literal", quoted(e)));
                return None;
            }
        };
        let mut out: Vec<(&str, &Expr)> = Vec::new();
        for Elem { key, value } in elems {
            match key.as_ref().map(|k| &k.kind) {
                Some(ExprKind::Name(k)) if !k.contains('.') => {
                    if out.iter().any(|(seen, _)| seen == k) {
                        self.err(value.at, format!("a {ty} sets {k} twice"));
                        return None;
                    }
                    out.push((k, value));
                }
                _ => {
                    self.err(
                        value.at,
                        format!(
                            "a {ty} has an element without a field name; only `field: value` \
                             elements are read"
                        ),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// Reports each of `need` that `seen` lacks, at the literal.
    fn required(&mut self, at: Pos, ty: &str, seen: &[&str], need: &[&str]) {
        let missing: Vec<&str> = need.iter().filter(|f| !seen.contains(f)).copied().collect();
        if !missing.is_empty() {
            self.err(
                at,
                format!(
                    "this {ty} sets no {}; buildPostgameZoneGraph names a room or region with \
                     each",
                    missing.join(", ")
                ),
            );
        }
    }

    fn string(&mut self, e: &Expr, field: &str) -> Option<String> {
        match self.v.string(e) {
            Ok(s) => Some(s),
            Err(msg) => {
                self.err(e.at, format!("cannot read {field}: {msg}"));
                None
            }
        }
    }

    fn label(&mut self, e: &Expr, field: &str, out: &mut String) {
        if let Some(s) = self.string(e, field) {
            *out = s;
        }
    }

    /// A `[N]string{…}` (or `[...]string{…}`) of exactly N strings.
    fn labels<const N: usize>(&mut self, e: &Expr, field: &str, out: &mut [String; N]) {
        let elems = match &e.kind {
            ExprKind::Composite { ty: Some(t), elems }
                if *t == format!("[{N}]string") || t == "[...]string" =>
            {
                elems
            }
            _ => {
                self.err(
                    e.at,
                    format!(
                        "cannot read {field}: {} is not a [{N}]string{{…}} literal",
                        quoted(e)
                    ),
                );
                return;
            }
        };
        if elems.len() != N {
            self.err(
                e.at,
                format!(
                    "{field} has {} labels where buildPostgameZoneGraph makes {N} rooms; each \
                     is given (a missing one would be an empty label)",
                    elems.len()
                ),
            );
            return;
        }
        for (slot, el) in out.iter_mut().zip(elems) {
            if el.key.is_some() {
                self.err(
                    el.value.at,
                    format!("cannot read {field}: an indexed element is not read"),
                );
                continue;
            }
            self.label(&el.value, field, slot);
        }
    }

    fn fork(&mut self, e: &Expr, field: &str, out: &mut Fork) {
        let Some(fields) = self.fields(e, "pgFork", false) else {
            return;
        };
        let mut seen = Vec::new();
        for (k, val) in fields {
            seen.push(k);
            let f = format!("{field}.{k}");
            match k {
                "label" => self.label(val, &f, &mut out.label),
                "freeLabel" => self.labels(val, &f, &mut out.free),
                "lockLabel" => self.labels(val, &f, &mut out.locked),
                "lock" => self.lock(val, &f, &mut out.lock),
                other => self.err(
                    val.at,
                    format!("pgFork has no field {other} the importer reads"),
                ),
            }
        }
        self.required(e.at, "pgFork", &seen, &["label", "freeLabel", "lockLabel"]);
    }

    fn capstone(&mut self, e: &Expr, field: &str, out: &mut Capstone) {
        let Some(fields) = self.fields(e, "pgCapstone", false) else {
            return;
        };
        let mut seen = Vec::new();
        for (k, val) in fields {
            seen.push(k);
            let f = format!("{field}.{k}");
            match k {
                "label" => self.label(val, &f, &mut out.label),
                "freeLabel" => self.labels(val, &f, &mut out.free),
                "lockALabel" => self.labels(val, &f, &mut out.a),
                "lockA" => self.lock(val, &f, &mut out.lock_a),
                "lockBLabel" => self.labels(val, &f, &mut out.b),
                "lockB" => self.lock(val, &f, &mut out.lock_b),
                other => self.err(
                    val.at,
                    format!("pgCapstone has no field {other} the importer reads"),
                ),
            }
        }
        self.required(
            e.at,
            "pgCapstone",
            &seen,
            &["label", "freeLabel", "lockALabel", "lockBLabel"],
        );
    }

    fn lock(&mut self, e: &Expr, field: &str, out: &mut Lock) {
        let Some(fields) = self.fields(e, "pgLock", false) else {
            return;
        };
        for (k, val) in fields {
            let r = match k {
                "kind" => self.v.lock_kind(val).map(|l| out.kind = l),
                "lockData" => self.v.lock_data(val).map(|d| out.data = d),
                "hint" => self.v.string(val).map(|h| out.hint = h),
                other => Err(format!("pgLock has no field {other} the importer reads")),
            };
            if let Err(msg) = r {
                self.err(val.at, format!("cannot read {field}.{k}: {msg}"));
            }
        }
    }

    fn overrides(&mut self, e: &Expr, out: &mut BTreeMap<String, Override>) {
        if matches!(&e.kind, ExprKind::Name(n) if n == "nil") {
            return;
        }
        let elems = match &e.kind {
            ExprKind::Composite { ty: Some(t), elems } if t == "map[string]pgNodeOverride" => elems,
            _ => {
                self.err(
                    e.at,
                    format!(
                        "cannot read overrides: {} is not a map[string]pgNodeOverride{{…}} \
                         literal",
                        quoted(e)
                    ),
                );
                return;
            }
        };
        for Elem { key, value } in elems {
            let Some(key) = key else {
                self.err(value.at, "an override has no key (a room's suffix)".into());
                continue;
            };
            let Some(suffix) = self.string(key, "the key of an override") else {
                continue;
            };
            let Some(fields) = self.fields(value, "pgNodeOverride", true) else {
                continue;
            };
            let mut ov = Override::default();
            for (k, val) in fields {
                let r = match k {
                    "kind" => self.v.node_kind(val).map(|n| ov.kind = n),
                    "bias" => self.v.float(val).map(|b| ov.bias = b),
                    other => Err(format!(
                        "pgNodeOverride has no field {other} the importer reads"
                    )),
                };
                if let Err(msg) = r {
                    self.err(
                        val.at,
                        format!("cannot read {k} of override {suffix:?}: {msg}"),
                    );
                }
            }
            if out.insert(suffix.clone(), ov).is_some() {
                self.err(key.at, format!("override {suffix:?} is given twice"));
            }
        }
    }
}

fn quoted(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Int(s) | ExprKind::Float(s) | ExprKind::Name(s) => s.clone(),
        ExprKind::Call { fun, .. } => format!("{fun}(…)"),
        ExprKind::Composite { ty, .. } => format!("{}{{…}}", ty.as_deref().unwrap_or("")),
        ExprKind::Unread(s) => format!("`{s}`"),
        ExprKind::Func { .. } => "func(…) {…}".into(),
        ExprKind::Char(_) | ExprKind::Neg(_) => "this value".into(),
    }
}

/// The kinds set before a spec's overrides, by suffix.
const DEFAULTS: [(&str, NodeKind); 3] = [
    ("p7", NodeKind::Trap),
    ("r2b6", NodeKind::Elite),
    ("r3b6", NodeKind::Elite),
];

/// The rooms and passages gogobee's `buildPostgameZoneGraph` makes of `s`, in its order.
pub fn build(s: &Spec) -> (Vec<NodeFile>, Vec<EdgeFile>) {
    let mut b = Builder {
        s,
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    let free = Lock::default();
    let [r1, r2, r3, r4] = &s.regions;
    use NodeKind::{Boss, Entry, Exploration, Fork as ForkKind, Merge};

    b.node("entry", &s.entry, r1, Entry, 0, 2);
    let mut prev = "entry".to_string();
    for (i, label) in s.preamble.iter().enumerate() {
        let suf = format!("p{}", i + 1);
        b.node(&suf, label, r1, Exploration, col(1 + i), 2);
        b.edge(&prev, &suf, &free, 1);
        prev = suf;
    }
    b.node("fork1", &s.fork1.label, r1, ForkKind, 13, 2);
    b.edge(&prev, "fork1", &free, 1);

    b.node("r2gate", &s.r2gate, r2, Exploration, 17, 2);
    b.spur("fork1", &s.fork1.free, &free, "r2gate", r2, "f1a", 14, 1, 1);
    b.spur(
        "fork1",
        &s.fork1.locked,
        &s.fork1.lock,
        "r2gate",
        r2,
        "f1b",
        14,
        3,
        2,
    );
    b.chain(
        "r2gate",
        "r2b",
        &s.r2build,
        r2,
        18,
        "fork2",
        &s.fork2.label,
        ForkKind,
        24,
    );

    b.node("r3gate", &s.r3gate, r3, Exploration, 28, 2);
    b.spur("fork2", &s.fork2.free, &free, "r3gate", r3, "f2a", 25, 1, 1);
    b.spur(
        "fork2",
        &s.fork2.locked,
        &s.fork2.lock,
        "r3gate",
        r3,
        "f2b",
        25,
        3,
        2,
    );
    let cap = &s.capstone;
    b.chain(
        "r3gate", "r3b", &s.r3build, r3, 29, "fork3", &cap.label, ForkKind, 35,
    );

    b.node("merge", &s.merge, r4, Merge, 39, 2);
    b.spur("fork3", &cap.free, &free, "merge", r4, "cap1", 36, 1, 1);
    b.spur("fork3", &cap.a, &cap.lock_a, "merge", r4, "cap2", 36, 2, 2);
    b.spur("fork3", &cap.b, &cap.lock_b, "merge", r4, "cap3", 36, 3, 3);
    b.chain(
        "merge",
        "ap",
        &s.approach,
        r4,
        40,
        "boss",
        &s.boss,
        Boss,
        45,
    );
    (b.nodes, b.edges)
}

/// A column: the builder's are below 50.
fn col(x: usize) -> i32 {
    i32::try_from(x).unwrap_or(i32::MAX)
}

struct Builder<'s> {
    s: &'s Spec,
    nodes: Vec<NodeFile>,
    edges: Vec<EdgeFile>,
}

impl Builder<'_> {
    fn id(&self, suffix: &str) -> String {
        format!("{}.{suffix}", self.s.zone_id)
    }

    /// gogobee's `addNode`: the default kind of the suffix, then its override.
    fn node(&mut self, suffix: &str, label: &str, region: &str, kind: NodeKind, x: i32, y: i32) {
        let kind = DEFAULTS
            .iter()
            .find(|(s, _)| *s == suffix)
            .map_or(kind, |(_, k)| *k);
        let mut n = NodeFile::plain(&self.id(suffix), kind, label, x, y);
        n.region_id = region.to_string();
        if let Some(ov) = self.s.overrides.get(suffix) {
            if let Some(k) = ov.kind {
                n.kind = k;
            }
            if ov.bias != 0.0 {
                n.content.loot_bias = ov.bias;
            }
        }
        n.is_entry = n.kind == NodeKind::Entry;
        n.is_boss = n.kind == NodeKind::Boss;
        self.nodes.push(n);
    }

    /// gogobee's `addEdge`: a lock's data and hint only with its kind.
    fn edge(&mut self, from: &str, to: &str, lock: &Lock, weight: i32) {
        let mut e = EdgeFile::open(&self.id(from), &self.id(to));
        e.weight = weight;
        if let Some(kind) = lock.kind {
            e.lock_kind = kind;
            e.lock_data = lock.data.clone();
            e.hint = lock.hint.clone();
        }
        self.edges.push(e);
    }

    /// gogobee's `spur`: three rooms from `fork` to `gate`, `lock` on the first passage, the
    /// weight on all but the last.
    #[allow(clippy::too_many_arguments)] // the Go helper's own parameters, in its order
    fn spur(
        &mut self,
        fork: &str,
        labels: &[String; 3],
        lock: &Lock,
        gate: &str,
        region: &str,
        prefix: &str,
        x: i32,
        y: i32,
        weight: i32,
    ) {
        let free = Lock::default();
        let mut prev = fork.to_string();
        for (i, label) in labels.iter().enumerate() {
            let suf = format!("{prefix}{}", i + 1);
            let i = col(i);
            self.node(&suf, label, region, NodeKind::Exploration, x + i, y);
            self.edge(&prev, &suf, if i == 0 { lock } else { &free }, weight);
            prev = suf;
        }
        self.edge(&prev, gate, &free, 1);
    }

    /// The explorations `<prefix>1…` after `from` in a line from column `x`, then the room
    /// `end` at column `end_x`.
    #[allow(clippy::too_many_arguments)] // one call per region, read side by side
    fn chain(
        &mut self,
        from: &str,
        prefix: &str,
        labels: &[String],
        region: &str,
        x: i32,
        end: &str,
        end_label: &str,
        end_kind: NodeKind,
        end_x: i32,
    ) {
        let free = Lock::default();
        let mut prev = from.to_string();
        for (i, label) in labels.iter().enumerate() {
            let suf = format!("{prefix}{}", i + 1);
            self.node(&suf, label, region, NodeKind::Exploration, x + col(i), 2);
            self.edge(&prev, &suf, &free, 1);
            prev = suf;
        }
        self.node(end, end_label, region, end_kind, end_x, 2);
        self.edge(&prev, end, &free, 1);
    }
}

#[cfg(test)]
mod tests;
