//! The chat `!zone map`: a Unicode drawing of a zone, or of a run through it.
//!
//! Rooms sit on the grid of [`crate::layout`] (one grid row = one text row of room tokens,
//! fixed-width cells); passages between neighbouring rows are drawn with box-drawing
//! characters on a canvas where each character cell collects directions and renders the
//! matching junction. Longer passages run down the gutters between columns; passages that
//! go up, sideways or off the visible window are listed under the drawing, so nothing is
//! silently dropped. The text is deterministic, has no trailing spaces and stays under
//! [`MAX_MAP_BYTES`] for any zone: huge zones show a window around the current room.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

pub use petgraph::graph::NodeIndex;

use crate::chat::kind_name;
use crate::engine;
use crate::format::NodeKind;
use crate::layout;
use crate::narration::room_label;
use crate::zone::Zone;

/// Upper bound of [`render_map`]'s output, in bytes (UTF-8).
pub const MAX_MAP_BYTES: usize = 60_000;

/// What a map shows of a run. [`MapView::of_run`] builds it from the player view.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapView {
    /// Rooms visited, in visit order.
    pub visited: Vec<NodeIndex>,
    /// The room the player is in.
    pub current: Option<NodeIndex>,
    /// Undiscovered secrets: absent from the map, with every passage touching them.
    pub hidden: BTreeSet<NodeIndex>,
    /// Rooms drawn as "?": on the map, but the player does not know what they are.
    pub unknown: BTreeSet<NodeIndex>,
    /// The pending fork's options, in menu order (numbered from 1 on the map).
    pub fork_options: Vec<NodeIndex>,
}

impl MapView {
    /// A designer's view: nothing visited, nothing hidden.
    pub fn designer() -> Self {
        MapView::default()
    }

    /// What a player sees of their run, as [`engine::view`] decides it: the path so far, the
    /// current room, undiscovered secrets absent, rooms the player only knows as "something"
    /// unnamed, and the pending fork's numbers on the options the menu names. Ids the zone
    /// does not know are skipped.
    pub fn of_run(zone: &Zone, run: &engine::Run) -> MapView {
        let visited = run
            .visited_nodes
            .iter()
            .filter_map(|id| zone.node_index(id.as_str()))
            .collect();
        let current = zone.node_index(run.current_node.as_str());
        let knowledge = engine::view::knowledge(zone, run);
        let with = |k: engine::Knowledge| {
            let mut set = BTreeSet::new();
            set.extend(
                knowledge
                    .iter()
                    .enumerate()
                    .filter(|&(_, &x)| x == k)
                    .map(|(i, _)| NodeIndex::new(i)),
            );
            set
        };
        let fork_options = if run
            .pending_fork
            .as_ref()
            .is_some_and(|f| f.at == run.current_node)
        {
            engine::exit_views(zone, run)
                .iter()
                // A placeholder keeps the numbering of the options after it.
                .map(|x| {
                    x.to_node
                        .as_ref()
                        .and_then(|id| zone.node_index(id.as_str()))
                        .unwrap_or_else(NodeIndex::end)
                })
                .collect()
        } else {
            Vec::new()
        };
        MapView {
            visited,
            current,
            hidden: with(engine::Knowledge::Hidden),
            unknown: with(engine::Knowledge::Unknown),
            fork_options,
        }
    }
}

/// How big a map may get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapOptions {
    /// Characters per grid column (clamped to 12..=40).
    pub cell_width: usize,
    /// Grid rows shown at most (clamped to 1..=100); taller zones show a window around the
    /// current room. The window also shrinks when the drawing would not fit the size bound.
    pub max_rows: usize,
    /// Grid columns shown at most (clamped to 1..=12).
    pub max_columns: usize,
    /// The run's browser map, named when the chat map had to leave something out.
    pub run_link: Option<String>,
}

impl Default for MapOptions {
    fn default() -> Self {
        MapOptions {
            cell_width: 24,
            max_rows: 24,
            max_columns: 5,
            run_link: None,
        }
    }
}

/// The single-width glyph of a room kind.
pub fn kind_glyph(kind: NodeKind) -> char {
    match kind {
        NodeKind::Entry => '⌂',
        NodeKind::Exploration => '∴',
        NodeKind::Trap => '※',
        NodeKind::Elite => '♠',
        NodeKind::Boss => '♛',
        NodeKind::Harvest => '♣',
        NodeKind::RestCamp => '△',
        NodeKind::Secret => '✧',
        NodeKind::Fork => '⑂',
        NodeKind::Merge => '⑃',
    }
}

const VISITED: char = '●';
const CURRENT: char = '◉';
const UNVISITED: char = '○';
const ARROW: char = '▼';
const LOCK_MARK: char = '╳';
/// Canvas bytes before the window shrinks; leaves room for header, footer and legend.
const CANVAS_BUDGET: usize = 42_000;
/// Most grid rows a map draws, whatever the options say.
const MAX_ROWS: usize = 100;
/// Passages listed under the drawing before "and N more".
const FOOTER_LIMIT: usize = 12;
/// Rooms of the path strip shown at its start and end when it is long.
const PATH_HEAD: usize = 2;
const PATH_TAIL: usize = 7;
/// Characters of a label in the path strip and the footer.
const LABEL_CHARS: usize = 24;

