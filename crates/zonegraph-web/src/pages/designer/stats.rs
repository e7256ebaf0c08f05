//! The designer's stats tab: route lengths and counts, forks, choke points, and each lock's
//! pass chance as a small chart.

use leptos::prelude::*;
use zonegraph_core::analysis::LockStats;

use crate::doc::Loaded;
use crate::model::{self, num};

/// The zone's stats from [`zonegraph_core::analysis::stats`].
pub fn view(l: &Loaded) -> impl IntoView + use<> {
    let s = zonegraph_core::analysis::stats(&l.zone);
    let opt = |v: Option<usize>| v.map_or_else(|| "—".to_string(), |v| format!("{v} rooms"));
    let routes = match s.routes {
        Some(n) => n.to_string(),
        None => "unbounded (a loop lies on a route)".into(),
    };
    let chokes: Vec<String> = s.choke_points.iter().map(|id| label(l, id)).collect();
    let [d1, d2] = difficulty(&s, &l.zone);
    let drawing = s.drawing.summary();
    let overridden = s
        .drawing
        .overridden
        .iter()
        .map(|o| view! { <li><b>{label(l, &o.id)}</b>": "{o.why.clone()}</li> })
        .collect_view();
    let locks = s
        .locks
        .iter()
        .map(|lock| lock_chart(l, lock))
        .collect_view();
    view! {
        <div class="stats">
            <dl class="kv">
                <dt>"Longest route"</dt><dd>{opt(s.longest_path)}</dd>
                <dt>"Shortest route"</dt><dd>{opt(s.shortest_path)}</dd>
                <dt>"Routes"</dt><dd>{routes}</dd>
                <dt>"Forks"</dt><dd>{s.forks.to_string()}</dd>
                <dt>"Choke points"</dt><dd>{chokes.join(" → ")}</dd>
                <dt>{d1.0}</dt><dd>{d1.1}</dd>
                <dt>{d2.0}</dt><dd>{d2.1}</dd>
                <dt>"Drawing"</dt><dd data-drawing>{drawing}</dd>
            </dl>
            <ul class="overridden">{overridden}</ul>
            <h3>"Locks"</h3>
            <ul class="locks">{locks}</ul>
        </div>
    }
    .into_any()
}

/// The two difficulty lines, (label, figures): the best route's win chance and expected
/// wounds at the zone's `min_level` and `max_level` ([`zonegraph_core::difficulty`]).
fn difficulty(s: &zonegraph_core::Stats, zone: &zonegraph_core::Zone) -> [(String, String); 2] {
    // Fixed-point by hand: f64 printing costs the page kilobytes of WebAssembly.
    let fixed = |x: f64, scale: i64| {
        let n = (x * scale as f64).round() as i64;
        let frac = (n % scale + scale).to_string();
        format!("{}.{}", n / scale, &frac[1..])
    };
    let line =
        |level: u32, figures: Option<&zonegraph_core::difficulty::LevelDifficulty>, why: &str| {
            (
                format!("Difficulty, level {level}"),
                figures.map_or_else(
                    || format!("not modelled{why}"),
                    |l| {
                        format!(
                            "wins {}% · {} wounds expected (best route)",
                            fixed(l.win_chance * 100.0, 10),
                            fixed(l.expected_wounds, 100)
                        )
                    },
                ),
            )
        };
    let d = s.difficulty.as_ref();
    [
        line(
            zone.min_level,
            d.map(|d| &d.min_level),
            " (a loop on the way, no single entry and boss, or over 8 keys and regions locks name)",
        ),
        line(zone.max_level, d.map(|d| &d.max_level), ""),
    ]
}

/// A room's label, or its id when the zone has no such room.
fn label(l: &Loaded, id: &str) -> String {
    l.zone
        .node_by_id(id)
        .map_or_else(|| id.to_string(), |n| n.display_label().to_string())
}

/// One lock's pass chance: bars across ability modifiers, or pass/fail across levels.
fn lock_chart(l: &Loaded, lock: &LockStats) -> impl IntoView + use<> {
    let title = format!("{} → {}", label(l, &lock.from), label(l, &lock.to));
    let chart = if let Some(by) = &lock.by_modifier {
        let n = by.len().max(1) as f64;
        let (w, h) = (220.0, 70.0);
        let bw = w / n;
        let bars = by
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let bh = (h - 26.0) * c.chance;
                let x = i as f64 * bw;
                view! {
                    <g>
                        <rect class="bar" x=num(x + 3.0) y=num(h - 14.0 - bh) width=num(bw - 6.0) height=num(bh) rx="2"></rect>
                        <text class="pct" x=num(x + bw / 2.0) y=num(h - 17.0 - bh) text-anchor="middle">{model::percent(c.chance)}</text>
                        <text class="axis" x=num(x + bw / 2.0) y="68" text-anchor="middle">{format!("{:+}", c.modifier)}</text>
                    </g>
                }
            })
            .collect_view();
        let label = format!(
            "Pass chance by ability modifier: {}",
            by.iter()
                .map(|c| format!("{:+} {}", c.modifier, model::percent(c.chance)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        view! {
            <svg class="chart" viewBox="0 0 220 70" role="img" aria-label=label>{bars}</svg>
            <p class="chart-caption">"pass chance by ability modifier"</p>
        }
        .into_any()
    } else if let Some(levels) = &lock.by_level {
        let cells = levels
            .iter()
            .take(20)
            .map(|lv| {
                view! {
                    <span class={if lv.passes { "lv pass" } else { "lv fail" }}
                        title=format!("level {}", lv.level)>{lv.level.to_string()}</span>
                }
            })
            .collect_view();
        view! { <div class="levels" aria-label="Levels that pass">{cells}</div>
        <p class="chart-caption">"levels that pass (green)"</p> }
        .into_any()
    } else {
        view! { <p class="chart-caption">{lock.note.clone().unwrap_or_default()}</p> }.into_any()
    };
    view! {
        <li>
            <div class="lock-title">{title}</div>
            <div class="lock-req">{lock.requirement.clone()}</div>
            {chart}
        </li>
    }
}
