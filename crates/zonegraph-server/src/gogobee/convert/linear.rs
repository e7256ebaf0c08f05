//! Linear zones: the room kinds given to `BuildLinearGraph`, and those gogobee compiled a
//! zone without a graph func into.

use zonegraph_core::format::NodeKind;

use super::super::syntax::Elem;
use super::expr::node_kind;
use super::{At, Consts, Errors};

/// The room kinds gogobee compiled a zone without a graph func into (`compileLegacyZoneGraph`):
/// `MaxRooms` rooms (at least 6), entry, explorations, a trap halfway through them, more
/// explorations, an elite and the boss.
pub fn legacy_kinds(max_rooms: i64) -> Vec<NodeKind> {
    let total = usize::try_from(max_rooms).unwrap_or(0).max(6);
    let explorations = total - 4;
    let before = (explorations / 2).max(1);
    let after = explorations - before;
    let mut kinds = vec![NodeKind::Entry];
    kinds.extend(std::iter::repeat_n(NodeKind::Exploration, before));
    kinds.push(NodeKind::Trap);
    kinds.extend(std::iter::repeat_n(NodeKind::Exploration, after));
    kinds.extend([NodeKind::Elite, NodeKind::Boss]);
    kinds
}

pub(super) fn linear(
    elems: &[Elem],
    at: At,
    zone: Option<&str>,
    consts: &Consts,
    errors: &mut Errors,
) -> Option<Vec<NodeKind>> {
    let mut out = Vec::new();
    let mut ok = true;
    for el in elems {
        let r = match (&el.key, consts.string(&el.value)) {
            (Some(_), _) => Err("an indexed element is not read".to_string()),
            (None, Ok(s)) => {
                node_kind(&s).ok_or_else(|| format!("room kind {s:?} is not one of zonegraph's"))
            }
            (None, Err(m)) => Err(m),
        };
        match r {
            Ok(k) => out.push(k),
            Err(msg) => {
                errors.push(
                    At {
                        pos: el.value.at,
                        ..at
                    },
                    zone,
                    format!("cannot read a room kind of BuildLinearGraph: {msg}"),
                );
                ok = false;
            }
        }
    }
    ok.then_some(out)
}