/// Renders the `!zone map` text. Never panics; node indices that are not in the zone are
/// ignored.
pub fn render_map(zone: &Zone, view: &MapView, opts: &MapOptions) -> String {
    let n = zone.graph.node_count();
    let valid = |ix: &NodeIndex| ix.index() < n;
    // `extend`, not `collect`: collecting into a BTreeSet sorts first, one more sort in wasm.
    let mut hidden: BTreeSet<NodeIndex> = BTreeSet::new();
    hidden.extend(view.hidden.iter().copied().filter(valid));
    // A room the player has been in is discovered, whatever the caller says.
    for v in view.visited.iter().chain(view.current.iter()) {
        hidden.remove(v);
    }
    let grid = layout::grid(zone, &hidden);

    // Rows and columns without a visible room are dropped, so hidden rooms leave no gaps.
    let mut rows: Vec<u32> = grid.cell.iter().flatten().map(|c| c.1).collect();
    let mut cols: Vec<u32> = grid.cell.iter().flatten().map(|c| c.0).collect();
    crate::text::sort_dedup(&mut rows);
    crate::text::sort_dedup(&mut cols);
    let pos: Vec<Option<(usize, usize)>> = grid
        .cell
        .iter()
        .map(|c| {
            c.and_then(|(c, r)| Some((cols.binary_search(&c).ok()?, rows.binary_search(&r).ok()?)))
        })
        .collect();

    let mut visited: BTreeSet<NodeIndex> = BTreeSet::new();
    visited.extend(view.visited.iter().copied().filter(valid));
    let current = view.current.filter(valid);
    // The fork's option number of each room (by node index), the first when listed twice.
    let mut options: Vec<Option<usize>> = vec![None; n];
    for (i, &o) in view.fork_options.iter().enumerate() {
        if valid(&o) {
            options[o.index()].get_or_insert(i + 1);
        }
    }
    let state = State {
        zone,
        pos: &pos,
        visited: &visited,
        current,
        options: &options,
        unknown: &view.unknown,
        width: opts.cell_width.clamp(12, 40),
    };

    let designer = view.visited.is_empty() && current.is_none();
    let mut out = String::new();
    let _ = write!(out, "Map of {}", clean(&zone.name, 60));
    if designer {
        out.push_str(" (designer view: every room and passage)");
    }
    out.push('\n');
    if rows.is_empty() {
        out.push_str("This zone has no rooms to show.\n");
        return out;
    }

    let focus = current
        .or_else(|| view.visited.iter().rev().copied().find(valid))
        .or_else(|| zone.entry())
        .filter(|f| pos[f.index()].is_some())
        .or_else(|| (0..n).find(|&i| pos[i].is_some()).map(NodeIndex::new));
    let (fc, fr) = focus.and_then(|f| pos[f.index()]).unwrap_or((0, 0));
    let max_columns = opts.max_columns.clamp(1, 12);
    let mut max_rows = opts.max_rows.clamp(1, MAX_ROWS);
    let drawing = loop {
        let win = Window::around(rows.len(), cols.len(), fr, fc, max_rows, max_columns);
        let drawing = draw(&state, &win);
        if drawing.canvas.len() <= CANVAS_BUDGET || max_rows == 1 {
            break drawing;
        }
        max_rows /= 2;
    };

    out.push_str(&drawing.canvas);
    let shown = drawing.rooms_shown;
    let total = pos.iter().filter(|p| p.is_some()).count();
    if shown < total {
        let w = &drawing.window;
        let _ = writeln!(
            out,
            "Showing {} of {} and {} of {} ({} of {} rooms){}.",
            span("row", w.r0, w.r1),
            rows.len(),
            span("column", w.c0, w.c1),
            cols.len(),
            shown,
            total,
            if current.is_some() { " around you" } else { "" },
        );
        match &opts.run_link {
            Some(link) => {
                let _ = writeln!(out, "The full map is at {}", clean(link, 200));
            }
            None => out.push_str("The run map in the browser shows the whole zone.\n"),
        }
    }
    if !drawing.footer.is_empty() {
        out.push_str("Passages not drawn above:\n");
        for f in drawing.footer.iter().take(FOOTER_LIMIT) {
            let _ = writeln!(
                out,
                "  {} {} → {}{}{}",
                f.sym,
                state.label(f.from, LABEL_CHARS),
                state.label(f.to, LABEL_CHARS),
                if f.locked { " ╳ locked" } else { "" },
                f.why
            );
        }
        if drawing.footer.len() > FOOTER_LIMIT {
            let _ = writeln!(out, "  … and {} more", drawing.footer.len() - FOOTER_LIMIT);
        }
    }
    legend(&mut out, &state, &drawing);
    path_strip(&mut out, &state, view);
    out
}

/// "rows 3–5" or "row 3", 1-based, for the window `lo..hi`.
fn span(what: &str, lo: usize, hi: usize) -> String {
    if hi <= lo + 1 {
        format!("{what} {}", lo + 1)
    } else {
        format!("{what}s {}–{hi}", lo + 1)
    }
}

