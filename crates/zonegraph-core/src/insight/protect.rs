//! Small cells that stay hidden: every count of 1 to 4 insight would show is hidden, and
//! then, while the sums the answer offers still let a reader work one out, one more count
//! beside it (see [`protect`]).

use super::*;

/// The counts of one insight as cells of a table, and every sum the answer lets a reader form
/// over them: what [`protect`] hides by.
#[derive(Default)]
struct Table {
    value: Vec<u64>,
    /// Written in the answer; else a count it never gives (a lock's failures) but which a
    /// sum may pin.
    written: Vec<bool>,
    hidden: Vec<bool>,
    /// Each relation: the cells on the left sum to the cells on the right.
    rels: Vec<(Vec<usize>, Vec<usize>)>,
}

impl Table {
    fn cell(&mut self, c: Count) -> usize {
        self.value.push(c.0);
        self.written.push(true);
        self.hidden.push((1..MIN_CELL).contains(&c.0));
        self.value.len() - 1
    }

    fn unwritten(&mut self, v: u64) -> usize {
        self.value.push(v);
        self.written.push(false);
        self.hidden.push(true);
        self.value.len() - 1
    }

    /// Adds `Σ lhs = Σ rhs` when it holds: a relation that does not hold (a run that came
    /// back to a room) cannot be used to pin anything.
    fn relate(&mut self, lhs: Vec<usize>, rhs: Vec<usize>) {
        let sum = |c: &[usize]| c.iter().map(|&i| u128::from(self.value[i])).sum::<u128>();
        if sum(&lhs) == sum(&rhs) {
            self.rels.push((lhs, rhs));
        }
    }

    /// Unknown to a reader: hidden and not 0. A 0 is no one's play and is never hidden for
    /// its own sake; a reader is assumed to know every 0 (the zone's shape may tell one: a
    /// room with no encounter holds no one before its fork), so hiding one protects nothing.
    fn unknown(&self, i: usize) -> bool {
        self.hidden[i] && self.value[i] != 0
    }

    fn shown(&self, i: usize) -> bool {
        !self.hidden[i]
    }

    /// A cell of 1 to 4 runs that the shown cells pin, as a reader works: what the sums
    /// pin by linear algebra over all of them together, and the cells of a sum whose unknown
    /// parts (each at least 1: every 0 is known) add up to as many as they are (all 1), over
    /// and over with what was pinned, until nothing more is.
    fn pinned(&self) -> Option<usize> {
        let small = |i: usize| (1..MIN_CELL).contains(&self.value[i]);
        let mut known: Vec<bool> = (0..self.value.len()).map(|i| !self.unknown(i)).collect();
        loop {
            let mut learnt = false;
            let cols: Vec<usize> = (0..known.len()).filter(|&i| !known[i]).collect();
            let mut rows: Vec<Vec<f64>> = Vec::new();
            for (lhs, rhs) in &self.rels {
                let mut row = vec![0.0; cols.len()];
                for (side, sign) in [(lhs, 1.0), (rhs, -1.0)] {
                    for &i in side {
                        if let Ok(c) = cols.binary_search(&i) {
                            row[c] += sign;
                        }
                    }
                }
                if row.iter().any(|x| *x != 0.0) {
                    rows.push(row);
                }
            }
            reduce(&mut rows);
            for row in &rows {
                let mut nonzero = row.iter().enumerate().filter(|(_, x)| x.abs() > 1e-9);
                if let (Some((c, _)), None) = (nonzero.next(), nonzero.next()) {
                    known[cols[c]] = true;
                    learnt = true;
                }
            }
            for (lhs, rhs) in &self.rels {
                let sum = |side: &[usize]| {
                    side.iter()
                        .filter(|&&i| known[i])
                        .map(|&i| i128::from(self.value[i]))
                        .sum::<i128>()
                };
                let open: Vec<usize> = lhs
                    .iter()
                    .chain(rhs)
                    .copied()
                    .filter(|&i| !known[i])
                    .collect();
                let one_side =
                    open.iter().all(|i| lhs.contains(i)) || open.iter().all(|i| rhs.contains(i));
                if !open.is_empty()
                    && one_side
                    && (sum(lhs) - sum(rhs)).unsigned_abs() == open.len() as u128
                {
                    for i in open {
                        known[i] = true;
                    }
                    learnt = true;
                }
            }
            if let Some(i) = (0..known.len()).find(|&i| known[i] && self.unknown(i) && small(i)) {
                return Some(i);
            }
            if !learnt {
                return None;
            }
        }
    }

