"""The web face: the app factory, the JSON API, the OpenAI-compatible facade, the page, gunicorn."""