struct State<'a> {
    zone: &'a Zone,
    /// `(column, row)` after dropping empty rows and columns; `None` for hidden rooms.
    pos: &'a [Option<(usize, usize)>],
    visited: &'a BTreeSet<NodeIndex>,
    current: Option<NodeIndex>,
    options: &'a [Option<usize>],
    /// Rooms the player knows only as "something": drawn as `?`, unnamed.
    unknown: &'a BTreeSet<NodeIndex>,
    width: usize,
}

/// The glyph and the label of a room the player knows only as "something", as the fork menu
/// calls it.
const UNKNOWN_GLYPH: char = '?';
const UNKNOWN_LABEL: &str = "something";

impl State<'_> {
    fn is_unknown(&self, ix: NodeIndex) -> bool {
        self.unknown.contains(&ix)
    }

    fn label(&self, ix: NodeIndex, max: usize) -> String {
        if self.is_unknown(ix) {
            return UNKNOWN_LABEL.to_string();
        }
        clean(room_label(&self.zone.graph[ix]), max)
    }

    fn state_glyph(&self, ix: NodeIndex) -> char {
        if Some(ix) == self.current {
            CURRENT
        } else if self.visited.contains(&ix) {
            VISITED
        } else {
            UNVISITED
        }
    }

    fn token(&self, ix: NodeIndex) -> String {
        let node = &self.zone.graph[ix];
        let mut t = String::new();
        t.push(self.state_glyph(ix));
        let unknown = self.is_unknown(ix);
        t.push(if unknown {
            UNKNOWN_GLYPH
        } else {
            kind_glyph(node.kind)
        });
        t.push(' ');
        if let Some(n) = self.options.get(ix.index()).copied().flatten() {
            let _ = write!(t, "[{n}] ");
        }
        let used = t.chars().count();
        // Leave a space, the gutter and a space before the next column.
        let room = self.width.saturating_sub(3 + used);
        t.push_str(&if unknown {
            UNKNOWN_LABEL.to_string()
        } else {
            clean(room_label(node), room)
        });
        t
    }
}

/// Untrusted text made safe for one line of a monospace chat block: control characters
/// become spaces, backticks (code-fence breakers) become quotes, characters that are not
/// one column wide become `?`, and the result is cut to `max` characters with `…`.
fn clean(s: &str, max: usize) -> String {
    let chars: Vec<char> = s
        .trim()
        .chars()
        .filter(|&c| !is_zero_width(c))
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() => ' ',
            c if is_wide(c) => '?',
            c => c,
        })
        .collect();
    if chars.len() <= max {
        return chars.into_iter().collect();
    }
    let mut out: String = chars[..max.saturating_sub(1)].iter().collect();
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    if max > 0 {
        out.push('…');
    }
    out
}

fn is_zero_width(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x200B..=0x200F | 0x2060..=0x2064 | 0xFE00..=0xFE0F | 0xFEFF)
}

/// East Asian wide and emoji ranges: they take two columns and would break alignment.
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F000..=0x1FAFF
        | 0x20000..=0x3FFFD)
}

/// The rows `r0..r1` and columns `c0..c1` of the compressed grid that are drawn.
#[derive(Clone, Copy, Debug)]
struct Window {
    r0: usize,
    r1: usize,
    c0: usize,
    c1: usize,
}

impl Window {
    fn around(
        nrows: usize,
        ncols: usize,
        fr: usize,
        fc: usize,
        max_rows: usize,
        max_cols: usize,
    ) -> Window {
        let (r0, r1) = if nrows <= max_rows {
            (0, nrows)
        } else {
            let s = fr.saturating_sub(max_rows / 3).min(nrows - max_rows);
            (s, s + max_rows)
        };
        let (c0, c1) = if ncols <= max_cols {
            (0, ncols)
        } else {
            let s = fc.saturating_sub(max_cols / 2).min(ncols - max_cols);
            (s, s + max_cols)
        };
        Window { r0, r1, c0, c1 }
    }

    fn contains(&self, (c, r): (usize, usize)) -> bool {
        (self.r0..self.r1).contains(&r) && (self.c0..self.c1).contains(&c)
    }
}

/// A passage listed under the drawing instead of drawn.
struct Skipped {
    sym: &'static str,
    why: &'static str,
    from: NodeIndex,
    to: NodeIndex,
    locked: bool,
}

struct Drawing {
    window: Window,
    canvas: String,
    footer: Vec<Skipped>,
    rooms_shown: usize,
    /// Kinds of the rooms shown, sorted, each once.
    kinds: Vec<NodeKind>,
    locked_drawn: bool,
    regions_marked: bool,
}

const UP: u8 = 1;
const DOWN: u8 = 2;
const LEFT: u8 = 4;
const RIGHT: u8 = 8;

#[derive(Clone, Default)]
struct Cell {
    ch: Option<char>,
    /// Directions per net (a group of pieces that belong together): `(net, dirs, solid)`,
    /// where solid means some open passage of that net runs here (else it is dashed).
    nets: Vec<(u32, u8, bool)>,
    /// An arrowhead into a room: `Some(true)` if some open passage arrives here.
    arrow: Option<bool>,
}

struct Canvas {
    lines: Vec<Vec<Cell>>,
}

impl Canvas {
    fn cell(&mut self, line: usize, x: usize) -> Option<&mut Cell> {
        self.lines.get_mut(line).and_then(|l| l.get_mut(x))
    }

