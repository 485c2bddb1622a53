"""The command line: ingest, check, search, ask, papers, corpora, drop, serve, eval.

Exit codes: 0 done, 1 an error (bad input, a setting that cannot work, no index, a model failure;
one line on stderr), 2 a bad argument or option, 3 `ask` refused (the abstracts do not answer: the
refusal is printed), 69 the Chroma server cannot be reached (start it, then try again), 75 another
process is writing the data dir (try again later).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

import qa_service

from .store.checking import CheckReport, check_store, repair_store
from .client import QAClient
from .config import Settings, load_settings, redact_urls
from .preflight import check_chroma, check_data_dir
from .store.corpora import Corpora, Scope, corpus_name, corpus_names
from .corpus.reading import load_corpus
from .errors import BadRequest, QAError
from .answering.evaluation import evaluate_answers, evaluate_retrieval, format_answer_table, format_asked_table, format_retrieval_table, read_questions
from .store.filters import MetadataFilter, filters_from_options
from .store.index import Index
from .inputs import k_value, question_text
from .records import Answer
from .service import Services
from .web.serving import run_gunicorn


EXIT_REFUSED = 3  # `ask` answered with the refusal: not an error, but not an answer either


def friendly_errors(func: Callable) -> Callable:
    """Our errors become one line on stderr and their exit code (1; 75 when another writer is busy), never a traceback.

    A reader that stops early (`qa-service papers | head -1`) is not an error: the rest of the
    output goes nowhere and the command exits 0."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            result = func(*args, **kwargs)
            sys.stdout.flush()  # a closed pipe is found here, not at interpreter exit
            return result
        except QAError as exc:
            click.echo(f"error: {one_line(exc.message)}", err=True)
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's last flush must not fail again
            sys.exit(0)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt, GeneratorExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - the last net: a Rust panic from Chroma is a BaseException
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            click.echo(f"error: unexpected {type(exc).__name__}: {one_line(redact_urls(first))} (a bug of ours, or a case we do not know: "
                       f"please report it with the command you ran)", err=True)
            sys.exit(1)

    return wrapper


def one_line(message: str) -> str:
    """An error is one line on stderr, whatever the message holds (SQLite's findings come a line each)."""
    return "; ".join(part.strip() for part in message.splitlines() if part.strip())


def settings_from(ctx: click.Context) -> Settings:
    return ctx.find_root().obj["settings"]


def store_settings(ctx: click.Context, write: bool = False) -> Settings:
    """The settings of a command that opens the store: the Chroma server answers as Chroma, the data dir can be written."""
    settings = settings_from(ctx)
    check_chroma(settings)
    if write:
        check_data_dir(settings)
    return settings


