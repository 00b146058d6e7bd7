"""The `testbed-studio` command: the GUI with no arguments, subcommands for everything else.

Exit codes for `validate`: 0 no errors, 1 errors found, 2 the file cannot be read.
Nothing here imports Qt; the GUI is imported only when it is started.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_OK, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("testbed-studio")
    except Exception:
        return "0.1.0"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="testbed-studio",
        description="Design, validate and document storage and virtualization test beds. "
                    "With no command, opens the application.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    gui = sub.add_parser("gui", help="open the application (the default)")
    gui.add_argument("file", nargs="?", help="project file to open (default: the example bed)")
    gui.add_argument("--smoke", action="store_true", help="open the window, then quit after a second")

    v = sub.add_parser("validate", help="check a project file against the rule catalogue")
    v.add_argument("file")
    v.add_argument("--format", choices=("text", "json"), default="text")
    v.add_argument("--scenario", metavar="NAME",
                   help="judge this scenario alone (default: the reference configuration and every scenario)")
    v.add_argument("--configuration", metavar="NAME",
                   help="judge the bed in this configuration alone (default: in each of its configurations)")
    v.add_argument("--min-severity", choices=("info", "warning", "error"), default="info",
                   help="list only findings of this severity or worse (default: info, every finding); "
                        "the exit code still says whether the bed has errors")

    sub.add_parser("examples", help="list the built-in example beds")

    n = sub.add_parser("new", help="write a built-in example out as a project file to start from")
    n.add_argument("--example", required=True, metavar="NAME")
    n.add_argument("-o", "--output", required=True, metavar="FILE")
    n.add_argument("--force", action="store_true", help="overwrite FILE if it exists")

    ax = sub.add_parser("appendix", help="print the report appendices (configuration tables, storage layout, "
                                         "diagram, methodology, results) as PDF, HTML or Markdown")
    ax.add_argument("file")
    ax.add_argument("-o", "--output", required=True, metavar="OUT", help="file to write (OUT.pdf, OUT.html, OUT.md)")
    ax.add_argument("--format", choices=("pdf", "html", "md"), help="default: from OUT's extension, else pdf")
    ax.add_argument("--run", action="append", default=[], metavar="RUN",
                    help="add the figures measured in this run (id or directory, see 'testbed-studio runs') to "
                         "the results appendix: tables per host, pass criteria and charts; may be given more than once")
    ax.add_argument("--compare", action="append", default=[], metavar="RUN|CONFIG",
                    help="put these runs or configurations side by side in the results appendix (give two or more; "
                         "default for a bed with configurations: its configurations, when they have figures)")
    ax.add_argument("--baseline", metavar="NAME", help="the compared side the others are measured against")
    ax.add_argument("--metric", metavar="M", help="the figure compared (see `testbed-studio compare`)")
    ax.add_argument("--runs-dir", help=argparse.SUPPRESS)
    ax.add_argument("--paper", choices=("a4", "letter"), type=str.lower,
                    help="paper size of the PDF; default: the one set in the application's preferences, "
                         "else the locale's (Letter in the US and Canada, A4 elsewhere)")

    me = sub.add_parser("methodology", help="print the numbered test procedure generated from a project file")
    me.add_argument("file")
    me.add_argument("--format", choices=("md", "html", "pdf", "json"),
                    help="default: from OUT's extension, else md (pdf needs -o); json: sections and steps as data "
                         "(number, text, target, platform, commands, values used)")
    me.add_argument("-o", "--output", metavar="OUT", help="file to write (default: standard output)")
    me.add_argument("--paper", choices=("a4", "letter"), type=str.lower,
                    help="paper size of a PDF; default: as for `appendix`")
    me.add_argument("--templates", action="append", default=[], metavar="DIR",
                    help="a directory of step templates (<platform>/<section>.yaml) that adds to or overrides "
                         "the built-in ones; may be given more than once")
    me.add_argument("--configuration", metavar="NAME",
                    help="the procedure of this configuration (default: one procedure per configuration of a bed "
                         "that has configurations)")

    from app.run.cli_run import add_arguments as add_run_arguments
    add_run_arguments(sub)

    cr = sub.add_parser("credentials", help="store or delete a host's password in the system keyring")
    cr.add_argument("action", choices=("set", "delete"))
    cr.add_argument("entry", metavar="HOST-or-NAME",
                    help="the access entry's 'credential' name, or its host id when it has none")
    cr.add_argument("--password-stdin", action="store_true",
                    help="read the password from the first line of standard input instead of asking")

    from app.metrics.parse_cli import add_arguments as add_parse_arguments
    add_parse_arguments(sub)
    from app.metrics.compare_cli import add_arguments as add_compare_arguments
    add_compare_arguments(sub)

    from app.cli_exchange import add_arguments as add_exchange_arguments
    add_exchange_arguments(sub)
    from app.asbuilt.cli import add_arguments as add_check_arguments
    add_check_arguments(sub)

    sub.add_parser("rules", help="list the validation rules (codes, severities, reasons)")
    sub.add_parser("schema", help="print the JSON Schema of the project file")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in _COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["gui", *argv]  # `testbed-studio`, `testbed-studio bed.yaml`, `testbed-studio --smoke`
    ns = _parser().parse_args(argv)
    if ns.command in (None, "gui"):
        return _run(ns)
    # names from a bed are printed as text: an escape sequence in one shows, it does not act
    from app.terminal_text import PrintableStream
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PrintableStream(sys.stdout), PrintableStream(sys.stderr)
    try:
        return _run(ns)
    finally:
        sys.stdout, sys.stderr = saved


def _run(ns: argparse.Namespace) -> int:
    try:
        return _COMMANDS[ns.command](ns)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def cmd_gui(ns: argparse.Namespace) -> int:
    from app.gui import main as gui_main
    kwargs = {"smoke": True} if ns.smoke else {}
    return gui_main(ns.file, **kwargs)


def cmd_validate(ns: argparse.Namespace) -> int:
    from topology.errors import BedFileError
    from topology.fileformat import load
    from topology.validation import has_errors, validate
    try:
        bed = load(ns.file)
    except BedFileError as exc:
        if ns.format == "json":
            print(json.dumps({"file": ns.file, "error": "unreadable",
                              "problems": [{"message": p.message, "hint": p.hint, "line": p.line,
                                            "column": p.column, "where": p.where} for p in exc.problems]},
                             indent=2))
        print(exc.format(), file=sys.stderr)
        return EXIT_UNREADABLE
    if ns.scenario is not None and ns.scenario not in {s.id for s in bed.scenarios}:
        names = ", ".join(s.id for s in bed.scenarios) or "none"
        print(f"testbed-studio: {ns.file} has no scenario {ns.scenario!r}; its scenarios: {names}",
              file=sys.stderr)
        return EXIT_UNREADABLE
    if ns.configuration is not None and ns.configuration not in {c.id for c in bed.configurations}:
        names = ", ".join(c.id for c in bed.configurations) or "none"
        print(f"testbed-studio: {ns.file} has no configuration {ns.configuration!r}; its configurations: {names}",
              file=sys.stderr)
        return EXIT_UNREADABLE
    findings = validate(bed, scenario=ns.scenario, configuration=ns.configuration)
    from app.findings_text import at_least, format_findings
    shown = at_least(findings, ns.min_severity)
    if ns.format == "json":
        print(json.dumps([f.as_dict() for f in shown], indent=2))
    else:
        print(format_findings(ns.file, shown, hidden=len(findings) - len(shown), min_severity=ns.min_severity))
    return EXIT_FINDINGS if has_errors(findings) else EXIT_OK


def cmd_examples(ns: argparse.Namespace) -> int:
    from resources import example_names, example_path
    from topology.errors import BedFileError
    from topology.fileformat import load
    for name in example_names():
        try:
            info = load(example_path(name)).bed
            print(f"{name:<32}{info.name}")
        except BedFileError as exc:
            print(f"{name:<32}(cannot be read: {exc.problems[0].message})")
    return EXIT_OK


def cmd_new(ns: argparse.Namespace) -> int:
    from resources import example_names, example_path
    from topology import roundtrip
    from topology.errors import BedFileError
    if ns.example not in example_names():
        print(f"testbed-studio: no example named {ns.example!r}; available: {', '.join(example_names())}",
              file=sys.stderr)
        return EXIT_UNREADABLE
    out = Path(ns.output)
    if out.exists() and not ns.force:
        print(f"testbed-studio: {out} exists; use --force to overwrite it", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        bed, source = roundtrip.load(example_path(ns.example))
        roundtrip.save(bed, out, source)   # the example's comments come along
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNREADABLE
    except OSError as exc:
        print(f"testbed-studio: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    print(f"wrote {out} (from example {ns.example})")
    return EXIT_OK


def cmd_appendix(ns: argparse.Namespace) -> int:
    from topology.errors import BedFileError
    from topology.fileformat import load
    out = Path(ns.output)
    fmt = ns.format or {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}.get(out.suffix.lower(), "pdf")
    try:
        bed = load(ns.file)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNREADABLE
    runs = []
    for ref in ns.run:
        from app.metrics.report import load_run_results
        try:
            runs.append(load_run_results(ref, bed, Path(ns.runs_dir) if ns.runs_dir else None))
        except ValueError as exc:
            print(f"testbed-studio: --run {ref}: {exc}", file=sys.stderr)
            return EXIT_UNREADABLE
    from app.metrics.compare_cli import appendix_comparisons
    try:
        comparisons = appendix_comparisons(bed, ns)
    except ValueError as exc:
        print(f"testbed-studio: --compare: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    from app.report.export import write
    try:
        result = write(bed, out, fmt, source=str(ns.file), runs=runs, comparisons=comparisons, paper=ns.paper)
    except OSError as exc:
        print(f"testbed-studio: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    extra = f", {result['pages']} pages on {result['paper']}" if "pages" in result else ""
    extra += f", diagram in {result['image']}" if "image" in result else ""
    extra += f", {result['charts']} chart(s) beside it" if "charts" in result else ""
    print(f"wrote {out} ({fmt}{extra})")
    return EXIT_OK


def cmd_methodology(ns: argparse.Namespace) -> int:
    from topology.errors import BedFileError
    from topology.fileformat import load
    from topology.methodology import to_markdown
    out = Path(ns.output) if ns.output else None
    fmt = ns.format or ({".html": "html", ".htm": "html", ".pdf": "pdf", ".json": "json"}.get(out.suffix.lower(), "md")
                        if out else "md")
    if fmt == "pdf" and out is None:
        print("testbed-studio: a PDF needs an output file: add -o OUT.pdf", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        bed = load(ns.file)
    except BedFileError as exc:
        print(exc.format(), file=sys.stderr)
        return EXIT_UNREADABLE
    from topology.configurations import procedures
    try:
        made = procedures(bed, ns.configuration, extra_dirs=ns.templates)
    except KeyError as exc:
        print(f"testbed-studio: {ns.file}: {exc.args[0]}", file=sys.stderr)
        return EXIT_UNREADABLE
    except BedFileError as exc:  # a broken step template (TemplateError): file and line
        print(f"testbed-studio: a step template cannot be used:\n{exc.format()}", file=sys.stderr)
        return EXIT_UNREADABLE
    steps = sum(len(s.steps) for _, meth in made for s in meth.sections)
    each = f" in {len(made)} procedures ({', '.join(str(name) for name, _ in made)})" if len(made) > 1 else ""
    if fmt == "md":
        text = "\n".join(to_markdown(meth) for _, meth in made)
    elif fmt == "json":
        from topology.methodology.json_export import to_data, to_json
        if len(made) == 1:
            text = to_json(made[0][1])
        else:   # one procedure per configuration: a list, each naming its configuration
            text = json.dumps([{"configuration": name, **to_data(meth)} for name, meth in made],
                              indent=1, ensure_ascii=False) + "\n"
    else:
        from app.report.export import methodology_html
        from app.report.pdf import write_pdf
        text = methodology_html([meth for _, meth in made])
        if fmt == "pdf":
            try:
                pages = write_pdf(text, out, title=f"Test methodology - {made[0][1].bed_name}", paper=ns.paper)
            except OSError as exc:
                print(f"testbed-studio: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
                return EXIT_UNREADABLE
            from app.preferences import paper_size
            print(f"wrote {out} (pdf, {pages} pages on {paper_size(ns.paper).capitalize()}, {steps} steps{each})")
            return EXIT_OK
    if out is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"testbed-studio: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    print(f"wrote {out} ({fmt}, {steps} steps{each})")
    return EXIT_OK


def cmd_rules(ns: argparse.Namespace) -> int:
    from topology.validation import rule_catalogue
    for r in rule_catalogue():
        print(f"{r.code:<10}{r.severity:<9}{r.title}")
        print(f"{'':<19}why: {r.reason}")
        print(f"{'':<19}source: {r.source}")
    return EXIT_OK


def cmd_credentials(ns: argparse.Namespace) -> int:
    """The password never appears on the command line (other users see it in `ps`)."""
    from app.remote.credentials import CredentialStore
    store = CredentialStore()
    if not store.persistent:
        print("testbed-studio: no usable system keyring on this machine; a password can only be typed when "
              "a run asks for it (run from a terminal, or `run --ask-password`)", file=sys.stderr)
        return EXIT_UNREADABLE
    if ns.action == "delete":
        store.forget(ns.entry)
        print(f"deleted the password of {ns.entry!r} from the keyring ({store.backend_name})")
        return EXIT_OK
    if ns.password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif sys.stdin.isatty():
        import getpass
        password = getpass.getpass(f"password for {ns.entry!r}: ")
        if password != getpass.getpass("again: "):
            print("testbed-studio: the two passwords differ; nothing was stored", file=sys.stderr)
            return EXIT_UNREADABLE
    else:
        print("testbed-studio: standard input is not a terminal: pass --password-stdin to read the password "
              "from it", file=sys.stderr)
        return EXIT_UNREADABLE
    if not password:
        print("testbed-studio: an empty password was not stored", file=sys.stderr)
        return EXIT_UNREADABLE
    if not store.set(ns.entry, password):
        print(f"testbed-studio: the keyring ({store.backend_name}) refused the password", file=sys.stderr)
        return EXIT_UNREADABLE
    print(f"stored the password of {ns.entry!r} in the keyring ({store.backend_name})")
    return EXIT_OK


def cmd_run(ns: argparse.Namespace) -> int:
    from app.run.cli_run import cmd_run as run
    return run(ns)


def cmd_runs(ns: argparse.Namespace) -> int:
    from app.run.cli_run import cmd_runs as runs
    return runs(ns)


def cmd_export_ansible(ns: argparse.Namespace) -> int:
    from app.ansible.command import cmd_export_ansible as export
    return export(ns)


def cmd_results(ns: argparse.Namespace) -> int:
    from app.run.cli_run import cmd_results as results
    return results(ns)


def cmd_schema(ns: argparse.Namespace) -> int:
    from topology.schema import schema_text
    sys.stdout.write(schema_text())
    return EXIT_OK


def cmd_export(ns: argparse.Namespace) -> int:
    from app.cli_exchange import cmd_export as export
    return export(ns)


def cmd_import(ns: argparse.Namespace) -> int:
    from app.cli_exchange import cmd_import as import_
    return import_(ns)


def _cmd_check(ns: argparse.Namespace) -> int:
    from app.asbuilt.cli import cmd_check
    return cmd_check(ns)


def _cmd_compare(ns: argparse.Namespace) -> int:
    from app.metrics.compare_cli import cmd_compare
    return cmd_compare(ns)


def _cmd_parse(ns: argparse.Namespace) -> int:
    from app.metrics.parse_cli import cmd_parse
    return cmd_parse(ns)


_COMMANDS = {"gui": cmd_gui, None: cmd_gui, "validate": cmd_validate, "examples": cmd_examples,
             "new": cmd_new, "appendix": cmd_appendix, "methodology": cmd_methodology, "rules": cmd_rules,
             "schema": cmd_schema, "credentials": cmd_credentials, "run": cmd_run, "runs": cmd_runs,
             "export-ansible": cmd_export_ansible, "results": cmd_results, "parse": _cmd_parse,
             "export": cmd_export, "import": cmd_import, "compare": _cmd_compare, "check": _cmd_check}



if __name__ == "__main__":
    sys.exit(main())