    fn add(&mut self, line: usize, x: usize, dirs: u8, solid: bool, net: u32) {
        if let Some(c) = self.cell(line, x) {
            match c.nets.iter_mut().find(|(n, _, _)| *n == net) {
                Some(entry) => {
                    entry.1 |= dirs;
                    entry.2 |= solid;
                }
                None => c.nets.push((net, dirs, solid)),
            }
        }
    }

    fn arrow(&mut self, line: usize, x: usize, solid: bool) {
        if let Some(c) = self.cell(line, x) {
            c.arrow = Some(c.arrow.unwrap_or(false) || solid);
        }
    }

    fn text(&mut self, line: usize, x: usize, s: &str) {
        for (i, ch) in s.chars().enumerate() {
            if let Some(c) = self.cell(line, x + i) {
                c.ch = Some(ch);
            }
        }
    }

    /// A vertical run from line `from` to line `to` (inclusive) at `x`.
    fn vertical(&mut self, x: usize, from: usize, to: usize, solid: bool, net: u32) {
        for line in from..=to {
            self.add(line, x, UP | DOWN, solid, net);
        }
    }

    fn horizontal(&mut self, line: usize, a: usize, b: usize, solid: bool, net: u32) {
        let (lo, hi) = (a.min(b), a.max(b));
        for x in lo..=hi {
            let mut d = 0;
            if x > lo {
                d |= LEFT;
            }
            if x < hi {
                d |= RIGHT;
            }
            self.add(line, x, d, solid, net);
        }
    }
}

fn glyph(c: &Cell) -> char {
    if let Some(ch) = c.ch {
        return ch;
    }
    if let Some(solid) = c.arrow {
        return if solid { ARROW } else { LOCK_MARK };
    }
    let vertical = |d: u8| d != 0 && d & (LEFT | RIGHT) == 0;
    let horizontal = |d: u8| d != 0 && d & (UP | DOWN) == 0;
    // Unrelated lines crossing: draw the vertical one unbroken, so a crossing never looks
    // like a junction.
    if c.nets.iter().any(|n| vertical(n.1))
        && c.nets.iter().any(|n| horizontal(n.1))
        && c.nets.iter().all(|n| vertical(n.1) || horizontal(n.1))
    {
        let solid = c.nets.iter().any(|n| vertical(n.1) && n.2);
        return if solid { '│' } else { '┆' };
    }
    let dirs = c.nets.iter().fold(0, |d, n| d | n.1);
    let solid = c.nets.iter().any(|n| n.2);
    match dirs {
        0 => ' ',
        d if vertical(d) => {
            if solid {
                '│'
            } else {
                '┆'
            }
        }
        d if horizontal(d) => {
            if solid {
                '─'
            } else {
                '╌'
            }
        }
        d if d == DOWN | RIGHT => '┌',
        d if d == DOWN | LEFT => '┐',
        d if d == UP | RIGHT => '└',
        d if d == UP | LEFT => '┘',
        d if d == UP | DOWN | RIGHT => '├',
        d if d == UP | DOWN | LEFT => '┤',
        d if d == DOWN | LEFT | RIGHT => '┬',
        d if d == UP | LEFT | RIGHT => '┴',
        _ => '┼',
    }
}

/// A gap group: `(true, x)` for pieces merging into the room at `x`, `(false, x)` for
/// pieces fanning out from the top point `x`.
type Key = (bool, usize);

/// One passage's piece inside a gap between two drawn rows.
#[derive(Clone, Copy, Debug)]
struct Conn {
    top: usize,
    bottom: usize,
    /// Ends in an arrowhead (else it continues down a gutter).
    arrive: bool,
    solid: bool,
}

/// A vertical run through a gap or across a token line: `(x, solid, net)`.
type Pass = (usize, bool, u32);

/// Draws the window: one pass after another, each building on the ones before.
fn draw(st: &State<'_>, win: &Window) -> Drawing {
    let cols = Columns {
        c0: win.c0,
        count: win.c1 - win.c0,
        width: st.width,
    };
    let rows = place_rooms(st, win);
    let mut routes = route_passages(st, win, cols, &rows);
    // Gap groups are numbered after every long passage's net.
    let mut gap_tracks = Vec::with_capacity(routes.gaps.len());
    for conns in &routes.gaps {
        gap_tracks.push(pack_tracks(conns, &mut routes.next_net));
    }
    let lines = number_lines(rows.tokens.len(), &gap_tracks);
    let canvas = paint(st, cols, &rows, &routes, &gap_tracks, &lines);
    let (notes, regions_marked) = row_notes(st, &rows, &lines);
    Drawing {
        window: *win,
        canvas: to_text(&canvas, &notes),
        footer: routes.footer,
        rooms_shown: rows.rooms_shown,
        kinds: rows.kinds,
        locked_drawn: routes.locked_drawn,
        regions_marked,
    }
}

/// Where a grid column sits in a line of text, for the window's `count` columns from `c0`.
#[derive(Clone, Copy)]
struct Columns {
    c0: usize,
    count: usize,
    width: usize,
}

impl Columns {
    /// Characters per canvas line.
    fn line_width(self) -> usize {
        self.count * self.width
    }

    /// The first character of the column's room token.
    fn anchor(self, c: usize) -> usize {
        (c - self.c0) * self.width
    }

