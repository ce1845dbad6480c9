//! The commands whose arguments take more than a line to turn into options: each reads its
//! arguments into the application layer's options, runs, prints its report and says its exit.

use super::args::{AuditArgs, ExcludeArgs, MeasureArgs, ProjectMeasureArgs, WitnessArgs};
use super::show;
use crate::console::print_err;
use crate::run::{self, Exit};

pub(super) fn project_measure(args: ProjectMeasureArgs) -> run::Result<Exit> {
    let mut commands = args.test_cmds;
    if let Some(path) = &args.tests {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        commands.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string),
        );
    }
    let previous = args.markdown.previous()?;
    let report =
        run::project_measure::project_measure(&run::project_measure::ProjectMeasureOptions {
            out_dir: args.out_dir,
            commands,
            cwd: args.cwd,
            cc: args.cc,
            timeout: std::time::Duration::from_millis(args.test_timeout_ms.0),
            keep_build: args.keep_build,
        })?;
    show(
        &report,
        args.json,
        run::project_measure::ProjectMeasureReport::to_text,
    );
    args.markdown.write(&report.summary(), previous.as_ref())?;
    if let Some(error) = report.error() {
        return Err(error);
    }
    Ok(Exit::Success)
}

pub(super) fn measure(args: MeasureArgs) -> run::Result<Exit> {
    let mut link: Vec<String> = args
        .lib_dirs
        .iter()
        .map(|d| {
            let d = d.canonicalize().unwrap_or_else(|_| d.clone());
            format!("-L{}", d.display())
        })
        .collect();
    for flags in &args.ldflags {
        link.extend(crate::frontend::preprocess::split_command(flags));
    }
    link.extend(args.libs.iter().map(|l| format!("-l{l}")));
    let preprocess = args.cc.options_for(&args.file)?;
    let fail_under = match &args.fail_under {
        Some(spec) => run::measure::parse_fail_under(spec)?,
        None => Vec::new(),
    };
    let previous = args.markdown.previous()?;
    let report = run::measure::measure(&run::measure::MeasureOptions {
        file: args.file,
        tests: args.tests,
        labels: args.labels,
        ledger: args.ledger,
        sources: args.sources,
        test_timeout_ms: args.test_timeout_ms.0,
        elements: args.elements,
        preprocess,
        form: if args.tests_sh {
            crate::measure::LineForm::Shell
        } else {
            crate::measure::LineForm::Words
        },
        cwd: args.cwd,
        link,
        check_behaviour: if args.check_behaviour {
            run::measure::BehaviourCheck::On
        } else if args.no_check_behaviour {
            run::measure::BehaviourCheck::Off
        } else {
            run::measure::BehaviourCheck::Auto
        },
        original: args.original,
        fail_under,
        progress: !args.json,
    })?;
    show(&report, args.json, run::measure::MeasureReport::to_text);
    args.markdown.write(&report.summary(), previous.as_ref())?;
    if let Some(error) = report.error() {
        print_err(&report.difference_text());
        print_err(&report.alarm_text());
        return Err(error);
    }
    if !report.below_threshold.is_empty() {
        return Ok(Exit::Findings);
    }
    Ok(Exit::Success)
}

pub(super) fn witness(args: WitnessArgs) -> run::Result<Exit> {
    let preprocess = args.cc.options_for(&args.file)?;
    let root = run::audit::origin_root(&args.file)?;
    let report = run::witness::witness(&run::witness::WitnessOptions {
        file: args.file,
        out: args.out,
        ledger: args.ledger,
        labels: args.labels,
        preprocess,
        per_function: args.limits.per_function,
        function_ms: args.limits.function_budget_ms.0,
        run_ms: args.limits.run_timeout_ms.0,
        jobs: args.limits.jobs,
        progress: !args.json,
        link: args.link,
    })?;
    show(&report, args.json, run::witness::WitnessReport::to_text);
    if let Some(path) = &args.sarif {
        let log = report.sarif(&root, env!("CARGO_PKG_VERSION"));
        let text = serde_json::to_string_pretty(&log).map_err(run::Error::internal)? + "\n";
        crate::report::labels::write_atomic(path, text)
            .map_err(|e| run::error::write_failed(path, e))?;
    }
    Ok(Exit::Success)
}

pub(super) fn audit(args: AuditArgs) -> run::Result<Exit> {
    let preprocess = args.cc.options_for(&args.file)?;
    let previous = args.markdown.previous()?;
    let report = run::audit::audit(&run::audit::AuditOptions {
        file: args.file,
        ledger: args.ledger,
        labels: args.labels,
        dot: args.dot,
        html: args.html,
        sarif: args.sarif,
        preprocess,
    })?;
    show(&report, args.json, run::audit::AuditReport::to_text);
    args.markdown.write(&report.summary(), previous.as_ref())?;
    if args.fail_on_findings && report.findings > 0 {
        return Ok(Exit::Findings);
    }
    Ok(Exit::Success)
}

pub(super) fn exclude(args: ExcludeArgs) -> run::Result<Exit> {
    use run::exclude::Format;
    let (format, report) = [
        (Format::Gcovr, args.gcovr),
        (Format::Lcov, args.lcov),
        (Format::LlvmCov, args.llvm_cov),
        (Format::Mutation, args.mutation),
    ]
    .into_iter()
    .find_map(|(f, r)| r.map(|r| (f, r)))
    .expect("clap requires one report");
    let previous = args.markdown.previous()?;
    let report = run::exclude::exclude(&run::exclude::ExcludeOptions {
        files: args.files,
        project: args.project,
        format,
        report,
        out: args.out,
        justify: args.justify,
        allow_unmatched: args.allow_unmatched,
    })?;
    show(&report, args.json, run::exclude::ExcludeReport::to_text);
    args.markdown.write(&report.summary(), previous.as_ref())?;
    if let Some(error) = report.error() {
        return Err(error);
    }
    Ok(Exit::Success)
}
