import tomllib

import pytest

from qa_service.config import Settings, describe, load_settings, redact_url, redact_urls
from qa_service.errors import ConfigError
from tests.conftest import ROOT


def test_default_toml_lists_every_setting_with_the_code_defaults():
    data = tomllib.loads((ROOT / "config" / "default.toml").read_text(encoding="utf-8"))
    documented = {name: default for name, default, _ in describe() if name not in ("openai_api_key", "api_key")}
    assert data == documented
    assert all(description for _, _, description in describe())


def test_environment_overrides_file(tmp_path):
    settings = load_settings(ROOT / "config" / "default.toml", env={"QA_DATA_DIR": str(tmp_path), "QA_RETRIEVAL_K": "7", "OPENAI_API_KEY": "sk-test", "QA_MODEL": "m"})
    assert (settings.data_dir, settings.retrieval_k, settings.openai_api_key, settings.model) == (str(tmp_path), 7, "sk-test", "m")


def test_bad_values_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="QA_RETRIEVAL_K.*must be int"):
        load_settings(env={"QA_RETRIEVAL_K": "many"})
    bad = tmp_path / "bad.toml"
    bad.write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        load_settings(bad, env={})
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "missing.toml", env={})


def test_settings_without_a_file_are_the_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_settings(env={}) == Settings()


def test_readme_documents_every_setting():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, _, _ in describe():
        assert f"`{name}`" in readme and f"QA_{name.upper()}" in readme, name


def test_the_package_default_file_is_read_from_any_directory(tmp_path, monkeypatch):
    """Settings resolve from the installed package's file, then QA_CONFIG, then QA_*; not from the working directory."""
    from qa_service.config import default_config_path

    monkeypatch.chdir(tmp_path)
    assert default_config_path() is not None and default_config_path().is_file()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "default.toml").write_text("retrieval_k = 99\n")  # a stray file in the cwd is not ours
    overlay = tmp_path / "mine.toml"
    overlay.write_text("retrieval_k = 9\n")
    assert load_settings(env={}).retrieval_k == Settings().retrieval_k
    assert load_settings(env={"QA_CONFIG": str(overlay)}).retrieval_k == 9
    assert load_settings(env={"QA_CONFIG": str(overlay), "QA_RETRIEVAL_K": "4"}).retrieval_k == 4


@pytest.mark.parametrize(
    "url,shown",
    [
        ("http://user:hunter2@llm.local:8000/v1", "http://***@llm.local:8000/v1"),
        ("https://llm.local/v1?api-key=SECRET&api-version=2024", "https://llm.local/v1?api-key=***&api-version=***"),
        ("http://llm.local/v1?SECRET#token=SECRET", "http://llm.local/v1?***#***"),
        ("redis://:hunter2@cache:6379/0", "redis://***@cache:6379/0"),
        ("http://u:p/hunter2@llm.local/v1", "http://***@llm.local/v1"),  # an unencoded '/' in the password
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("", ""),
    ],
)
def test_redact_url_hides_userinfo_and_query_values(url, shown):
    assert redact_url(url) == shown


def test_redact_urls_finds_every_url_in_a_text():
    text = 'POST http://user:hunter2@127.0.0.1:9/v1/?api-key=SECRET42chat "200", then redis://:pw@cache:6379.'
    assert redact_urls(text) == 'POST http://***@127.0.0.1:9/v1/?api-key=*** "200", then redis://***@cache:6379.'


def test_the_citation_check_takes_each_of_its_tuning_numbers_from_the_settings():
    from qa_service.answering.tuning import Tuning

    base = Settings()
    for name in ("support_threshold", "figure_hedge_share", "support_elsewhere_credit", "contradict_share", "prior_work_weight",
                 "word_form_prefix", "quote_candidates", "quote_figure_weight", "quote_meaning_weight", "comparison_reach",
                 "substitution_frame", "detail_idf", "detail_words",
                 "comparative_zipf", "role_window", "role_common_zipf", "name_label_words"):
        assert Tuning.from_settings(base.replace(**{name: getattr(base, name) * 2})) != Tuning.from_settings(base), name