    /// The gutter: the last-but-one character of the column, which a token leaves blank.
    fn gutter(self, c: usize) -> usize {
        (c - self.c0) * self.width + self.width - 2
    }
}

/// The rooms of the window, row by row.
struct Rows {
    /// `(grid column, room)` per drawn row, in node order.
    tokens: Vec<Vec<(usize, NodeIndex)>>,
    /// Rooms of each drawn row left or right of the window.
    more_left: Vec<usize>,
    more_right: Vec<usize>,
    /// Kinds of the rooms shown, sorted, each once.
    kinds: Vec<NodeKind>,
    rooms_shown: usize,
    /// Drawn rows with a room, per grid column.
    column_rows: Vec<Vec<usize>>,
}

/// First pass, rooms: which rooms the window shows, and how many each row leaves out to
/// the sides, so the text can say so instead of dropping them silently.
fn place_rooms(st: &State<'_>, win: &Window) -> Rows {
    let zone = st.zone;
    let wrows = win.r1 - win.r0;
    let mut tokens: Vec<Vec<(usize, NodeIndex)>> = vec![Vec::new(); wrows];
    let mut more_left = vec![0usize; wrows];
    let mut more_right = vec![0usize; wrows];
    let mut kinds = Vec::new();
    let mut rooms_shown = 0;
    for ix in zone.graph.node_indices() {
        let Some((c, r)) = st.pos[ix.index()] else {
            continue;
        };
        if !(win.r0..win.r1).contains(&r) {
            continue;
        }
        let wr = r - win.r0;
        if c < win.c0 {
            more_left[wr] += 1;
        } else if c >= win.c1 {
            more_right[wr] += 1;
        } else {
            tokens[wr].push((c, ix));
            if !st.is_unknown(ix) {
                kinds.push(zone.graph[ix].kind);
            }
            rooms_shown += 1;
        }
    }
    crate::text::sort_dedup(&mut kinds);

    // A long passage may run straight down a column only where no room stands in between.
    let mut column_rows: Vec<Vec<usize>> = vec![Vec::new(); win.c1];
    for (wr, row) in tokens.iter().enumerate() {
        for &(c, _) in row {
            column_rows[c].push(wr);
        }
    }
    Rows {
        tokens,
        more_left,
        more_right,
        kinds,
        rooms_shown,
        column_rows,
    }
}

/// Every passage of the window, placed: pieces per gap, gutter runs, and the rest.
struct Routes {
    /// The pieces in each gap between drawn rows `g` and `g + 1`.
    gaps: Vec<Vec<Conn>>,
    /// Gutter runs crossing a whole gap, per gap.
    pass_gap: Vec<Vec<Pass>>,
    /// Gutter runs crossing a token line, per drawn row.
    pass_row: Vec<Vec<Pass>>,
    /// Passages listed under the drawing, in edge order.
    footer: Vec<Skipped>,
    locked_drawn: bool,
    /// The next unused net: each long passage is its own net, numbered in edge order.
    next_net: u32,
}

/// Second pass, passages: in edge order, a passage into the next row becomes a piece of the
/// gap between the two rows, one that skips rows goes down a gutter, and every other one
/// (outside the window, back up, sideways, onto itself, or with no free gutter) is kept for
/// the footer with the reason, so nothing is silently dropped.
fn route_passages(st: &State<'_>, win: &Window, cols: Columns, rows: &Rows) -> Routes {
    let zone = st.zone;
    let wrows = win.r1 - win.r0;
    let mut routes = Routes {
        gaps: vec![Vec::new(); wrows.saturating_sub(1)],
        pass_gap: vec![Vec::new(); wrows.saturating_sub(1)],
        pass_row: vec![Vec::new(); wrows],
        footer: Vec::new(),
        locked_drawn: false,
        next_net: 0,
    };
    // Row spans already taken in each column's gutter.
    let mut gutter_use: Vec<Vec<(usize, usize)>> = vec![Vec::new(); win.c1];
    for e in zone.graph.edge_indices() {
        let Some((s, t)) = zone.graph.edge_endpoints(e) else {
            continue;
        };
        let (Some(a), Some(b)) = (st.pos[s.index()], st.pos[t.index()]) else {
            continue;
        };
        let locked = zone.graph[e].lock.is_locked();
        let skipped = |sym, why| Skipped {
            sym,
            why,
            from: s,
            to: t,
            locked,
        };
        let (s_in, t_in) = (win.contains(a), win.contains(b));
        if !s_in && !t_in {
            continue;
        }
        if !(s_in && t_in) {
            routes.footer.push(skipped("⇣", " (outside this window)"));
            continue;
        }
        let ((sc, sr), (tc, tr)) = (a, b);
        if s == t {
            routes.footer.push(skipped("↻", " (loops back to itself)"));
        } else if tr == sr + 1 {
            routes.gaps[sr - win.r0].push(Conn {
                top: cols.anchor(sc),
                bottom: cols.anchor(tc),
                arrive: true,
                solid: !locked,
            });
            routes.locked_drawn |= locked;
        } else if tr > sr + 1 {
            // The gaps it crosses, first to last.
            let span = (sr - win.r0, tr - 1 - win.r0);
            match long_passage_x(
                win,
                cols,
                &rows.column_rows,
                &mut gutter_use,
                (sc, tc),
                span,
            ) {
                Some(x) => {
                    routes.add_long(x, span, (cols.anchor(sc), cols.anchor(tc)), locked);
                }
                None => routes.footer.push(skipped("⇣", " (skips rows)")),
            }
        } else if tr == sr {
            routes.footer.push(skipped("⇢", " (same row)"));
        } else {
            routes.footer.push(skipped("↺", " (leads back up)"));
        }
    }
    routes
}

