"""/metrics stays bounded whatever clients send: every label value comes from a fixed set."""

import random
import string

from prometheus_client import generate_latest

from qa_service.web import create_app


def series(app) -> set[str]:
    """Every series of the scrape (a counter's _created, a histogram's buckets counted once), by name and labels."""
    text = generate_latest(app.extensions["qa_metrics"].registry).decode()
    samples = [line.rsplit(" ", 1)[0] for line in text.splitlines() if line and not line.startswith("#")]
    return {s for s in samples if not s.split("{")[0].endswith(("_created", "_bucket", "_sum"))}


def test_invented_methods_and_paths_add_only_a_handful_of_series(seed_settings, seed_index):
    app = create_app(seed_settings.replace(rate_limit=""), index=seed_index)
    client = app.test_client()
    for method, path in [("GET", "/healthz"), ("GET", "/api/papers/x"), ("GET", "/static/x"), ("GET", "/api/nothing"), ("PUT", "/api/search")]:
        client.open(path, method=method)
    before = series(app)
    rng = random.Random(16)
    word = lambda: "".join(rng.choices(string.ascii_letters + string.digits + "-_.~", k=rng.randint(1, 24)))  # noqa: E731
    for _ in range(500):
        method = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 12)))
        path = rng.choice(["/", "/api/", "/v1/", "/api/papers/", "/static/"]) + "/".join(word() for _ in range(rng.randint(1, 3)))
        client.open(path, method=rng.choice([method, method, "GET", "POST", "DELETE"]))
    added = series(app) - before
    assert len(added) <= 8, sorted(added)  # a few (method, status) pairs on the 'other' route
    methods = {label.split('method="', 1)[1].split('"', 1)[0] for label in series(app) if 'method="' in label}
    assert methods <= {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "other"}
    routes = {label.split('route="', 1)[1].split('"', 1)[0] for label in series(app) if 'route="' in label}
    assert all(route == "other" or route in {r.rule for r in app.url_map.iter_rules()} for route in routes)
