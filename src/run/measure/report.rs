//! `measure`'s report as text and as a pull-request summary.

use super::*;

impl MeasureReport {
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}: {} ({} crashed, {} timed out), {} of the ledger checked\n",
            self.file,
            crate::console::count(self.tests as u64, "test"),
            self.crashed.len(),
            self.timed_out.len(),
            crate::console::count(self.claims_checked as u64, "claim")
        );
        if self.unpruned {
            out.push_str("no ledger: nothing is pruned and cleaned coverage is raw coverage (run `covprune prune` on the file first)\n");
        }
        out.push_str(&measure::coverage_text(&self.table));
        let settled: Vec<measure::Settled> =
            self.settled.iter().map(|r| r.counts.clone()).collect();
        out.push_str(&measure::settled_text(&settled));
        let pct = crate::console::percent;
        for h in &self.hyperlabels {
            let c = &h.counts;
            out.push_str(&format!(
                "{} hyperlabels: {}, covered {} ({}), pruned {} (uncoverable {}, duplicate {}, subsumed {}), cleaned {}{}\n",
                c.criterion,
                c.hyperlabels,
                c.covered,
                pct(h.raw_percent),
                c.pruned(),
                c.uncoverable,
                c.duplicate,
                c.subsumed,
                pct(h.cleaned_percent),
                if c.unmeasured > 0 {
                    format!(" ({} not decided: too many combinations of bound values)", c.unmeasured)
                } else {
                    String::new()
                }
            ));
        }
        out.push_str(&ledger::undecided_text(&self.skipped, &self.over_budget));
        if let Some(note) = crate::report::sites::compiled_out_note(&self.file, &self.compiled_out)
        {
            out.push_str(&note);
            out.push('\n');
        }
        if !self.pending.is_empty() {
            out.push_str(&format!(
                "{} pending (kept in the cleaned ratio: no test covers them or their subsumers):\n",
                crate::console::count(self.pending.len() as u64, "subsumed label")
            ));
            for p in &self.pending {
                let by: Vec<String> = p
                    .subsumed_by
                    .iter()
                    .map(|&b| crate::console::label_id(b))
                    .collect();
                out.push_str(&format!(
                    "  {} (subsumed by {})\n",
                    crate::console::label_id(p.label),
                    by.join(", ")
                ));
            }
        }
        if !self.uncovered.is_empty() {
            out.push_str(&format!(
                "{} no test covers:\n",
                crate::console::count(self.uncovered.len() as u64, "kept objective")
            ));
            for u in self.uncovered.iter().take(UNCOVERED_SHOWN) {
                let origin = if u.origin.is_empty() {
                    String::new()
                } else {
                    format!("{} ", u.origin)
                };
                out.push_str(&format!(
                    "  l{} {} {origin}({}): {}\n",
                    u.label, u.tag, u.at, u.source
                ));
            }
            if self.uncovered.len() > UNCOVERED_SHOWN {
                out.push_str(&format!(
                    "  ... and {} more (--json lists them all)\n",
                    self.uncovered.len() - UNCOVERED_SHOWN
                ));
            }
        }
        for name in &self.crashed {
            out.push_str(&format!("test {name} crashed\n"));
        }
        for name in &self.timed_out {
            out.push_str(&format!(
                "test {name} timed out after {} (--test-timeout-s)\n",
                crate::console::seconds(self.test_timeout_ms)
            ));
        }
        for n in &self.not_run {
            out.push_str(&format!("test {} not run: {}\n", n.test, n.why));
        }
        match (&self.behaviour, &self.behaviour_unchecked) {
            (Some(b), _) => {
                out.push_str(&format!(
                    "behaviour: {} run on the original {} too: {} differ",
                    crate::console::count(b.compared as u64, "test"),
                    b.original,
                    b.differences.len()
                ));
                if b.undefined > 0 {
                    out.push_str(&format!(
                        " ({} whose exit status or output the program itself leaves undefined)",
                        b.undefined
                    ));
                }
                out.push('\n');
            }
            (None, Some(why)) => out.push_str(&format!("behaviour not checked: {why}\n")),
            (None, None) => {}
        }
        if let Some(w) = &self.wrote {
            out.push_str(&format!("wrote {w}\n"));
        }
        for b in &self.below_threshold {
            out.push_str(&format!(
                "{}: cleaned coverage {:.1}% is below --fail-under {}%\n",
                b.criterion, b.cleaned_percent, b.threshold_percent
            ));
        }
        out
    }

    /// The alarms as lines for stderr.
    pub fn alarm_text(&self) -> String {
        self.alarms
            .iter()
            .map(|a| {
                format!(
                    "soundness alarm: l{} claimed {}: {}\n",
                    a.label, a.claim, a.what
                )
            })
            .collect()
    }

    /// The behaviour differences as lines for stderr.
    pub fn difference_text(&self) -> String {
        let Some(b) = &self.behaviour else {
            return String::new();
        };
        b.differences
            .iter()
            .map(|d| {
                let at = d
                    .label_line
                    .as_ref()
                    .map_or_else(String::new, |l| format!(" (label at {l})"));
                format!(
                    "annotation changed the program: test {}: {}{at}\n",
                    d.difference.test, d.difference.what
                )
            })
            .collect()
    }

    /// The error a run ends with after its report is printed: the annotation changed the
    /// program (exit code 4), else alarms (exit code 3).
    pub fn error(&self) -> Option<Error> {
        if let Some(b) = self
            .behaviour
            .as_ref()
            .filter(|b| !b.differences.is_empty())
        {
            return Some(Error::BehaviourChanged(format!(
                "the annotated program does not behave like the original on {} (listed above): its coverage is not the original's",
                crate::console::count(b.differences.len() as u64, "test")
            )));
        }
        (!self.alarms.is_empty()).then(|| {
            Error::SoundnessAlarm(format!(
                "{} between the tests and the ledger (listed above)",
                crate::console::count(self.alarms.len() as u64, "contradiction")
            ))
        })
    }
}