/// Third pass, gutters (per passage that skips rows, from column `sc` to `tc` through the
/// gaps `g0..=g1`): the text column it runs down. Straight down its own column when both rooms
/// share one and no room stands in between; else the gutter between its two columns, then the
/// nearest gutter not yet taken over those gaps, so long passages never run together. `None`
/// when no gutter is free.
fn long_passage_x(
    win: &Window,
    cols: Columns,
    column_rows: &[Vec<usize>],
    gutter_use: &mut [Vec<(usize, usize)>],
    (sc, tc): (usize, usize),
    (g0, g1): (usize, usize),
) -> Option<usize> {
    // The rows strictly between the two rooms are g0 + 1..=g1.
    let straight = sc == tc
        && column_rows
            .get(sc)
            .is_none_or(|rows| !rows.iter().any(|&r| r > g0 && r <= g1));
    if straight {
        return Some(cols.anchor(sc));
    }
    let mut candidates: Vec<usize> = (win.c0..win.c1).collect();
    let first = if tc < sc { tc } else { sc };
    crate::text::sort_by_key(&mut candidates, |&c| {
        (c != first, c.abs_diff(sc).min(c.abs_diff(tc)), c)
    });
    candidates
        .into_iter()
        .find(|c| gutter_use[*c].iter().all(|&(lo, hi)| hi < g0 || lo > g1))
        .map(|c| {
            gutter_use[c].push((g0, g1));
            cols.gutter(c)
        })
}

impl Routes {
    /// A long passage down the text column `x`, through the gaps `g0..=g1`: a piece from
    /// its room's column `from` to `x` in the first gap, runs through the gaps and token
    /// lines in between, and a piece from `x` into the target room's column `to` in the last
    /// gap. One net of its own.
    fn add_long(
        &mut self,
        x: usize,
        (g0, g1): (usize, usize),
        (from, to): (usize, usize),
        locked: bool,
    ) {
        let net = self.next_net;
        self.next_net += 1;
        self.gaps[g0].push(Conn {
            top: from,
            bottom: x,
            arrive: false,
            solid: !locked,
        });
        for pass in self.pass_gap.iter_mut().take(g1).skip(g0 + 1) {
            pass.push((x, !locked, net));
        }
        for pass in self.pass_row.iter_mut().take(g1 + 1).skip(g0 + 1) {
            pass.push((x, !locked, net));
        }
        self.gaps[g1].push(Conn {
            top: x,
            bottom: to,
            arrive: true,
            solid: !locked,
        });
        self.locked_drawn |= locked;
    }
}

/// How one gap is drawn: its number of horizontal tracks, each group's `(track, net)`, and
/// the pieces arriving at each point.
struct GapTracks {
    tracks: usize,
    assigned: BTreeMap<Key, (Option<usize>, u32)>,
    into: BTreeMap<usize, usize>,
}

/// The group a piece belongs to: pieces into a room that several pieces reach share a line
/// (they merge); the others group by their top point (they fan out).
fn group_key(c: &Conn, into: &BTreeMap<usize, usize>) -> Key {
    if c.arrive && into.get(&c.bottom).copied().unwrap_or(0) >= 2 {
        (true, c.bottom)
    } else {
        (false, c.top)
    }
}