    /// Hides one more written cell beside `i`: in the relation holding `i` with the fewest
    /// unknowns, its smallest shown count above 0 (a part before the total when equal); else
    /// the same in any relation with an unknown. False when none is left.
    fn hide_beside(&mut self, i: usize) -> bool {
        let unknowns = |r: &(Vec<usize>, Vec<usize>)| {
            r.0.iter().chain(&r.1).filter(|&&c| self.unknown(c)).count()
        };
        let mut order: Vec<usize> = (0..self.rels.len()).collect();
        text::sort_by_key(&mut order, |&r| {
            let (lhs, rhs) = &self.rels[r];
            let holds = lhs.contains(&i) || rhs.contains(&i);
            (
                !holds,
                unknowns(&self.rels[r]) == 0,
                unknowns(&self.rels[r]),
                r,
            )
        });
        for r in order {
            if unknowns(&self.rels[r]) == 0 {
                continue;
            }
            let (lhs, rhs) = &self.rels[r];
            let pick = rhs
                .iter()
                .chain(lhs)
                .copied()
                .filter(|&c| self.written[c] && self.shown(c) && self.value[c] != 0)
                .min_by_key(|&c| self.value[c]);
            if let Some(c) = pick {
                self.hidden[c] = true;
                return true;
            }
        }
        false
    }

    fn count(&self, i: usize) -> Count {
        if self.hidden[i] {
            Count::HIDDEN
        } else {
            Count(self.value[i])
        }
    }

    /// `k` ÷ `n` when both are shown and `n` is at least [`MIN_CELL`].
    fn rate(&self, k: usize, n: usize) -> Option<f64> {
        (self.shown(k) && self.shown(n) && self.value[n] >= MIN_CELL)
            .then(|| round4(self.value[k] as f64 / self.value[n] as f64))
    }
}

/// Brings `rows` to reduced row echelon form (partial pivoting).
fn reduce(rows: &mut [Vec<f64>]) {
    let width = rows.first().map_or(0, Vec::len);
    let mut top = 0;
    for c in 0..width {
        let Some(p) = (top..rows.len())
            .filter(|&r| rows[r][c].abs() > 1e-9)
            .max_by(|&a, &b| rows[a][c].abs().total_cmp(&rows[b][c].abs()))
        else {
            continue;
        };
        rows.swap(top, p);
        let lead = rows[top][c];
        for x in rows[top].iter_mut() {
            *x /= lead;
        }
        let pivot = rows[top].clone();
        for (r, row) in rows.iter_mut().enumerate() {
            let f = row[c];
            if r != top && f.abs() > 1e-9 {
                for (x, p) in row.iter_mut().zip(&pivot) {
                    *x -= f * p;
                }
            }
        }
        top += 1;
        if top == rows.len() {
            break;
        }
    }
}