def scope_options(func: Callable) -> Callable:
    """--corpus (repeatable; default every corpus) and the metadata filters --year/--venue/--author/--keyword."""
    options = [
        click.option("--corpus", "corpora", multiple=True, help="Read this corpus (repeat for several; default: every corpus)."),
        click.option("--year", "years", multiple=True, type=int, help="Only papers from this year (repeat for any of several)."),
        click.option("--year-from", "year_from", type=int, default=None, help="Only papers from this year or later."),
        click.option("--year-to", "year_to", type=int, default=None, help="Only papers from this year or earlier."),
        click.option("--venue", "venues", multiple=True, help="Only papers from this venue: 'ICLR 2025' is also 'ICLR 2025 Poster' and "
                     "'Submitted to ICLR 2025' (case and accents ignored; repeatable)."),
        click.option("--author", "authors", multiple=True, help="Only papers with this author (the full name; repeatable)."),
        click.option("--keyword", "keywords", multiple=True, help="Only papers with this keyword (repeatable)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def chosen_scope(services: Services, corpora: tuple[str, ...], years: tuple, venues: tuple, authors: tuple, keywords: tuple,
                 year_from: int | None = None, year_to: int | None = None) -> Scope:
    """The scope the options name. A malformed value is a bad option (exit 2); a corpus that does not exist, an error (1)."""
    try:
        names = corpus_names(list(corpora) or None, "--corpus", services.settings.collection)
    except BadRequest as exc:
        raise click.BadParameter(exc.message) from None
    return services.corpora.scope(names, checked_filters(services.settings, years, venues, authors, keywords, year_from, year_to))


def checked_filters(settings: Settings, years: tuple, venues: tuple, authors: tuple, keywords: tuple,
                    year_from: int | None = None, year_to: int | None = None) -> MetadataFilter:
    """The metadata filters the options name, each checked as HTTP checks it; a bad one is a bad option (exit 2)."""
    try:
        return filters_from_options(settings, year_from, year_to, year=years, venue=venues, author=authors, keyword=keywords)
    except BadRequest as exc:
        raise click.BadParameter(exc.message) from None


def filter_payload(corpora: tuple[str, ...], years: tuple, venues: tuple, authors: tuple, keywords: tuple,
                   year_from: int | None = None, year_to: int | None = None) -> dict:
    """The same options as a request body's corpus and filters (for --server): a year range as {"from", "to"}."""
    ends = {end: year for end, year in (("from", year_from), ("to", year_to)) if year is not None}
    if ends and years:
        raise click.BadParameter("give --year, or --year-from/--year-to, not both, with --server")
    given = {"year": ends or list(years), "venue": list(venues), "author": list(authors), "keyword": list(keywords)}
    payload: dict = {"filters": {k: v for k, v in given.items() if v}} if any(given.values()) else {}
    if corpora:
        payload["corpus"] = list(corpora)
    return payload


def limits_from(ctx: click.Context) -> Settings:
    """The limits a command's input must keep: the local settings, or, with --server, the server's own
    (it checks them itself and says so; a longer local limit must not refuse what it takes)."""
    settings = settings_from(ctx)
    if ctx.params.get("server"):
        return settings.replace(max_question_chars=sys.maxsize, max_k=sys.maxsize)
    return settings


def checked_question(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """QUESTION under the limits HTTP applies, refused with the message HTTP gives."""
    try:
        return question_text(value, limits_from(ctx))
    except QAError as exc:
        raise click.BadParameter(exc.message, ctx, param) from None


def checked_k(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """--k within 1..max_k, the server's own limit (the setting), refused with its message."""
    if value is None:
        return None
    try:
        return k_value(value, limits_from(ctx))
    except QAError as exc:
        raise click.BadParameter(exc.message, ctx, param) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=(
    "Exit codes: 0 done; 1 an error (one line on stderr); 2 a bad argument; 3 `ask` refused "
    "(the abstracts do not answer); 69 the Chroma server cannot be reached; 75 another process is writing the data dir, try again later."))
@click.version_option(qa_service.__version__, "-V", "--version", prog_name="qa-service")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="TOML settings file (default: the one shipped with the package).")
@click.pass_context
@friendly_errors
def main(ctx: click.Context, config_file: str | None) -> None:
    """Question answering over paper abstracts, with citations."""
    ctx.obj = {"settings": load_settings(config_file)}


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--sync", is_flag=True, help="Also remove papers that are no longer in PATHS.")
@click.option("--corpus", default=None, help="The corpus to write (created if new); default: the default corpus (setting `collection`).")
@click.pass_context
@friendly_errors
def ingest(ctx: click.Context, paths: tuple[str, ...], sync: bool, corpus: str | None) -> None:
    """Read, chunk, embed and index PATHS: files or folders of .txt, .jsonl, .json (OpenReview), .xml (arXiv), .csv;
    default: the seed abstracts shipped with the package."""
    settings = store_settings(ctx, write=True)
    name = corpus_name(corpus, "--corpus") if corpus and corpus != settings.collection else settings.collection
    papers = load_corpus(paths or [settings.seeds_path], settings, notice=say_waiting)  # everything is validated before any write
    corpora = Corpora(settings)
    with corpora.writer(on_wait=say_waiting):  # no other writer between the id check and the writes
        corpora.check_unique(papers, name)  # before the corpus is created: a refused ingest leaves no trace
        summary = run_ingest(corpora.open(name), papers, sync)
    repaired = f", {summary.repaired} with missing or extra chunks re-embedded" if summary.repaired else ""
    repaired += f", {summary.resumed} already written by an interrupted ingest" if summary.resumed else ""
    if name != settings.collection:
        click.echo(f"corpus {name}: ", nl=False)
    click.echo(
        f"{summary.papers} papers ({summary.added} added, {summary.updated} updated, {summary.unchanged} unchanged, "
        f"{summary.removed} removed{repaired}), {summary.chunks} chunks embedded, {summary.seconds:.1f} s"
    )


def run_ingest(index: Index, papers: list, sync: bool) -> Any:
    """The ingest with a progress bar on a terminal, one line per written batch in logs and pipes."""
    if sys.stderr.isatty():
        with click.progressbar(length=len(papers), label="ingesting", file=sys.stderr) as bar:
            return index.ingest(papers, sync=sync, progress=bar.update, on_wait=say_waiting)
    done = [0]

    def report(count: int) -> None:
        done[0] += count
        click.echo(f"ingested {done[0]}/{len(papers)} papers", err=True)

    return index.ingest(papers, sync=sync, progress=report, on_wait=say_waiting)


def say_waiting(message: str) -> None:
    """A one-line notice on stderr: waiting for the writer lock, a file skipped."""
    click.echo(message, err=True)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--repair", is_flag=True, help="Re-embed the damaged papers, drop stray chunks, rebuild manifest and BM25.")
@click.option("--corpus", "chosen", multiple=True, help="Check this corpus (repeat for several; default: every corpus).")
@click.pass_context
@friendly_errors
def check(ctx: click.Context, paths: tuple[str, ...], repair: bool, chosen: tuple[str, ...]) -> None:
    """Verify the store against the manifest (papers, chunks, hashes, BM25, test queries); exit 1 if damaged.

    With --repair, damaged papers are re-embedded from their stored records; papers missing from the
    store (or with a damaged record) are taken from PATHS when given."""
    settings = store_settings(ctx, write=True)
    corpus = load_corpus(paths, settings, notice=say_waiting) if paths else []  # validated before anything is written
    names = [name if name == settings.collection else corpus_name(name, "--corpus") for name in chosen] or None
    registry = Corpora(settings)
    with registry.writer(on_wait=say_waiting):  # no ingest changes the store while it is checked
        scope = registry.scope(names)
        results = [check_corpus(part.name, part.index, corpus, repair, len(scope.parts) > 1) for part in scope.parts]
    sys.exit(0 if all(results) else 1)


def check_corpus(name: str, index: Index, corpus: list, repair: bool, several: bool) -> bool:
    """Check one corpus (and repair it when asked); True when it is sound in the end."""
    if several:
        click.echo(f"corpus {name}:")
    report = check_store(index)
    print_report(report)
    if report.ok or not repair:
        return report.ok
    if sqlite_damaged(report):  # nothing --repair can mend; trying gave a Rust panic
        return False
    repair_store(index, report, corpus, say=click.echo)
    after = check_store(index)
    if after.ok:
        click.echo("repaired: the store matches the manifest")
        return True
    click.echo("still wrong after the repair:")
    for finding in after.findings:
        click.echo(f"  {one_line(str(finding))}")
    return False


def sqlite_damaged(report: CheckReport) -> bool:
    """SQLite itself finds the store's file damaged: check reads nothing else, and a repair cannot write to it."""
    return any(finding.part == "store" and "SQLite" in finding.problem for finding in report.findings)


def print_report(report: CheckReport) -> None:
    click.echo(f"checked {report.papers} papers, {report.chunks} chunks")
    for finding in report.findings:
        click.echo(f"  {one_line(str(finding))}")
    if report.ok:
        click.echo("ok: the store, the manifest, BM25 and test queries agree")
    elif sqlite_damaged(report):
        click.echo("`check --repair` cannot mend a damaged SQLite file: move the chroma folder of the data dir aside and run "
                   "`qa-service ingest` with your corpus files to rebuild it, or restore the data dir from a backup", err=True)
    else:
        click.echo(report.advice(), err=True)


K_HELP = "Papers to {}: 1 to the max_k setting, as over HTTP."


@main.command()
@click.argument("question", callback=checked_question)
@click.option("--k", default=None, type=int, callback=checked_k, help=K_HELP.format("return"))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@scope_options
@click.pass_context
@friendly_errors
def search(ctx: click.Context, question: str, k: int | None, as_json: bool, **chosen: Any) -> None:
    """The papers most relevant to QUESTION, with the evidence that matched."""
    settings = store_settings(ctx)
    services = Services(settings)
    with services.reading():  # not while an ingest writes (exit 75)
        scope = chosen_scope(services, **chosen)
        scope.require_ready()
        hits = services.retriever.search(services.answerer.read(question, scope), k, texts=False, scope=scope)
    if as_json:
        click.echo(json.dumps({"results": [h.to_dict() for h in hits], "corpora": scope.names, "filters": scope.filter.to_dict()},
                              ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("No paper matches these filters." if scope.filter else "No paper in the corpus is relevant to that question.")
    for rank, hit in enumerate(hits, 1):
        where = f", {hit.corpus}" if len(scope.parts) > 1 else ""
        click.echo(f"{rank}. {hit.label}  [{hit.paper_id}{where}]  score {hit.score:.4f}")
        for evidence in hit.evidence[:1]:
            click.echo(f"   “{evidence.text[:300]}”")


@main.command()
@click.argument("question", callback=checked_question)
@click.option("--k", default=None, type=int, callback=checked_k, help=K_HELP.format("retrieve"))
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer object as JSON.")
@click.option("--server", default=None, is_eager=True,  # read before QUESTION and --k are checked: the server's limits apply
              help="Ask a running qa-service at this URL instead of the local index.")
@scope_options
@click.pass_context
@friendly_errors
def ask(ctx: click.Context, question: str, k: int | None, as_json: bool, server: str | None, **chosen: Any) -> None:
    """Answer QUESTION from the abstracts, with numbered citations; exit 3 when the abstracts do not answer it."""
    if server:
        checked_filters(settings_from(ctx), *(chosen[k] for k in ("years", "venues", "authors", "keywords", "year_from", "year_to")))
        answer = QAClient(server).ask(question, k, **filter_payload(**chosen))
    else:
        services = Services(store_settings(ctx))
        with services.reading():
            answer = services.answerer.ask(question, k, scope=chosen_scope(services, **chosen))
    if as_json:
        click.echo(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
    else:
        print_answer(answer)
    if answer.insufficient_evidence:
        sys.stdout.flush()
        sys.exit(EXIT_REFUSED)


def print_answer(answer: Answer) -> None:
    click.echo(answer.answer)
    if answer.refusal_explanation:
        click.echo(answer.refusal_explanation, err=True)
    cited = {c.n: c for c in answer.citations}
    if cited:
        click.echo("\nSources:")
    several = len(answer.corpora) > 1
    for n, citation in sorted(cited.items()):
        mark = "" if citation.supported else "  (not supported by this abstract)"
        where = f", {citation.corpus}" if several and citation.corpus else ""
        click.echo(f"[{n}] {citation.label}  ({citation.paper_id}{where}){mark}")
    if answer.filters:
        click.echo("Filters: " + "; ".join(f"{name} {', '.join(map(str, values))}" for name, values in answer.filters.items()))
    for warning in answer.warnings:
        click.echo(f"warning: {warning}", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@scope_options
@click.pass_context
@friendly_errors
def papers(ctx: click.Context, as_json: bool, **chosen: Any) -> None:
    """List the indexed papers: id and label (and corpus, when there are several)."""
    services = Services(store_settings(ctx))
    with services.reading():
        scope = chosen_scope(services, **chosen)
        records = scope.records()
    if as_json:
        listing = [{**{k: v for k, v in p.to_dict().items() if k not in ("text", "abstract")}, "corpus": name} for name, p in records]
        click.echo(json.dumps({"papers": listing, "total": len(records)}, ensure_ascii=False, indent=2))
        return
    for name, record in records:
        click.echo(f"{record.id}\t{record.label}" + (f"\t{name}" if len(scope.parts) > 1 else ""))
    click.echo(f"{len(records)} papers", err=True)


@main.command(name="corpora")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@friendly_errors
def list_corpora(ctx: click.Context, as_json: bool) -> None:
    """List the corpora: name, papers, version and embedding model."""
    services = Services(store_settings(ctx))
    with services.reading():
        rows = [services.corpora.describe(name) for name in services.corpora.names()]
    if as_json:
        click.echo(json.dumps({"corpora": rows}, ensure_ascii=False, indent=2))
        return
    for row in rows:
        mark = "  (default)" if row["default"] else ""
        click.echo(f"{row['name']}\t{row['papers']} papers\tversion {row['version'] or '-'}\t{row['embedding_model']}{mark}")


@main.command()
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
@friendly_errors
def drop(ctx: click.Context, name: str, yes: bool) -> None:
    """Remove the corpus NAME: its papers, chunks, manifest and BM25 index."""
    settings = store_settings(ctx, write=True)
    if name != settings.collection:
        corpus_name(name, "NAME")
    registry = Corpora(settings)
    held = registry.describe(name)  # an unknown corpus is an error naming those there are
    if not yes:
        click.confirm(f"Remove corpus {name} ({held['papers']} papers)?", abort=True)
    dropped = registry.drop(name, on_wait=say_waiting)
    click.echo(f"dropped corpus {name} ({dropped['papers']} papers, {dropped['chunks']} chunks)")


@main.command()
@click.option("--host", default=None, help="Address to bind (default from settings: 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(1, 65535), help="Port (default from settings: 8000).")
@click.option("--threads", default=None, type=int, help="Request threads per worker (default: the `threads` setting).")
@click.option("--workers", default=1, show_default=True, help="Worker processes (more than 1 needs QA_CHROMA_URL).")
@click.pass_context
@friendly_errors
def serve(ctx: click.Context, host: str | None, port: int | None, threads: int | None, workers: int) -> None:
    """Serve the API and the chat page with gunicorn."""
    settings = settings_from(ctx)
    run_gunicorn(settings, host or settings.host, port or settings.port, threads, workers)


@main.command(name="eval")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--k", default=None, type=int, callback=checked_k, help="Papers retrieved per answer (default from settings; at most max_k).")
@click.option("--server", default=None, help="Evaluate a running qa-service at this URL instead of the local pipeline.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write every per-question record here.")
@click.pass_context
@friendly_errors
def evaluate(ctx: click.Context, questions: Path, k: int | None, server: str | None, json_out: Path | None) -> None:
    """Measure retrieval (dense, BM25, hybrid) and answers (citations, facts, refusals, latency)."""
    items = read_questions(questions)
    report: dict = {}
    if server:
        client = QAClient(server)
        ask = lambda q: client.ask(q, k)  # noqa: E731
        search = lambda q: [r["paper_id"] for r in client.search(q, 10)["results"]]  # noqa: E731
    else:
        services = Services(store_settings(ctx))
        services.index.require_ready()
        services.index.load_lexical()
        answerer = services.answerer
        report["retrieval"] = evaluate_retrieval(answerer.retriever, items, 10, read=answerer.read)
        click.echo("Retrieval, papers ranked per question (recall first: nothing dropped):")
        click.echo(format_retrieval_table(report["retrieval"]) + "\n")
        ask = lambda q: answerer.ask(q, k)  # noqa: E731
        search = lambda q: [h.paper_id for h in answerer.retriever.search(answerer.read(q), 10, texts=False)]  # noqa: E731
    report["answers"] = evaluate_answers(ask, search, items)
    click.echo("Answers:")
    click.echo(format_answer_table(report["answers"]))
    click.echo("\nWhat was asked (share, rows measured):")
    click.echo(format_asked_table(report["answers"]["asked"]))
    if json_out:
        json_out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":  # python -m qa_service.cli
    main()
