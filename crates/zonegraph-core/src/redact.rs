//! What a player may see of a zone file: the zone as its run-map link shows it.
//!
//! The chat never names an undiscovered secret room, so neither may the run-map link: the
//! redacted file drops every room [`engine::visible_to_player`] hides, with every passage into
//! or out of it. Pure, like the rest of the core; the server calls it for `GET /api/runs/…`.

use crate::engine::{self, Run};
use crate::format::ZoneFile;
use crate::zone::Zone;

/// The zone file of `zone` as the player of `run` may see it: undiscovered secret rooms and
/// every passage touching them are absent; everything else is the designer's file
/// ([`Zone::to_file`]) unchanged, in file order.
pub fn zone_file_redacted(zone: &Zone, run: &Run) -> ZoneFile {
    let mut file = zone.to_file();
    let visible = |id: &str| engine::visible_to_player(zone, run, id);
    if let Some(nodes) = file.nodes.as_mut() {
        nodes.retain(|n| visible(&n.node_id));
    }
    if let Some(edges) = file.edges.as_mut() {
        edges.retain(|e| visible(&e.from_node) && visible(&e.to_node));
    }
    file
}
