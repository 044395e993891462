//! The A/B (issue P17): runs of an older Tollgate binary and this one alternate (old-new,
//! new-old, old-new, …, so a drift of the machine's speed through the window falls on both),
//! each run with its own fresh mock, floor and data directory, and the report gives each figure
//! of P17's table — throughput and CPU against the floor, p99 and whether the rate held at the
//! fixed rates, peak RSS — as the median over a binary's runs with that binary's own spread
//! (min–max) beside it. A change is called better or worse only when the medians differ by
//! more than the larger of the two spreads.

use std::fmt::Write as _;
use std::path::Path;

use crate::Config;
use crate::report::{self, Summary};

/// Which way a figure improves.
#[derive(Clone, Copy)]
enum Better {
    Higher,
    Lower,
}

/// How a figure prints.
#[derive(Clone, Copy)]
enum Unit {
    Ratio,
    Ms,
    Rps,
    Us,
    Mb,
}

impl Unit {
    fn fmt(self, v: f64) -> String {
        match self {
            Unit::Ratio => format!("{v:.2}×"),
            Unit::Ms => format!("{v:.2} ms"),
            Unit::Rps => format!("{v:.0}"),
            Unit::Us => format!("{v:.1} µs"),
            Unit::Mb => format!("{v:.1} MB"),
        }
    }
}

/// A figure read from one run's summary.
type Getter = Box<dyn Fn(&Summary) -> Option<f64>>;

/// One line of the table.
struct Line {
    name: String,
    unit: Unit,
    better: Better,
    get: Getter,
    /// For an achieved-rate line: the phase and the offered rate (the cell also says in how many
    /// runs the rate held).
    offered: Option<(String, u32)>,
}

/// A rate counts as sustained when oha achieved 98 % of it with no failed request.
fn sustained(s: &Summary, phase: &str, rate: u32) -> Option<bool> {
    let t = s.row(phase, "tollgate")?;
    Some(t.m.failed == 0 && t.m.rps >= 0.98 * f64::from(rate))
}

/// Tollgate's figure divided by the floor's in `phase`.
fn vs_floor(phase: &str, f: fn(&crate::Row) -> f64) -> Getter {
    let phase = phase.to_owned();
    Box::new(move |s: &Summary| {
        let t = s.row(&phase, "tollgate")?;
        let fl = s.row(&phase, "floor")?;
        Some(f(t) / f(fl))
    })
}

/// Tollgate's own figure in `phase`.
fn own(phase: &str, f: fn(&crate::Row) -> f64) -> Getter {
    let phase = phase.to_owned();
    Box::new(move |s: &Summary| s.row(&phase, "tollgate").map(f))
}