/// The figures of `raw` ([`tally`]) as they may be read. Every count of 1 to 4 is hidden
/// (primary suppression), and then, while the written counts still pin a hidden one of 1 to 4
/// through the sums the answer offers, one more count beside it is hidden (complementary
/// suppression; [`Table::hide_beside`]). The sums: runs = Σ outcomes; each outcome = Σ of it
/// over the rooms; ended = won + lost + fled + abandoned + dead end = Σ routes' runs; won =
/// Σ routes' won; a route's runs = its won + the rest; a room's reached = Σ its endings + the
/// runs that went on = Σ the routes through it + the runs still going; a room's ended runs
/// and its won = Σ over the routes ending there; a fork's runs that left = Σ its ways' taken
/// (the shares give it) = the runs that went on from its room; its met = left + waiting; its
/// room's active + stranded = waiting + the runs not yet at it; a way's taken = picked + the
/// rest; the room's timed out = Σ picked; a lock's met = passed + failed = its fork's met.
/// A rate is given only over shown counts; a lock's prediction only when `met` is shown, its
/// flag only beside its observed rate; routes are sorted by their shown runs.
pub(super) fn protect(raw: &Insight) -> Insight {
    let mut t = Table::default();
    let runs = t.cell(raw.runs);
    let out = Standing::ALL.map(|s| t.cell(raw.outcomes.get(s)));
    t.relate(vec![runs], out.to_vec());
    let (ended, won) = (t.cell(raw.win.ended), t.cell(raw.win.won));
    let finished = [
        Standing::Won,
        Standing::Lost,
        Standing::Fled,
        Standing::Abandoned,
        Standing::DeadEnd,
    ];
    t.relate(vec![ended], finished.map(|s| out[s as usize]).to_vec());
    t.relate(vec![won], vec![out[Standing::Won as usize]]);

    let rooms: Vec<(usize, [usize; 7], usize)> = raw
        .rooms
        .iter()
        .map(|r| {
            let reached = t.cell(r.reached);
            let e = Standing::ALL.map(|s| t.cell(r.ended_here.get(s)));
            (reached, e, t.cell(r.timed_out))
        })
        .collect();
    for s in Standing::ALL {
        let parts = rooms.iter().map(|r| r.1[s as usize]).collect();
        t.relate(vec![out[s as usize]], parts);
    }
    let mut went_on = Vec::new();
    for ((reached, e, _), r) in rooms.iter().zip(&raw.rooms) {
        let stayed: u64 = Standing::ALL.iter().map(|s| r.ended_here.get(*s).0).sum();
        let on = t.unwritten(r.reached.0.saturating_sub(stayed));
        let mut parts = e.to_vec();
        parts.push(on);
        t.relate(vec![*reached], parts);
        went_on.push(on);
    }

    let routes: Vec<(usize, usize)> = raw
        .routes
        .iter()
        .map(|r| {
            let (n, w) = (t.cell(r.runs), t.cell(r.won));
            let rest = t.unwritten(r.runs.0.saturating_sub(r.won.0));
            t.relate(vec![n], vec![w, rest]);
            (n, w)
        })
        .collect();
    t.relate(vec![ended], routes.iter().map(|r| r.0).collect());
    t.relate(vec![won], routes.iter().map(|r| r.1).collect());
    for ((reached, e, _), r) in rooms.iter().zip(&raw.rooms) {
        let through: Vec<usize> = (0..routes.len())
            .filter(|&k| raw.routes[k].rooms.contains(&r.id))
            .collect();
        let sum: u64 = through.iter().map(|&k| raw.routes[k].runs.0).sum();
        let going = t.unwritten(r.reached.0.saturating_sub(sum));
        let mut parts: Vec<usize> = through.iter().map(|&k| routes[k].0).collect();
        parts.push(going);
        t.relate(vec![*reached], parts);
        let last: Vec<usize> = (0..routes.len())
            .filter(|&k| raw.routes[k].rooms.last() == Some(&r.id))
            .collect();
        t.relate(
            finished.map(|s| e[s as usize]).to_vec(),
            last.iter().map(|&k| routes[k].0).collect(),
        );
        t.relate(
            vec![e[Standing::Won as usize]],
            last.iter().map(|&k| routes[k].1).collect(),
        );
    }

    struct ForkCells {
        met: usize,
        left: usize,
        ways: Vec<(usize, usize)>,
    }
    let forks: Vec<ForkCells> = raw
        .forks
        .iter()
        .map(|f| {
            let met = t.cell(f.met);
            let left_n: u64 = f.ways.iter().map(|w| w.taken.0).sum();
            let left = t.cell(Count(left_n));
            let ways: Vec<(usize, usize)> = f
                .ways
                .iter()
                .map(|w| {
                    let (taken, picked) = (t.cell(w.taken), t.cell(w.picked));
                    let chosen = t.unwritten(w.taken.0.saturating_sub(w.picked.0));
                    t.relate(vec![taken], vec![picked, chosen]);
                    (taken, picked)
                })
                .collect();
            t.relate(vec![left], ways.iter().map(|w| w.0).collect());
            let waiting = t.unwritten(f.met.0.saturating_sub(left_n));
            t.relate(vec![met], vec![left, waiting]);
            if let Some(k) = raw.rooms.iter().position(|r| r.id == f.at) {
                let (_, e, timed) = rooms[k];
                t.relate(vec![timed], ways.iter().map(|w| w.1).collect());
                t.relate(vec![went_on[k]], vec![left]);
                let here = &raw.rooms[k].ended_here;
                let before = t.unwritten(
                    (here.active.0 + here.stranded.0)
                        .saturating_sub(f.met.0.saturating_sub(left_n)),
                );
                t.relate(
                    vec![e[Standing::Active as usize], e[Standing::Stranded as usize]],
                    vec![waiting, before],
                );
            }
            ForkCells { met, left, ways }
        })
        .collect();
    let locks: Vec<(usize, usize)> = raw
        .locks
        .iter()
        .map(|l| {
            let (met, passed) = (t.cell(l.met), t.cell(l.passed));
            let failed = t.unwritten(l.met.0.saturating_sub(l.passed.0));
            t.relate(vec![met], vec![passed, failed]);
            if let Some(f) = raw.forks.iter().position(|f| f.at == l.from) {
                t.relate(vec![met], vec![forks[f].met]);
            }
            (met, passed)
        })
        .collect();

    while let Some(i) = t.pinned() {
        if !t.hide_beside(i) {
            break;
        }
    }

    let outcomes_of = |e: &[usize; 7]| {
        let mut o = Outcomes::default();
        for s in Standing::ALL {
            *o.slot(s) = t.count(e[s as usize]);
        }
        o
    };
    let mut routes_out: Vec<RouteInsight> = raw
        .routes
        .iter()
        .zip(&routes)
        .map(|(r, &(n, w))| RouteInsight {
            rooms: r.rooms.clone(),
            runs: t.count(n),
            share: t.rate(n, ended),
            won: t.count(w),
        })
        .collect();
    // The most taken first, hidden ones last; equal counts keep the routes' sorted order
    // (stable), so the order tells nothing of a hidden count.
    text::sort_by(&mut routes_out, |a, b| {
        let key = |r: &RouteInsight| r.runs.exact().map_or(0, |n| n + 1);
        key(b).cmp(&key(a))
    });
    Insight {
        zone_id: raw.zone_id.clone(),
        runs: t.count(runs),
        outcomes: outcomes_of(&out),
        rooms: raw
            .rooms
            .iter()
            .zip(&rooms)
            .map(|(r, (reached, e, timed))| RoomInsight {
                id: r.id.clone(),
                reached: t.count(*reached),
                ended_here: outcomes_of(e),
                timed_out: t.count(*timed),
            })
            .collect(),
        forks: raw
            .forks
            .iter()
            .zip(&forks)
            .map(|(f, c)| ForkInsight {
                at: f.at.clone(),
                met: t.count(c.met),
                ways: f
                    .ways
                    .iter()
                    .zip(&c.ways)
                    .map(|(w, &(taken, picked))| WayInsight {
                        to: w.to.clone(),
                        taken: t.count(taken),
                        picked: t.count(picked),
                        share: t.rate(taken, c.left),
                    })
                    .collect(),
            })
            .collect(),
        locks: raw
            .locks
            .iter()
            .zip(&locks)
            .map(|(l, &(met, passed))| {
                let observed = t.rate(passed, met);
                let known = t.shown(met);
                LockInsight {
                    from: l.from.clone(),
                    to: l.to.clone(),
                    kind: l.kind,
                    met: t.count(met),
                    passed: t.count(passed),
                    observed,
                    predicted: l.predicted.filter(|_| known),
                    interval: l.interval.filter(|_| known),
                    flagged: l.flagged && observed.is_some(),
                }
            })
            .collect(),
        routes: routes_out,
        win: WinInsight {
            ended: t.count(ended),
            won: t.count(won),
            observed: t.rate(won, ended),
            predicted: raw.win.predicted,
            levels: raw.win.levels.clone(),
        },
    }
}