impl From<&CoverageRow> for crate::report::summary::Row {
    fn from(r: &CoverageRow) -> Self {
        crate::report::summary::Row {
            criterion: r.counts.criterion.clone(),
            labels: r.counts.labels,
            pruned: r.counts.pruned,
            kept: r.counts.kept,
            covered: r.counts.covered,
            kept_covered: r.counts.kept_covered,
            raw_percent: r.raw_percent,
            cleaned_percent: r.cleaned_percent,
        }
    }
}

impl Uncovered {
    pub fn place(&self) -> crate::report::summary::Place {
        crate::report::summary::Place::at(&self.origin, &self.tag, &self.source, self.label)
    }
}

impl MeasureReport {
    /// The markdown summary's figures.
    pub fn summary(&self) -> crate::report::summary::Summary {
        let mut notes = Vec::new();
        if self.unpruned {
            notes.push("No ledger: nothing is pruned, cleaned coverage is raw coverage.".into());
        }
        if let Some(b) = self
            .behaviour
            .as_ref()
            .filter(|b| !b.differences.is_empty())
        {
            notes.push(format!(
                "**The annotated program behaves differently on {}**: this coverage is not the original's.",
                crate::console::count(b.differences.len() as u64, "test")
            ));
        }
        crate::report::summary::Summary {
            title: format!(
                "measure {} ({})",
                self.file,
                crate::console::count(self.tests as u64, "test")
            ),
            rows: self.coverage.iter().map(Into::into).collect(),
            uncovered: self.uncovered.iter().map(Uncovered::place).collect(),
            alarms: self
                .alarms
                .iter()
                .map(|a| {
                    format!(
                        "{} claimed {}: {}",
                        crate::console::label_id(a.label),
                        a.claim,
                        a.what
                    )
                })
                .collect(),
            notes,
            ..Default::default()
        }
    }
}