/// The lines of the table for the configured rates.
fn lines(cfg: &Config) -> Vec<Line> {
    let line = |name: String, unit, better, get| Line {
        name,
        unit,
        better,
        get,
        offered: None,
    };
    let kinds = [("non-stream", false), ("stream", true)];
    let mut out = Vec::new();
    if cfg.rates.contains(&None) {
        for (kind, _) in kinds {
            let phase = format!("{kind} @max");
            out.push(line(
                format!("max throughput vs the floor, {kind}"),
                Unit::Ratio,
                Better::Higher,
                vs_floor(&phase, |r| r.m.rps),
            ));
            out.push(line(
                format!("max throughput, {kind} (RPS)"),
                Unit::Rps,
                Better::Higher,
                own(&phase, |r| r.m.rps),
            ));
        }
        for (kind, _) in kinds {
            let phase = format!("{kind} @max");
            out.push(line(
                format!("CPU per request vs the floor at max, {kind}"),
                Unit::Ratio,
                Better::Lower,
                vs_floor(&phase, |r| r.cpu_us),
            ));
            out.push(line(
                format!("CPU per request at max, {kind}"),
                Unit::Us,
                Better::Lower,
                own(&phase, |r| r.cpu_us),
            ));
        }
    }
    for rate in cfg.rates.iter().flatten() {
        for (kind, _) in kinds {
            let phase = format!("{kind} @{rate}");
            out.push(Line {
                name: format!("{rate} RPS offered, {kind}: achieved RPS"),
                unit: Unit::Rps,
                better: Better::Higher,
                get: own(&phase, |r| r.m.rps),
                offered: Some((phase.clone(), *rate)),
            });
            out.push(line(
                format!("{rate} RPS offered, {kind}: p99"),
                Unit::Ms,
                Better::Lower,
                own(&phase, |r| r.m.p99),
            ));
            out.push(line(
                format!("{rate} RPS offered, {kind}: p99 vs the floor"),
                Unit::Ratio,
                Better::Lower,
                vs_floor(&phase, |r| r.m.p99),
            ));
        }
    }
    if cfg.p15 {
        use crate::p15::{Figure as F, figure, rate};
        let r = rate();
        for (name, unit, better, f) in [
            (
                format!("P15 fairness @{r}: other key's p99 alone"),
                Unit::Ms,
                Better::Lower,
                F::AloneP99,
            ),
            (
                format!("P15 fairness @{r}: other key's p99, one key at its limit"),
                Unit::Ms,
                Better::Lower,
                F::ContendedP99,
            ),
            (
                "P15 fairness: p99 with one key at its limit vs alone".to_owned(),
                Unit::Ratio,
                Better::Lower,
                F::ContendedVsAlone,
            ),
            (
                "P15 ten rules: max throughput vs no rules".to_owned(),
                Unit::Ratio,
                Better::Higher,
                F::RulesMaxVsNone,
            ),
            (
                "P15 ten rules: CPU per request at max vs no rules".to_owned(),
                Unit::Ratio,
                Better::Lower,
                F::RulesCpuVsNone,
            ),
            (
                format!("P15 ten rules @{r}: p99 vs no rules"),
                Unit::Ratio,
                Better::Lower,
                F::RulesP99VsNone,
            ),
        ] {
            out.push(line(
                name,
                unit,
                better,
                Box::new(move |s: &Summary| figure(&s.rows, f)),
            ));
        }
    }
    out.push(line(
        "peak RSS under load (sampled every 50 ms)".to_owned(),
        Unit::Mb,
        Better::Lower,
        Box::new(|s: &Summary| {
            s.sampled_peak_rss_mb
                .iter()
                .find(|(n, _)| *n == "tollgate")
                .map(|p| p.1)
        }),
    ));
    out.push(line(
        "peak anonymous RSS under load (RssAnon, sampled with it)".to_owned(),
        Unit::Mb,
        Better::Lower,
        Box::new(|s: &Summary| {
            s.sampled_peak_anon_mb
                .iter()
                .find(|(n, _)| *n == "tollgate")
                .map(|p| p.1)
        }),
    ));
    out.push(line(
        "idle RSS 2 s after set-up".to_owned(),
        Unit::Mb,
        Better::Lower,
        Box::new(|s: &Summary| Some(s.idle_rss_mb)),
    ));
    out.push(line(
        "idle anonymous RSS 2 s after set-up (RssAnon)".to_owned(),
        Unit::Mb,
        Better::Lower,
        Box::new(|s: &Summary| Some(s.idle_anon_mb)),
    ));
    out
}

/// Median, min and max of some runs' figures (None when a run lacks it).
#[derive(Clone, Copy)]
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

impl Spread {
    fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
        })
    }

    fn width(self) -> f64 {
        self.max - self.min
    }
}

/// One column's cell: "median (min–max)", and for a fixed rate in how many runs it held.
fn cell(line: &Line, runs: &[Summary]) -> (String, Option<Spread>) {
    let values: Vec<f64> = runs.iter().filter_map(|s| (line.get)(s)).collect();
    let Some(spread) = Spread::of(&values) else {
        return ("–".to_owned(), None);
    };
    let u = line.unit;
    let mut text = if runs.len() > 1 {
        format!(
            "{} ({}–{})",
            u.fmt(spread.median),
            u.fmt(spread.min),
            u.fmt(spread.max)
        )
    } else {
        u.fmt(spread.median)
    };
    if let Some((phase, rate)) = &line.offered {
        let held = runs
            .iter()
            .filter(|s| sustained(s, phase, *rate) == Some(true))
            .count();
        if held == runs.len() {
            text.push_str(", sustained");
        } else {
            let _ = write!(text, ", saturates (held in {held} of {})", runs.len());
        }
    }
    (text, Some(spread))
}

/// The verdict on new against old: the relative change of the medians, and whether it is
/// beyond the larger same-binary spread.
fn verdict(line: &Line, old: Option<Spread>, new: Option<Spread>) -> String {
    let (Some(o), Some(n)) = (old, new) else {
        return "–".to_owned();
    };
    let delta = n.median - o.median;
    let rel = if o.median == 0.0 {
        String::new()
    } else {
        format!("{:+.1} %", delta / o.median * 100.0)
    };
    if delta.abs() <= o.width().max(n.width()) {
        return format!("{rel}, within the spread");
    }
    let better = match line.better {
        Better::Higher => delta > 0.0,
        Better::Lower => delta < 0.0,
    };
    format!(
        "{rel}, **{}** beyond the spread",
        if better { "better" } else { "worse" }
    )
}

