//! zonegraph-core: the pure core of zonegraph.
//!
//! Zones are directed graphs of rooms. This crate reads the zone file format, validates and
//! lints zones, analyses their routes, runs the navigation engine, and words every chat
//! reply and map. It does no I/O: callers pass text, `now` and run ids, so the bot, the
//! terminal and the browser say exactly the same thing.

pub mod analysis;
pub mod diagnostic;
pub mod format;
pub mod layout;
pub mod map;
pub mod roll;
pub mod zone;

pub use diagnostic::{Code, Diagnostic, EdgeRef, Severity};
pub use format::{LockKind, NodeKind, ParseError, ZoneFile};
pub use zone::{Ability, Edge, Lock, Node, NodeId, Zone};
