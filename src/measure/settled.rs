//! The settled share: of the labels a suite leaves uncovered, how many a proof says no input
//! covers (infeasible), how many a `witness` test shows some input covers (feasible, with a
//! test to add), and how many neither. It is what a tester asks of the pruning: which of the
//! objectives my tests miss are worth a new test.

use super::*;

/// The uncovered labels of one criterion (or `all`) and what is known of them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Settled {
    pub criterion: String,
    /// Labels no test of the suite covers.
    pub uncovered: usize,
    /// Of those, proved infeasible by the ledger.
    pub infeasible: usize,
    /// Of those, covered by a test `witness` wrote (feasible, with that test).
    pub shown_feasible: usize,
    /// Of those, neither proved infeasible nor shown feasible.
    pub neither: usize,
}

impl Settled {
    /// (infeasible + shown feasible) / uncovered, in %: none when the suite covers every label.
    pub fn percent(&self) -> Option<f64> {
        (self.uncovered > 0)
            .then(|| 100.0 * (self.infeasible + self.shown_feasible) as f64 / self.uncovered as f64)
    }

    /// Adds the counts of `other` (the same criterion, in another file).
    pub fn add(&mut self, other: &Settled) {
        self.uncovered += other.uncovered;
        self.infeasible += other.infeasible;
        self.shown_feasible += other.shown_feasible;
        self.neither += other.neither;
    }
}

/// Per criterion (a tag's first word, sorted) and overall (`all`, last): the labels (id, tag)
/// that `covered` (the suite's runs) leaves out, split by the ledger's infeasible claims and
/// by `shown` (the labels a `witness` test covered). A label both proved infeasible and shown
/// is a soundness alarm, reported elsewhere; here it counts as infeasible.
pub fn settled(
    labels: &[(u64, String)],
    claims: &BTreeMap<u64, Claim>,
    covered: &BTreeSet<u64>,
    shown: &BTreeSet<u64>,
) -> Vec<Settled> {
    let mut per: BTreeMap<String, Settled> = BTreeMap::new();
    let mut all = Settled {
        criterion: "all".into(),
        ..Settled::default()
    };
    for (id, tag) in labels {
        if covered.contains(id) {
            continue;
        }
        let crit = crate::report::counts::criterion_of(tag).to_string();
        let row = per.entry(crit.clone()).or_insert_with(|| Settled {
            criterion: crit,
            ..Settled::default()
        });
        for r in [&mut *row, &mut all] {
            r.uncovered += 1;
            if claims.get(id) == Some(&Claim::Infeasible) {
                r.infeasible += 1;
            } else if shown.contains(id) {
                r.shown_feasible += 1;
            } else {
                r.neither += 1;
            }
        }
    }
    let mut out: Vec<Settled> = per.into_values().collect();
    out.push(all);
    out
}

/// The settled share as text, one line per criterion.
pub fn settled_text(rows: &[Settled]) -> String {
    let mut out = String::from(
        "what the tests leave uncovered: proved infeasible + shown feasible by `witness` = settled\n",
    );
    for r in rows.iter().filter(|r| r.uncovered > 0) {
        out.push_str(&format!(
            "  {:<9} {:>6} uncovered: {} infeasible + {} shown feasible = {} settled ({}), {} neither\n",
            r.criterion,
            r.uncovered,
            r.infeasible,
            r.shown_feasible,
            r.infeasible + r.shown_feasible,
            crate::console::percent(r.percent()),
            r.neither
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_uncovered_labels_per_criterion() {
        let labels: Vec<(u64, String)> = vec![
            (1, "CC".into()),
            (2, "CC".into()),
            (3, "CC".into()),
            (4, "MCC".into()),
            (5, "MCC".into()),
        ];
        let claims = BTreeMap::from([(2, Claim::Infeasible), (5, Claim::Duplicate(4))]);
        let rows = settled(
            &labels,
            &claims,
            &BTreeSet::from([1]),
            &BTreeSet::from([3, 1]),
        );
        let row = |c: &str| rows.iter().find(|r| r.criterion == c).unwrap().clone();
        assert_eq!(
            (
                row("CC").uncovered,
                row("CC").infeasible,
                row("CC").shown_feasible,
                row("CC").neither
            ),
            (2, 1, 1, 0)
        );
        // A duplicate claim settles nothing: label 5 is as undecided as 4.
        assert_eq!((row("MCC").uncovered, row("MCC").neither), (2, 2));
        assert_eq!(row("all").uncovered, 4);
        assert_eq!(row("CC").percent(), Some(100.0));
        assert_eq!(row("MCC").percent(), Some(0.0));
        assert_eq!(rows.last().unwrap().criterion, "all");
    }

    #[test]
    fn a_suite_covering_everything_has_no_share() {
        let labels: Vec<(u64, String)> = vec![(1, "CC".into())];
        let rows = settled(
            &labels,
            &BTreeMap::new(),
            &BTreeSet::from([1]),
            &BTreeSet::new(),
        );
        assert_eq!(rows[0].percent(), None);
        assert!(!settled_text(&rows).contains("CC"));
    }
}