/// Fourth pass, tracks (per gap): groups that need a horizontal get a track of their own,
/// packed so that overlapping groups never share one, and ordered so that lines meeting at a
/// point do not run together there. Each group gets the next net.
fn pack_tracks(conns: &[Conn], next_net: &mut u32) -> GapTracks {
    let mut into: BTreeMap<usize, usize> = BTreeMap::new();
    for c in conns.iter().filter(|c| c.arrive) {
        *into.entry(c.bottom).or_default() += 1;
    }
    let mut groups: BTreeMap<Key, (usize, usize)> = BTreeMap::new();
    for c in conns {
        let span = groups.entry(group_key(c, &into)).or_insert((c.top, c.top));
        span.0 = span.0.min(c.top).min(c.bottom);
        span.1 = span.1.max(c.top).max(c.bottom);
    }
    let mut spans: Vec<(usize, usize, Key)> = groups
        .iter()
        .filter(|(_, (lo, hi))| lo < hi)
        .map(|(&k, &(lo, hi))| (lo, hi, k))
        .collect();
    crate::text::sort(&mut spans);
    // Where each group's lines leave its track downward, and join it from above.
    let turns = |k: &Key, below: bool| -> Vec<usize> {
        let mut points: Vec<usize> = conns
            .iter()
            .filter(|c| c.top != c.bottom && group_key(c, &into) == *k)
            .map(|c| if below { c.bottom } else { c.top })
            .collect();
        crate::text::sort_dedup(&mut points);
        points
    };
    let below: Vec<Vec<usize>> = spans.iter().map(|s| turns(&s.2, true)).collect();
    let above: Vec<Vec<usize>> = spans.iter().map(|s| turns(&s.2, false)).collect();
    // A group that drops onto a point must sit below every group that rises from it,
    // or the two lines would run together there.
    let preds: Vec<Vec<usize>> = (0..spans.len())
        .map(|a| {
            (0..spans.len())
                .filter(|&b| b != a && below[a].iter().any(|p| above[b].binary_search(p).is_ok()))
                .collect()
        })
        .collect();
    let mut track: Vec<Option<usize>> = vec![None; spans.len()];
    let mut lanes: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut assigned: BTreeMap<Key, (Option<usize>, u32)> = BTreeMap::new();
    for _ in 0..spans.len() {
        let Some(a) = (0..spans.len())
            .filter(|&a| track[a].is_none())
            .find(|&a| preds[a].iter().all(|&p| track[p].is_some()))
            .or_else(|| (0..spans.len()).find(|&a| track[a].is_none()))
        else {
            break;
        };
        let (lo, hi, k) = spans[a];
        let min_t = preds[a]
            .iter()
            .filter_map(|&p| track[p])
            .map(|t| t + 1)
            .max()
            .unwrap_or(0);
        let free = |lane: &Vec<(usize, usize)>| lane.iter().all(|&(l, h)| h < lo || l > hi);
        let t = match (min_t..lanes.len()).find(|&t| free(&lanes[t])) {
            Some(t) => t,
            None => {
                lanes.resize(lanes.len().max(min_t), Vec::new());
                lanes.push(Vec::new());
                lanes.len() - 1
            }
        };
        lanes[t].push((lo, hi));
        track[a] = Some(t);
        assigned.insert(k, (Some(t), 0));
    }
    for k in groups.keys() {
        let entry = assigned.entry(*k).or_insert((None, 0));
        entry.1 = *next_net;
        *next_net += 1;
    }
    // A gap with nothing in it is one blank line.
    let tracks = if conns.is_empty() {
        0
    } else {
        lanes.len().max(1)
    };
    GapTracks {
        tracks,
        assigned,
        into,
    }
}

/// The canvas's line numbers: a token line per drawn row, then its gap's tracks and arrow
/// line.
struct Lines {
    token_line: Vec<usize>,
    gap_base: Vec<usize>,
    count: usize,
}

/// Fifth pass, lines: numbers the canvas's lines now that each gap's height is known.
fn number_lines(wrows: usize, gap_tracks: &[GapTracks]) -> Lines {
    let mut token_line = Vec::with_capacity(wrows);
    let mut gap_base = Vec::with_capacity(wrows);
    let mut count = 0;
    for wr in 0..wrows {
        token_line.push(count);
        count += 1;
        if let Some(g) = gap_tracks.get(wr) {
            gap_base.push(count);
            count += g.tracks + 1;
        }
    }
    Lines {
        token_line,
        gap_base,
        count,
    }
}

/// Sixth pass, painting: every piece, gutter run and room token onto the canvas, where
/// each character cell collects directions, so crossings and junctions come out right
/// whatever the order. Tokens go last: they cover the runs that cross their line.
fn paint(
    st: &State<'_>,
    cols: Columns,
    rows: &Rows,
    routes: &Routes,
    gap_tracks: &[GapTracks],
    lines: &Lines,
) -> Canvas {
    let mut canvas = Canvas {
        lines: vec![vec![Cell::default(); cols.line_width()]; lines.count],
    };
    for (g, conns) in routes.gaps.iter().enumerate() {
        let GapTracks {
            tracks,
            assigned,
            into,
        } = &gap_tracks[g];
        let base = lines.gap_base[g];
        let arrow_line = base + tracks;
        for c in conns {
            let (track, net) = assigned
                .get(&group_key(c, into))
                .copied()
                .unwrap_or((None, u32::MAX));
            match track {
                Some(t) if c.top != c.bottom => {
                    let track = base + t;
                    if track > base {
                        canvas.vertical(c.top, base, track - 1, c.solid, net);
                    }
                    canvas.add(track, c.top, UP, c.solid, net);
                    canvas.horizontal(track, c.top, c.bottom, c.solid, net);
                    canvas.add(track, c.bottom, DOWN, c.solid, net);
                    if track + 1 < arrow_line {
                        canvas.vertical(c.bottom, track + 1, arrow_line - 1, c.solid, net);
                    }
                }
                _ => canvas.vertical(c.top, base, arrow_line - 1, c.solid, net),
            }
            if c.arrive {
                canvas.arrow(arrow_line, c.bottom, c.solid);
            } else {
                canvas.vertical(c.bottom, arrow_line, arrow_line, c.solid, net);
            }
        }
        for &(x, solid, net) in &routes.pass_gap[g] {
            canvas.vertical(x, base, arrow_line, solid, net);
        }
    }
    for (wr, passes) in routes.pass_row.iter().enumerate() {
        for &(x, solid, net) in passes {
            canvas.vertical(x, lines.token_line[wr], lines.token_line[wr], solid, net);
        }
    }
    for (wr, row) in rows.tokens.iter().enumerate() {
        for &(c, ix) in row {
            canvas.text(lines.token_line[wr], cols.anchor(c), &st.token(ix));
        }
    }
    canvas
}

