//! zonegraph-core: the pure core of zonegraph.
//!
//! Zones are directed graphs of rooms. This crate reads the zone file format, validates and
//! lints zones, analyses their routes, runs the navigation engine, and words every chat
//! reply and map. It does no I/O: callers pass text, `now` and run ids, so the bot, the
//! terminal and the browser say exactly the same thing.

pub mod analysis;
pub mod bot;
pub mod chat;
pub mod command;
pub mod diagnostic;
pub mod diff;
pub mod difficulty;
pub mod engine;
pub mod format;
pub mod impact;
pub mod insight;
pub mod layout;
pub mod limits;
pub mod map;
pub mod narration;
pub mod paths;
pub mod payload;
pub mod review;
pub mod roll;
pub mod rules;
pub mod share;
pub mod synth;
pub mod text;
pub mod validate;
pub mod zone;

pub use analysis::{LockStats, Stats, lock_pass_chance, stats};
pub use chat::Reply;
pub use command::{Command, CommandError};
pub use diagnostic::{Code, Diagnostic, EdgeRef, Severity};
pub use engine::{Character, Event, Outcome, PlayerView, Refusal, Run, Status};
pub use format::{LockKind, NodeKind, ParseError, ZoneFile};
pub use validate::{
    CheckOptions, CheckedZone, check_sources, check_sources_with, check_zone, validate,
};
pub use zone::{Ability, Edge, Lock, Node, NodeId, Zone};
