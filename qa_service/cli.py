"""The command line: ingest, check, search, ask, papers, serve, eval.

Exit codes: 0 done, 1 an error (bad input, no index, a model failure; one line on stderr),
2 a bad argument or option, 3 `ask` refused (the abstracts do not answer: the refusal is
printed), 75 another process is writing the data dir (try again later).
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

from .checking import CheckReport, check_store, repair_store
from .client import QAClient
from .config import Settings, load_settings
from .corpus import load_corpus
from .errors import QAError
from .evaluation import evaluate_answers, evaluate_retrieval, format_answer_table, format_retrieval_table, read_questions
from .index import Index
from .inputs import k_value, question_text
from .records import Answer
from .retrieval import Retriever
from .service import Services
from .serving import run_gunicorn


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
            click.echo(f"error: {exc.message}", err=True)
            sys.exit(exc.exit_code)
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's last flush must not fail again
            sys.exit(0)

    return wrapper


def settings_from(ctx: click.Context) -> Settings:
    return ctx.find_root().obj["settings"]


def checked_question(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """QUESTION under the limits HTTP applies, refused with the message HTTP gives."""
    try:
        return question_text(value, settings_from(ctx))
    except QAError as exc:
        raise click.BadParameter(exc.message, ctx, param) from None


def checked_k(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """--k within 1..max_k, the server's own limit (the setting), refused with its message."""
    if value is None:
        return None
    try:
        return k_value(value, settings_from(ctx))
    except QAError as exc:
        raise click.BadParameter(exc.message, ctx, param) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=(
    "Exit codes: 0 done; 1 an error (one line on stderr); 2 a bad argument; 3 `ask` refused "
    "(the abstracts do not answer); 75 another process is writing the data dir, try again later."))
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
@click.pass_context
@friendly_errors
def ingest(ctx: click.Context, paths: tuple[str, ...], sync: bool) -> None:
    """Read, chunk, embed and index PATHS: files or folders of .txt, .jsonl, .json (OpenReview), .xml (arXiv), .csv;
    default: the seed abstracts shipped with the package."""
    settings = settings_from(ctx)
    papers = load_corpus(paths or [settings.seeds_path])  # everything is validated before any write
    index = Index(settings)
    if sys.stderr.isatty():
        with click.progressbar(length=len(papers), label="ingesting", file=sys.stderr) as bar:
            summary = index.ingest(papers, sync=sync, progress=bar.update, on_wait=say_waiting)
    else:  # logs and pipes get one line per written batch
        done = [0]

        def report(count: int) -> None:
            done[0] += count
            click.echo(f"ingested {done[0]}/{len(papers)} papers", err=True)

        summary = index.ingest(papers, sync=sync, progress=report, on_wait=say_waiting)
    repaired = f", {summary.repaired} with missing or extra chunks re-embedded" if summary.repaired else ""
    repaired += f", {summary.resumed} already written by an interrupted ingest" if summary.resumed else ""
    click.echo(
        f"{summary.papers} papers ({summary.added} added, {summary.updated} updated, {summary.unchanged} unchanged, "
        f"{summary.removed} removed{repaired}), {summary.chunks} chunks embedded, {summary.seconds:.1f} s"
    )


def say_waiting(message: str) -> None:
    click.echo(message, err=True)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--repair", is_flag=True, help="Re-embed the damaged papers, drop stray chunks, rebuild manifest and BM25.")
@click.pass_context
@friendly_errors
def check(ctx: click.Context, paths: tuple[str, ...], repair: bool) -> None:
    """Verify the store against the manifest (papers, chunks, hashes, BM25, test queries); exit 1 if damaged.

    With --repair, damaged papers are re-embedded from their stored records; papers missing from the
    store (or with a damaged record) are taken from PATHS when given."""
    settings = settings_from(ctx)
    corpus = load_corpus(paths) if paths else []  # validated before anything is written
    index = Index(settings)
    with index.writer(on_wait=say_waiting):  # no ingest changes the store while it is checked
        report = check_store(index)
        print_report(report)
        if report.ok or not repair:
            sys.exit(0 if report.ok else 1)
        repair_store(index, report, corpus, say=click.echo)
        after = check_store(index)
    if after.ok:
        click.echo("repaired: the store matches the manifest")
        return
    click.echo("still wrong after the repair:")
    for finding in after.findings:
        click.echo(f"  {finding}")
    sys.exit(1)


