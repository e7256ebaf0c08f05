//! Findings about a zone: a stable code, a severity, a message and where.

use serde::Serialize;

/// Error or warning. `--strict` treats warnings as errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// Every finding's stable code. Codes are part of the public interface: never rename one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    // Errors.
    NoNodes,
    EntryCount,
    BossCount,
    DuplicateNode,
    UnknownNode,
    SelfLoop,
    OrphanNode,
    BossUnreachable,
    Cycle,
    BadLockData,
    UnknownRegion,
    KindFlagMismatch,
    ExtraTooLarge,
    // Warnings: authoring guidelines (enough forks, secrets worth their roll, a hint on every
    // lock) and design lints.
    TooFewForks,
    SecretLootBias,
    MissingHint,
    SoftLock,
    DeadEnd,
    KeyNeverGranted,
    LevelAboveZone,
    ImpossibleDc,
    TrivialDc,
    BossHasExits,
    TooHard,
    TooEasy,
}

impl Code {
    pub const ALL: [Code; 25] = [
        Code::NoNodes,
        Code::EntryCount,
        Code::BossCount,
        Code::DuplicateNode,
        Code::UnknownNode,
        Code::SelfLoop,
        Code::OrphanNode,
        Code::BossUnreachable,
        Code::Cycle,
        Code::BadLockData,
        Code::UnknownRegion,
        Code::KindFlagMismatch,
        Code::ExtraTooLarge,
        Code::TooFewForks,
        Code::SecretLootBias,
        Code::MissingHint,
        Code::SoftLock,
        Code::DeadEnd,
        Code::KeyNeverGranted,
        Code::LevelAboveZone,
        Code::ImpossibleDc,
        Code::TrivialDc,
        Code::BossHasExits,
        Code::TooHard,
        Code::TooEasy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::NoNodes => "no_nodes",
            Code::EntryCount => "entry_count",
            Code::BossCount => "boss_count",
            Code::DuplicateNode => "duplicate_node",
            Code::UnknownNode => "unknown_node",
            Code::SelfLoop => "self_loop",
            Code::OrphanNode => "orphan_node",
            Code::BossUnreachable => "boss_unreachable",
            Code::Cycle => "cycle",
            Code::BadLockData => "bad_lock_data",
            Code::UnknownRegion => "unknown_region",
            Code::KindFlagMismatch => "kind_flag_mismatch",
            Code::ExtraTooLarge => "extra_too_large",
            Code::TooFewForks => "too_few_forks",
            Code::SecretLootBias => "secret_loot_bias",
            Code::MissingHint => "missing_hint",
            Code::SoftLock => "soft_lock",
            Code::DeadEnd => "dead_end",
            Code::KeyNeverGranted => "key_never_granted",
            Code::LevelAboveZone => "level_above_zone",
            Code::ImpossibleDc => "impossible_dc",
            Code::TrivialDc => "trivial_dc",
            Code::BossHasExits => "boss_has_exits",
            Code::TooHard => "too_hard",
            Code::TooEasy => "too_easy",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Code::NoNodes
            | Code::EntryCount
            | Code::BossCount
            | Code::DuplicateNode
            | Code::UnknownNode
            | Code::SelfLoop
            | Code::OrphanNode
            | Code::BossUnreachable
            | Code::Cycle
            | Code::BadLockData
            | Code::UnknownRegion
            | Code::KindFlagMismatch
            | Code::ExtraTooLarge => Severity::Error,
            _ => Severity::Warning,
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An edge named by its endpoints.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct EdgeRef {
    pub from: String,
    pub to: String,
}

/// One finding. Serialises to the `--json` shape:
/// `{"severity","code","message","node"?,"edge"?:{"from","to"},"related"?:[…]}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    /// Lowercase, no trailing period; says what is wrong and, where it helps, how to fix it.
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<EdgeRef>,
    /// Rooms given as context, not findings of their own: for `soft_lock` and `dead_end`, the
    /// rooms from which a run that fails every lock can only end up here. In file order, at
    /// most [`crate::validate::MAX_RELATED_ROOMS`]; omitted from JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: code.severity(),
            code,
            message: message.into(),
            node: None,
            edge: None,
            related: Vec::new(),
        }
    }

    pub fn at_node(mut self, node: impl Into<String>) -> Self {
        self.node = Some(node.into());
        self
    }

    pub fn at_edge(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.edge = Some(EdgeRef {
            from: from.into(),
            to: to.into(),
        });
        self
    }

    pub fn with_related(mut self, related: Vec<String>) -> Self {
        self.related = related;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Stable order for output: errors first, then by code, node, edge, message.
    pub fn sort_key(&self) -> impl Ord + '_ {
        (
            self.severity,
            self.code,
            self.node.as_deref(),
            self.edge.as_ref(),
            self.message.as_str(),
        )
    }
}

/// Sorts findings into their stable output order.
pub fn sort(diags: &mut [Diagnostic]) {
    crate::text::sort_by(diags, |a, b| a.sort_key().cmp(&b.sort_key()));
}
