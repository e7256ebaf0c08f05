//! What a map's legend explains: the room kinds, lock kinds and run marks a drawing uses.

use zonegraph_core::format::{LockKind, NodeKind};

use super::MapModel;

/// The entries of a legend, each kind in the order of `NodeKind::ALL` and `LockKind::ALL`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LegendItems {
    pub kinds: Vec<NodeKind>,
    /// Line styles, `LockKind::None` for an open passage.
    pub locks: Vec<LockKind>,
    /// Visit numbers.
    pub visited: bool,
    /// The current room's mark.
    pub here: bool,
    /// Fork option numbers.
    pub option: bool,
    /// A room a player does not know.
    pub unknown: bool,
}

impl LegendItems {
    /// Everything a map can draw: the designer's legend, a key to the whole notation.
    pub fn all() -> LegendItems {
        LegendItems {
            kinds: NodeKind::ALL.to_vec(),
            locks: LockKind::ALL.to_vec(),
            visited: true,
            here: true,
            option: true,
            unknown: true,
        }
    }

    /// Whether there is nothing to explain (then no legend is drawn).
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.locks.is_empty() && !self.has_run_marks()
    }

    /// Whether any of the run's marks is explained.
    pub fn has_run_marks(&self) -> bool {
        self.visited || self.here || self.option || self.unknown
    }
}

impl MapModel {
    /// What this drawing uses, and nothing else: the legend of a player's map.
    pub fn legend(&self) -> LegendItems {
        let kinds = NodeKind::ALL
            .iter()
            .copied()
            .filter(|&k| self.rooms.iter().any(|r| r.kind == Some(k)))
            .collect();
        let locks = LockKind::ALL
            .iter()
            .copied()
            .filter(|&l| self.passages.iter().any(|p| p.lock == l))
            .collect();
        LegendItems {
            kinds,
            locks,
            visited: self.rooms.iter().any(|r| r.visit.is_some()),
            here: self.rooms.iter().any(|r| r.current),
            option: self.rooms.iter().any(|r| r.option.is_some()),
            unknown: self.rooms.iter().any(|r| r.kind.is_none()),
        }
    }
}