/// Seventh pass, row notes: after each token line, what the row leaves out to the sides and
/// the regions it enters (up to two names). Also whether any region was marked, for the
/// legend.
fn row_notes(st: &State<'_>, rows: &Rows, lines: &Lines) -> (Vec<String>, bool) {
    let zone = st.zone;
    let mut notes: Vec<String> = vec![String::new(); lines.count];
    let mut prev_regions: Vec<&str> = Vec::new();
    let mut regions_marked = false;
    for (wr, row) in rows.tokens.iter().enumerate() {
        let mut parts = Vec::new();
        if rows.more_left[wr] > 0 {
            parts.push(format!("+{} more to the left", rows.more_left[wr]));
        }
        if rows.more_right[wr] > 0 {
            parts.push(format!("+{} more to the right", rows.more_right[wr]));
        }
        if !zone.regions.is_empty() {
            let mut regions: Vec<&str> = row
                .iter()
                .map(|&(_, ix)| zone.graph[ix].region_id.as_str())
                .filter(|r| !r.is_empty())
                .collect();
            crate::text::sort_dedup(&mut regions);
            let mut new: Vec<&str> = regions
                .iter()
                .filter(|r| !prev_regions.contains(r))
                .copied()
                .collect();
            crate::text::sort_by_key(&mut new, |r| zone.regions.iter().position(|x| x.id == *r));
            let names: Vec<String> = new
                .iter()
                .take(2)
                .map(|r| clean(zone.region_name(r), 30))
                .collect();
            if !names.is_empty() {
                let mut s = format!("« {}", names.join(", "));
                if new.len() > 2 {
                    let _ = write!(s, " +{}", new.len() - 2);
                }
                parts.push(s);
                regions_marked = true;
            }
            if !regions.is_empty() {
                prev_regions = regions;
            }
        }
        notes[lines.token_line[wr]] = parts.join(", ");
    }
    (notes, regions_marked)
}

/// Last pass, text: each canvas line as characters, trailing spaces trimmed (chat clients
/// show them as noise), with its note three spaces after.
fn to_text(canvas: &Canvas, notes: &[String]) -> String {
    let mut text = String::new();
    for (i, line) in canvas.lines.iter().enumerate() {
        let mut s: String = line.iter().map(glyph).collect();
        let end = s.trim_end().len();
        s.truncate(end);
        if !notes[i].is_empty() {
            if !s.is_empty() {
                s.push_str("   ");
            }
            s.push_str(&notes[i]);
        }
        text.push_str(&s);
        text.push('\n');
    }
    text
}

fn legend(out: &mut String, st: &State<'_>, d: &Drawing) {
    let mut states = Vec::new();
    if st.current.is_some() {
        states.push(format!("{CURRENT} you are here"));
    }
    if !st.visited.is_empty() {
        states.push(format!("{VISITED} visited"));
    }
    states.push(format!("{UNVISITED} not visited"));
    if st.options.iter().any(Option::is_some) {
        states.push("[n] your choice: !zone go n".to_string());
    }
    let mut lines = format!("Legend: {}\n", states.join("  "));
    let mut kinds: Vec<String> = d
        .kinds
        .iter()
        .map(|&k| format!("{} {}", kind_glyph(k), kind_name(k)))
        .collect();
    if !st.unknown.is_empty() {
        // The fork menu's "something": a room behind a Perception check the run failed.
        kinds.push(format!("{UNKNOWN_GLYPH} something you sensed"));
    }
    if !kinds.is_empty() {
        let _ = writeln!(lines, "        {}", kinds.join("  "));
    }
    let mut marks = vec![format!("─│{ARROW} passage")];
    if d.locked_drawn {
        marks.push(format!("╌┆{LOCK_MARK} locked passage"));
    }
    if d.regions_marked {
        marks.push("« region begins".to_string());
    }
    let _ = writeln!(lines, "        {}", marks.join("  "));
    out.push_str(&lines);
}

fn path_strip(out: &mut String, st: &State<'_>, view: &MapView) {
    let n = st.zone.graph.node_count();
    let mut path: Vec<NodeIndex> = view
        .visited
        .iter()
        .copied()
        .filter(|ix| ix.index() < n)
        .collect();
    if let Some(c) = st.current
        && path.last() != Some(&c)
    {
        path.push(c);
    }
    if path.is_empty() {
        return;
    }
    let item = |ix: NodeIndex| {
        let mut s = String::new();
        if Some(ix) == st.current {
            s.push(CURRENT);
            s.push(' ');
        }
        s.push_str(&st.label(ix, LABEL_CHARS));
        s
    };
    let mut parts: Vec<String> = Vec::new();
    if path.len() > PATH_HEAD + PATH_TAIL + 1 {
        parts.extend(path[..PATH_HEAD].iter().map(|&ix| item(ix)));
        parts.push(format!("… {} rooms …", path.len() - PATH_HEAD - PATH_TAIL));
        parts.extend(path[path.len() - PATH_TAIL..].iter().map(|&ix| item(ix)));
    } else {
        parts.extend(path.iter().map(|&ix| item(ix)));
    }
    let _ = writeln!(out, "Path: {}", parts.join(" → "));
}