/// The A/B table as markdown.
fn table(cfg: &Config, labels: [&str; 2], bins: [&Path; 2], runs: [&[Summary]; 2]) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "A/B, same window: {} runs of each binary, alternating (old first in odd runs, new first in even ones); {} s per phase, {} connections; each figure is the median over a binary's runs with its min–max in brackets; a change is called better or worse only beyond the larger same-binary spread.\n",
        runs[0].len(),
        cfg.seconds,
        cfg.connections
    );
    for (label, bin) in labels.iter().zip(bins) {
        let _ = writeln!(md, "- {label}: `{}`", bin.display());
    }
    let _ = writeln!(
        md,
        "\n| figure | {} | {} | {} vs {} |\n|---|---|---|---|",
        labels[0], labels[1], labels[1], labels[0]
    );
    for line in lines(cfg) {
        let (old_text, old) = cell(&line, runs[0]);
        let (new_text, new) = cell(&line, runs[1]);
        let _ = writeln!(
            md,
            "| {} | {old_text} | {new_text} | {} |",
            line.name,
            verdict(&line, old, new)
        );
    }
    if cfg.p15 {
        for (label, runs) in labels.iter().zip(runs) {
            let _ = writeln!(md, "\n{}", fairness(label, runs));
        }
    }
    let books = |r: &[Summary]| r.iter().filter(|s| s.balanced).count();
    let _ = writeln!(
        md,
        "\nBooks (every 200 billed and logged): {} {}/{} runs, {} {}/{} runs.",
        labels[0],
        books(runs[0]),
        runs[0].len(),
        labels[1],
        books(runs[1]),
        runs[1].len()
    );
    md
}

/// Issue P15's fairness verdict for one binary: the other key's p99 while one key is at its
/// limit (median over the runs) against the spread of its p99 alone.
fn fairness(label: &str, runs: &[Summary]) -> String {
    use crate::p15::{Figure, figure};
    let of = |f| {
        Spread::of(
            &runs
                .iter()
                .filter_map(|s| figure(&s.rows, f))
                .collect::<Vec<_>>(),
        )
    };
    let (Some(alone), Some(contended)) = (of(Figure::AloneP99), of(Figure::ContendedP99)) else {
        return format!("P15 fairness, {label}: not measured.");
    };
    let within = contended.median <= alone.max;
    format!(
        "P15 fairness, {label}: the other key's p99 with one key at its limit is {} (median), {} its p99 alone, {} ({}–{}) over {} runs.",
        Unit::Ms.fmt(contended.median),
        if within {
            "within the spread of"
        } else {
            "**beyond** the spread of"
        },
        Unit::Ms.fmt(alone.median),
        Unit::Ms.fmt(alone.min),
        Unit::Ms.fmt(alone.max),
        runs.len()
    )
}

/// What the A/B writes to `bench-load-ab.json`.
#[derive(serde::Serialize)]
struct Ab<'a> {
    labels: [&'a str; 2],
    binaries: [String; 2],
    old: &'a [Summary],
    new: &'a [Summary],
}

/// Runs the A/B of `old` against `new`, `runs` runs each; Ok(false) when any run's books do
/// not match.
pub async fn run(cfg: &Config, old: &Path, new: &Path, runs: usize) -> Result<bool, String> {
    let old_label = std::env::var("LOAD_AGAINST_LABEL").unwrap_or_else(|_| "old".to_owned());
    let new_label = std::env::var("LOAD_LABEL").unwrap_or_else(|_| "new".to_owned());
    let mut results: [Vec<Summary>; 2] = [Vec::new(), Vec::new()];
    for i in 0..runs {
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for which in order {
            let (bin, label) = if which == 0 {
                (old, old_label.as_str())
            } else {
                (new, new_label.as_str())
            };
            println!("\n== run {} of {runs}: {label} ({})", i + 1, bin.display());
            let summary = crate::run(cfg, bin).await?;
            let md = summary.markdown();
            report::save(
                &cfg.out_dir,
                &format!("bench-load-run{}-{label}", i + 1),
                &md,
                &summary,
            )?;
            results[which].push(summary);
        }
    }
    let labels = [old_label.as_str(), new_label.as_str()];
    let md = table(cfg, labels, [old, new], [&results[0], &results[1]]);
    println!("\n{md}");
    let ab = Ab {
        labels,
        binaries: [old.display().to_string(), new.display().to_string()],
        old: &results[0],
        new: &results[1],
    };
    report::save(&cfg.out_dir, "bench-load-ab", &md, &ab)?;
    Ok(results.iter().flatten().all(|s| s.balanced))
}