def print_report(report: CheckReport) -> None:
    click.echo(f"checked {report.papers} papers, {report.chunks} chunks")
    for finding in report.findings:
        click.echo(f"  {finding}")
    if report.ok:
        click.echo("ok: the store, the manifest, BM25 and test queries agree")
    else:
        click.echo(report.advice(), err=True)


K_HELP = "Papers to {}: 1 to the max_k setting, as over HTTP."


@main.command()
@click.argument("question", callback=checked_question)
@click.option("--k", default=None, type=int, callback=checked_k, help=K_HELP.format("return"))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@friendly_errors
def search(ctx: click.Context, question: str, k: int | None, as_json: bool) -> None:
    """The papers most relevant to QUESTION, with the evidence that matched."""
    settings = settings_from(ctx)
    services = Services(settings)
    with services.reading():  # not while an ingest writes (exit 75)
        services.index.require_ready()
        hits = Retriever(services.index, settings).search(question, k, texts=False)
    if as_json:
        click.echo(json.dumps({"results": [h.to_dict() for h in hits]}, ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("No paper in the corpus is relevant to that question.")
    for rank, hit in enumerate(hits, 1):
        click.echo(f"{rank}. {hit.label}  [{hit.paper_id}]  score {hit.score:.4f}")
        for evidence in hit.evidence[:1]:
            click.echo(f"   “{evidence.text[:300]}”")


@main.command()
@click.argument("question", callback=checked_question)
@click.option("--k", default=None, type=int, callback=checked_k, help=K_HELP.format("retrieve"))
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer object as JSON.")
@click.option("--server", default=None, help="Ask a running qa-service at this URL instead of the local index.")
@click.pass_context
@friendly_errors
def ask(ctx: click.Context, question: str, k: int | None, as_json: bool, server: str | None) -> None:
    """Answer QUESTION from the abstracts, with numbered citations; exit 3 when the abstracts do not answer it."""
    if server:
        answer = QAClient(server).ask(question, k)
    else:
        services = Services(settings_from(ctx))
        with services.reading():
            answer = services.ask(question, k)
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
    for n, citation in sorted(cited.items()):
        mark = "" if citation.supported else "  (not supported by this abstract)"
        click.echo(f"[{n}] {citation.label}  ({citation.paper_id}){mark}")
    for warning in answer.warnings:
        click.echo(f"warning: {warning}", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@friendly_errors
def papers(ctx: click.Context, as_json: bool) -> None:
    """List the indexed papers: id and label."""
    services = Services(settings_from(ctx))
    with services.reading():
        records = services.index.list_papers()
    if as_json:
        listing = [{k: v for k, v in p.to_dict().items() if k not in ("text", "abstract")} for p in records]
        click.echo(json.dumps({"papers": listing, "total": len(records)}, ensure_ascii=False, indent=2))
        return
    for record in records:
        click.echo(f"{record.id}\t{record.label}")
    click.echo(f"{len(records)} papers", err=True)


@main.command()
@click.option("--host", default=None, help="Address to bind (default from settings: 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (default from settings: 8000).")
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
        services = Services(settings_from(ctx))
        services.index.require_ready()
        services.index.load_lexical()
        answerer = services.answerer
        report["retrieval"] = evaluate_retrieval(answerer.retriever, items, 10)
        click.echo("Retrieval, papers ranked per question (recall first: nothing dropped):")
        click.echo(format_retrieval_table(report["retrieval"]) + "\n")
        ask = lambda q: answerer.ask(q, k)  # noqa: E731
        search = lambda q: [h.paper_id for h in answerer.retriever.search(q, 10, texts=False)]  # noqa: E731
    report["answers"] = evaluate_answers(ask, search, items)
    click.echo("Answers:")
    click.echo(format_answer_table(report["answers"]))
    if json_out:
        json_out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":  # python -m qa_service.cli
    main()
